package tablestore

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// table has a cell of every kind (NaN and infinities among the floats),
// a chart, column docs and a note.
func table() *tables.Table {
	t := tables.New("acc_wide", "a table", tables.Key("model"), tables.Count("n", "answers"), tables.Proportion("rate", "a rate"), tables.Flag("ok", "a flag"))
	t.Add("m1", 3, 0.5, true)
	t.Add("m|2", 0, math.NaN(), false)
	t.Add("", -7, math.Inf(-1), nil)
	t.Rows = append(t.Rows, []any{nil, 1, math.Inf(1), true})
	t.Note, t.Mirrors, t.Headline = "why", "Table 2", true
	t.Brief = []string{"model", "rate"}
	t.Chart = &tables.Chart{Keys: 1, Title: "rate per model"}
	t.ColumnDocs = map[string]string{"n": "answers"}
	return t
}

// same reports whether a and b hold the same table (NaN equal to NaN).
func same(a, b *tables.Table) bool {
	if len(a.Rows) != len(b.Rows) {
		return false
	}
	for i := range a.Rows {
		for j := range a.Rows[i] {
			x, xf := a.Rows[i][j].(float64)
			y, yf := b.Rows[i][j].(float64)
			if xf && yf && math.IsNaN(x) && math.IsNaN(y) {
				continue
			}
			if !reflect.DeepEqual(a.Rows[i][j], b.Rows[i][j]) {
				return false
			}
		}
	}
	a2, b2 := *a, *b
	a2.Rows, b2.Rows = nil, nil
	return reflect.DeepEqual(a2, b2)
}

func TestKeptTable(t *testing.T) {
	key := scored.Key{"records": "sha256:a", "experiment": "e1"}
	cases := []struct {
		name   string
		key    scored.Key
		edit   func(t *testing.T, dir string) // after Write
		ok     bool
		format bool // an ErrFormat error
	}{
		{"the same key", key, nil, true, false},
		{"other records", scored.Key{"records": "sha256:b", "experiment": "e1"}, nil, false, false},
		{"a component more", scored.Key{"records": "sha256:a", "experiment": "e1", "tool": "v2"}, nil, false, false},
		{"cut short", key, func(t *testing.T, dir string) {
			p := path(dir, "acc_wide")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, false, true},
		{"none kept", key, func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, DirName)) }, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			want := table()
			if err := Write(dir, key, want); err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(t, dir)
			}
			got, ok, err := Read(dir, "acc_wide", c.key)
			if ok != c.ok || errors.Is(err, ErrFormat) != c.format || (err != nil) != c.format {
				t.Fatalf("ok %v, err %v; want ok %v, an ErrFormat %v", ok, err, c.ok, c.format)
			}
			if ok && !same(got, want) {
				t.Errorf("read back:\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// A table made row by row, or with a cell of another type, is refused
// and nothing is written.
func TestKeepRefuses(t *testing.T) {
	dir := t.TempDir()
	src := table()
	src.Source = &tables.Source{N: 1, Fill: func(int, []any) {}}
	odd := table()
	odd.Rows[0][1] = int64(3)
	for _, tb := range []*tables.Table{src, odd} {
		if err := Write(dir, scored.Key{"k": "v"}, tb); err == nil {
			t.Errorf("%v: kept", tb.Rows[0])
		}
	}
	if _, err := os.Stat(filepath.Join(dir, DirName, "acc_wide.gob")); !os.IsNotExist(err) {
		t.Errorf("a refused table left a file: %v", err)
	}
}

// A kept table with any one byte flipped (its header, its key, its cells)
// is not read: Read returns no table and an ErrFormat error saying why.
func TestKeptTableFlippedByte(t *testing.T) {
	dir := t.TempDir()
	key := scored.Key{"records": "sha256:a", "experiment": "e1"}
	if err := Write(dir, key, table()); err != nil {
		t.Fatal(err)
	}
	p := path(dir, "acc_wide")
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	type flip struct {
		name string
		at   int
		mask byte
	}
	cases := []flip{
		{"magic", 0, 0x20},
		{"digest", len(header) + 3, 0x01},
		{"header's newline", headerLen - 1, 0x01},
		{"payload's first byte", headerLen, 0x01},
		{"last byte", len(orig) - 1, 0x80},
	}
	const every = 7 // every 7th byte, header and payload, each with two masks
	for at := 0; at < len(orig); at += every {
		cases = append(cases, flip{"byte", at, 0x01}, flip{"byte", at, 0x40})
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %d^%#x", c.name, c.at, c.mask), func(t *testing.T) {
			b := bytes.Clone(orig)
			b[c.at] ^= c.mask
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok, err := Read(dir, "acc_wide", key)
			if ok || got != nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), p) {
				t.Fatalf("read a table with byte %d flipped: ok %v, table %v, err %v", c.at, ok, got != nil, err)
			}
		})
	}
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Read(dir, "acc_wide", key); !ok || err != nil {
		t.Fatalf("the file as written: ok %v, %v", ok, err)
	}
}
