package tablestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// accuracyTable is a table shaped as a large grid's accuracy table: 12
// models × 10 languages × 2 forms × 9 strategies × 3 conditions × 3
// metrics, 19,440 rows of 13 columns (texts, counts, rates and their
// intervals).
func accuracyTable() *tables.Table {
	t := tables.New("accuracy", "every rate", tables.Keys("study", "model", "language", "form", "strategy", "condition",
		"metric", "k", "n", "rate", "ci_lo", "ci_hi", "failed")...)
	rng := rand.New(rand.NewPCG(1, 2))
	for m := range 12 {
		for l := range 10 {
			for f := range 2 {
				for s := range 9 {
					for c := range 3 {
						for _, metric := range []string{"correct", "abstain", "hallucination"} {
							n := 200 + rng.IntN(800)
							k := rng.IntN(n + 1)
							lo, hi := stats.Wilson(k, n, 0.95)
							t.Add("indicklar", fmt.Sprintf("model-%02d", m), fmt.Sprintf("l%02d", l), []string{"mcq", "open"}[f],
								fmt.Sprintf("strategy-%d", s), fmt.Sprintf("cond-%d", c), metric, k, n, float64(k)/float64(n), lo, hi, rng.IntN(3))
						}
					}
				}
			}
		}
	}
	return t
}

// The kept table read in a fresh process (a notebook's later cell) and
// written after it is built, side by side: Parquet (this package) and
// the gob file with a SHA-256 header it replaced (gobWrite, gobRead).
// file-bytes is the kept file's size.
func BenchmarkKeptTable(b *testing.B) {
	t := accuracyTable()
	key := scored.Key{"records": "sha256:a", "experiment": "e"}
	formats := []struct {
		name  string
		write func(string) error
		read  func(string) error
		path  func(string) string
	}{
		{"gob", func(dir string) error { return gobWrite(dir, key, t) }, func(dir string) error {
			_, ok, err := gobRead(dir, "accuracy", key)
			if !ok && err == nil {
				err = errors.New("not read")
			}
			return err
		}, func(dir string) string { return filepath.Join(dir, DirName, "accuracy.gob") }},
		{"parquet", func(dir string) error { return Write(dir, key, t) }, func(dir string) error {
			_, ok, err := Read(dir, "accuracy", key)
			if !ok && err == nil {
				err = errors.New("not read")
			}
			return err
		}, func(dir string) string { return Path(dir, "accuracy") }},
	}
	for _, f := range formats {
		b.Run("read/"+f.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := f.write(dir); err != nil {
				b.Fatal(err)
			}
			st, err := os.Stat(f.path(dir))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := f.read(dir); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Size()), "file-bytes")
		})
		b.Run("write/"+f.name, func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				if err := f.write(dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The gob format the Parquet files replaced, kept here as the
// benchmark's baseline: "bhasha kept table sha256:" 64 hex digits "\n",
// the SHA-256 of the rest, then one gob value of gobFile.
const gobHeader = "bhasha kept table sha256:"

type gobFile struct {
	Version string
	Key     scored.Key
	Table   gobWire
}

type gobWire struct {
	Name, Description, Note, Mirrors string
	Header                           []string
	Cols                             []tables.Column
	ColumnDocs                       map[string]string
	Headline                         bool
	Chart                            *tables.Chart
	Brief                            []string
	Rows                             [][]gobCell
}

type gobCell struct {
	K uint8 // 0 nil, 1 string, 2 int, 3 float, 4 false, 5 true
	S string
	I int64
	F float64
}

func gobWrite(dir string, key scored.Key, t *tables.Table) error {
	w := gobWire{Name: t.Name, Description: t.Description, Note: t.Note, Mirrors: t.Mirrors, Header: t.Header,
		Cols: t.Cols, ColumnDocs: t.ColumnDocs, Headline: t.Headline, Chart: t.Chart, Brief: t.Brief, Rows: make([][]gobCell, len(t.Rows))}
	for i, row := range t.Rows {
		cs := make([]gobCell, len(row))
		for j, v := range row {
			switch x := v.(type) {
			case string:
				cs[j] = gobCell{K: 1, S: x}
			case int:
				cs[j] = gobCell{K: 2, I: int64(x)}
			case float64:
				cs[j] = gobCell{K: 3, F: x}
			case bool:
				cs[j] = gobCell{K: 4}
				if x {
					cs[j].K = 5
				}
			}
		}
		w.Rows[i] = cs
	}
	hl := len(gobHeader) + 2*sha256.Size + 1
	var b bytes.Buffer
	b.Write(make([]byte, hl))
	if err := gob.NewEncoder(&b).Encode(gobFile{Version: Version, Key: key, Table: w}); err != nil {
		return err
	}
	out := b.Bytes()
	sum := sha256.Sum256(out[hl:])
	copy(out, gobHeader)
	hex.Encode(out[len(gobHeader):], sum[:])
	out[hl-1] = '\n'
	if err := os.MkdirAll(filepath.Join(dir, DirName), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, DirName, t.Name+".gob"), out, 0o644)
}

func gobRead(dir, name string, key scored.Key) (*tables.Table, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, DirName, name+".gob"))
	if err != nil {
		return nil, false, err
	}
	hl := len(gobHeader) + 2*sha256.Size + 1
	var want [sha256.Size]byte
	if _, err := hex.Decode(want[:], b[len(gobHeader):hl-1]); err != nil || sha256.Sum256(b[hl:]) != want {
		return nil, false, errors.New("damaged")
	}
	var f gobFile
	if err := gob.NewDecoder(bytes.NewReader(b[hl:])).Decode(&f); err != nil {
		return nil, false, err
	}
	w := f.Table
	t := &tables.Table{Name: w.Name, Description: w.Description, Note: w.Note, Mirrors: w.Mirrors, Header: w.Header,
		Cols: w.Cols, ColumnDocs: w.ColumnDocs, Headline: w.Headline, Chart: w.Chart, Brief: w.Brief, Rows: make([][]any, len(w.Rows))}
	for i, cs := range w.Rows {
		row := make([]any, len(cs))
		for j, c := range cs {
			switch c.K {
			case 1:
				row[j] = c.S
			case 2:
				row[j] = int(c.I)
			case 3:
				row[j] = c.F
			case 4, 5:
				row[j] = c.K == 5
			}
		}
		t.Rows[i] = row
	}
	return t, true, nil
}
