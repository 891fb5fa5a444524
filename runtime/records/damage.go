package records

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bhashalab/bhasha/internal/atomicfile"
)

// Damaged segments.
//
// A Parquet segment some of whose row groups do not decode (a flipped
// byte, a bad sector) is read, not refused: every row group that decodes
// gives its lines (checked by their own seals when its chunks do not
// hold by the digest); one that does not is lost, its rows counted from
// the footer and named by line and, when its key column holds, by key; a
// segment whose footer cannot be read gives no record, and an unknown
// number are lost. Commit keeps the damaged file in DIR/archive/ and
// replaces the segment by the records that could be read; the lost ones
// are asked again.

// Damage is what could not be read of a damaged segment.
type Damage struct {
	File      string // the segment's name (records-000001.parquet)
	Kept      int    // records read from the segment
	Lost      int    // records lost from the segment, when LostKnown
	LostKnown bool
	Gaps      []string // the parts of the file that could not be read, and why
	LostAt    []string // when LostKnown, the first few lost records: "line N (key K)"
	path      string
}

// String says which file is damaged and what was lost.
func (d Damage) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is damaged (part of it does not decode)", d.File)
	fmt.Fprintf(&b, ": %d record(s) were read from it", d.Kept)
	switch {
	case d.LostKnown && d.Lost == 0:
	case d.LostKnown:
		fmt.Fprintf(&b, ", %d record(s) are lost: %s", d.Lost, strings.Join(d.LostAt, ", "))
		if d.Lost > len(d.LostAt) {
			fmt.Fprintf(&b, " and %d more", d.Lost-len(d.LostAt))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(d.Gaps, "; "))
	default:
		fmt.Fprintf(&b, ", an unknown number of records are lost (%s)", strings.Join(d.Gaps, "; "))
	}
	if !(d.LostKnown && d.Lost == 0) {
		b.WriteString("; the lost records are left out of every table")
	}
	b.WriteString("; running the experiment into the directory again keeps the records that can be read, asks again only the lost ones, and keeps the damaged file in " + ArchiveDir + "/")
	return b.String()
}

// maxLostNamed is how many lost records a Damage names.
const maxLostNamed = 5

// keepDamaged keeps the damaged segment f in dir's archive (a hard link,
// else a copy) before f is replaced, and returns the path it is kept at.
func keepDamaged(f recordFile) (string, error) {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(filepath.Join(dir, ArchiveDir), 0o755); err != nil {
		return "", fmt.Errorf("keeping the damaged %s: %w", f.path, err)
	}
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	dst := filepath.Join(dir, ArchiveDir, "damaged-"+stamp+"-"+filepath.Base(f.path))
	if err := os.Link(f.path, dst); err != nil {
		b, rerr := os.ReadFile(f.path)
		if rerr != nil {
			return "", fmt.Errorf("keeping the damaged %s: %w", f.path, rerr)
		}
		if err := atomicfile.WriteFile(dst, b); err != nil {
			return "", fmt.Errorf("keeping the damaged %s: %w", f.path, err)
		}
	}
	if err := syncDir(filepath.Join(dir, ArchiveDir)); err != nil {
		return "", fmt.Errorf("keeping the damaged %s: %w", f.path, err)
	}
	return dst, nil
}
