package records

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bhashalab/bhasha/internal/atomicfile"
)

// Damage is what could not be read of a damaged segment: one some of whose
// row groups do not decode. The rest is read; Commit archives the file and
// keeps the records read, and the lost ones are asked again.
type Damage struct {
	File      string // the segment's name (records-000001.parquet)
	Kept      int    // records read from the segment
	Lost      int    // records lost from the segment, when LostKnown
	LostKnown bool
	Gaps      []string // the parts of the file that could not be read, and why
	LostAt    []string // when LostKnown, the first few lost records: "line N (key K)"
}

// String says which file is damaged and what was lost.
func (d Damage) String() string {
	var b strings.Builder
	const leftOut = "; the lost records are left out of every table"
	fmt.Fprintf(&b, "%s is damaged (part of it does not decode): %d record(s) were read from it", d.File, d.Kept)
	switch {
	case !d.LostKnown:
		fmt.Fprintf(&b, ", an unknown number of records are lost (%s)%s", strings.Join(d.Gaps, "; "), leftOut)
	case d.Lost > 0:
		fmt.Fprintf(&b, ", %d record(s) are lost: %s", d.Lost, strings.Join(d.LostAt, ", "))
		if d.Lost > len(d.LostAt) {
			fmt.Fprintf(&b, " and %d more", d.Lost-len(d.LostAt))
		}
		fmt.Fprintf(&b, " (%s)%s", strings.Join(d.Gaps, "; "), leftOut)
	}
	b.WriteString("; running the experiment into the directory again keeps the records that can be read, asks again only the lost ones, and keeps the damaged file in " + ArchiveDir + "/")
	return b.String()
}

// maxLostNamed is how many lost records a Damage names.
const maxLostNamed = 5

// keepDamaged keeps the damaged segment f in dir's archive (a hard link,
// else a copy) before f is replaced, and returns the path it is kept at.
func keepDamaged(f recordFile) (string, error) {
	archive := filepath.Join(filepath.Dir(f.path), ArchiveDir)
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	dst := filepath.Join(archive, "damaged-"+stamp+"-"+filepath.Base(f.path))
	err := os.MkdirAll(archive, 0o755)
	if err == nil && os.Link(f.path, dst) != nil {
		var b []byte
		if b, err = os.ReadFile(f.path); err == nil {
			err = atomicfile.WriteFile(dst, b)
		}
	}
	if err == nil {
		err = syncDir(archive)
	}
	if err != nil {
		return "", fmt.Errorf("keeping the damaged %s: %w", f.path, err)
	}
	return dst, nil
}
