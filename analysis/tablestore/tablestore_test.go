package tablestore

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/parquetseal"
)

// table has a cell of every kind (NaN and infinities among the floats),
// a chart, column docs and a note.
func table() *tables.Table {
	t := tables.New("acc_wide", "a table", tables.Key("model"), tables.Count("n", "answers"), tables.Proportion("rate", "a rate"), tables.Flag("ok", "a flag"))
	t.Add("m1", 3, 0.5, true)
	t.Add("m|2", 0, math.NaN(), false)
	t.Rows = append(t.Rows, []any{"", -7, math.Inf(-1), nil})
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
			p := Path(dir, "acc_wide")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, false, true},
		{"none kept", key, func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, DirName)) }, false, false},
		{"another version", key, func(t *testing.T, dir string) {
			p := Path(dir, "acc_wide")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			// The same bytes but the version's, sealed anew: a file of
			// another version whose digests hold.
			rewriteMeta(t, p, b, versionKey, "2")
		}, false, false},
		{"a .gob of an older Bhasha", key, func(t *testing.T, dir string) {
			os.Remove(Path(dir, "acc_wide"))
			if err := os.WriteFile(filepath.Join(dir, DirName, "acc_wide.gob"), []byte("bhasha kept table sha256:"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false, false},
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

// A table the package comment says is not kept is refused, saying why,
// and nothing is written.
func TestKeepRefuses(t *testing.T) {
	cases := []struct {
		name string
		edit func(tb *tables.Table)
		why  string
	}{
		{"made row by row", func(tb *tables.Table) { tb.Source = &tables.Source{N: 1, Fill: func(int, []any) {}} }, "row by row"},
		{"an int64 cell", func(tb *tables.Table) { tb.Rows[0][1] = int64(3) }, "type int64"},
		{"a float in an int column", func(tb *tables.Table) { tb.Rows[0][1] = 3.0 }, "type float64 in column n"},
		{"an int in a text column", func(tb *tables.Table) { tb.Rows[0][0] = 3 }, "type int in column model"},
		{"an int too large for a double", func(tb *tables.Table) { tb.Rows[0][2] = 1<<53 + 1 }, "type int in column rate"},
		{"a text in a flag column", func(tb *tables.Table) { tb.Rows[0][3] = "yes" }, "type string in column ok"},
		{"a row too short", func(tb *tables.Table) { tb.Rows[1] = tb.Rows[1][:2] }, "row 1: 2 cells"},
		{"two columns of one name", func(tb *tables.Table) { tb.Header[1], tb.Cols[1].Name = "model", "model" }, `two columns named "model"`},
		{"a note that is not UTF-8", func(tb *tables.Table) { tb.Note = "\xff" }, "not UTF-8"},
		{"a column of no type", func(tb *tables.Table) { tb.Cols[3].Type = "" }, `type ""`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tb := table()
			c.edit(tb)
			err := Write(dir, scored.Key{"k": "v"}, tb)
			if err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "acc_wide") {
				t.Errorf("err %v, want one naming the table and saying %q", err, c.why)
			}
			if _, err := os.Stat(filepath.Join(dir, DirName)); !os.IsNotExist(err) {
				t.Errorf("a refused table left a file: %v", err)
			}
		})
	}
}

// A kept table with any one byte flipped (its magic, its cells, its
// footer, its metadata, its digests) is not read: Read returns no table
// and an ErrFormat error naming the file.
func TestKeptTableFlippedByte(t *testing.T) {
	dir := t.TempDir()
	key := scored.Key{"records": "sha256:a", "experiment": "e1"}
	if err := Write(dir, key, table()); err != nil {
		t.Fatal(err)
	}
	p := Path(dir, "acc_wide")
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	type flip struct {
		name string
		at   int
		mask byte
	}
	meta := bytes.Index(orig, []byte(tableKey))
	sum := bytes.Index(orig, []byte(parquetseal.FileKey))
	cases := []flip{
		{"leading magic", 0, 0x20},
		{"first page", 4, 0x01},
		{"table metadata", meta + len(tableKey) + 8, 0x01},
		{"file digest's value", sum + len(parquetseal.FileKey) + 3, 0x01},
		{"footer's length", len(orig) - 8, 0x01},
		{"trailing magic", len(orig) - 1, 0x80},
	}
	const every = 7 // every 7th byte, each with two masks
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

// rewriteMeta writes kept table b to p with the value of its metadata
// key replaced by val (of the same length), sealed anew: a file whose
// digests hold.
func rewriteMeta(t *testing.T, p string, b []byte, key, val string) {
	t.Helper()
	b = bytes.Clone(b)
	i := bytes.LastIndex(b, append([]byte(key), 0x18, byte(len(val))))
	if i < 0 {
		t.Fatalf("no metadata %s of %d bytes", key, len(val))
	}
	copy(b[i+len(key)+2:], val)
	reseal(t, p, b)
}

// reseal writes kept table b to p, sealed anew: a file whose digests
// hold.
func reseal(t *testing.T, p string, b []byte) {
	t.Helper()
	b = bytes.Clone(b)
	for _, k := range []string{parquetseal.FooterKey, parquetseal.FileKey} {
		copy(b[bytes.LastIndex(b, []byte(k))+len(k)+2:], "0000000000000000")
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := parquetseal.NewHasher(f)
	if _, err := h.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := parquetseal.Seal(f, h); err != nil {
		t.Fatal(err)
	}
}

// Every cell comes back as it was kept, of its type: each column type
// with its edge values, NULL (nil) beside empty text and NaN, every float
// bit for bit, ints in a Float column as ints, and a table without
// declared columns as it was.
func TestKeptTableRoundTrip(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := []struct {
		name  string
		table func() *tables.Table
	}{
		{"text", func() *tables.Table {
			tb := tables.New("t", "", tables.Text("s", ""))
			for _, v := range []any{"", nil, "a", "हिन्दी", "x\x00y", "=1+1", "\u00a0"} {
				tb.Rows = append(tb.Rows, []any{v})
			}
			return tb
		}},
		{"int", func() *tables.Table {
			tb := tables.New("t", "", tables.Count("n", ""))
			for _, v := range []any{0, nil, 1, -1, math.MaxInt64, math.MinInt64} {
				tb.Rows = append(tb.Rows, []any{v})
			}
			return tb
		}},
		{"float", func() *tables.Table {
			tb := tables.New("t", "", tables.Proportion("x", ""))
			for _, v := range []any{0.0, negZero, nil, math.NaN(), math.Inf(1), math.Inf(-1), 0.1 + 0.2, 1.0 / 3,
				math.MaxFloat64, math.SmallestNonzeroFloat64, -math.MaxFloat64, 1e-300, 2.0 / 3} {
				tb.Rows = append(tb.Rows, []any{v})
			}
			return tb
		}},
		{"bool", func() *tables.Table {
			tb := tables.New("t", "", tables.Flag("b", ""))
			for _, v := range []any{true, false, nil} {
				tb.Rows = append(tb.Rows, []any{v})
			}
			return tb
		}},
		{"ints in a float column", func() *tables.Table {
			tb := tables.New("t", "", tables.Key("model"), tables.Number("hin", ""), tables.Number("tam", ""))
			tb.Rows = append(tb.Rows, []any{"m1", 3, math.NaN()}, []any{"m2", math.NaN(), 1 << 53},
				[]any{"m3", 2.5, -(1 << 53)}, []any{"m4", 0, 0.0})
			return tb
		}},
		{"no declared columns", func() *tables.Table {
			return &tables.Table{Name: "t", Header: []string{"model", "n", "x", "ok"},
				ColumnDocs: map[string]string{"x": "a number"},
				Rows:       [][]any{{"m", 1, 2, true}, {"", 2, math.NaN(), false}, {nil, 3, 0.5, true}}}
		}},
		{"no rows", func() *tables.Table {
			tb := tables.New("t", "", tables.Key("model"), tables.Key("rate"))
			tb.Note = "one language: no pairs"
			return tb
		}},
		{"every kind at once", table},
	}
	key := scored.Key{"records": "r"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			want := c.table()
			if err := Write(dir, key, want); err != nil {
				t.Fatal(err)
			}
			got, ok, err := Read(dir, want.Name, key)
			if !ok || err != nil {
				t.Fatalf("ok %v, %v", ok, err)
			}
			if !same(got, want) {
				t.Fatalf("read back:\n%#v\nwant\n%#v", got.Rows, want.Rows)
			}
			for i := range want.Rows {
				for j, w := range want.Rows[i] {
					g := got.Rows[i][j]
					if reflect.TypeOf(g) != reflect.TypeOf(w) {
						t.Errorf("row %d, column %d: %T, want %T", i, j, g, w)
					}
					if wf, ok := w.(float64); ok && math.Float64bits(g.(float64)) != math.Float64bits(wf) {
						t.Errorf("row %d, column %d: bits %#x, want %#x", i, j, math.Float64bits(g.(float64)), math.Float64bits(wf))
					}
				}
			}
		})
	}
}

// A kept table is a Parquet file any reader reads: one column per table
// column, in order, under its name, of its type, NULL for a nil cell, the
// key in its metadata.
func TestKeptTableIsParquet(t *testing.T) {
	dir := t.TempDir()
	key := scored.Key{"records": "sha256:a"}
	if err := Write(dir, key, table()); err != nil {
		t.Fatal(err)
	}
	p := Path(dir, "acc_wide")
	if filepath.Base(p) != "acc_wide.parquet" {
		t.Fatalf("kept as %s", p)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	wantCols := []struct {
		name string
		kind parquet.Kind
	}{{"model", parquet.ByteArray}, {"n", parquet.Int64}, {"rate", parquet.Double}, {"ok", parquet.Boolean}}
	fields := pf.Schema().Fields()
	if len(fields) != len(wantCols) {
		t.Fatalf("%d columns, want %d", len(fields), len(wantCols))
	}
	for i, w := range wantCols {
		if fields[i].Name() != w.name || fields[i].Type().Kind() != w.kind || !fields[i].Optional() {
			t.Errorf("column %d: %s %v optional %v, want %s %v optional", i, fields[i].Name(), fields[i].Type().Kind(), fields[i].Optional(), w.name, w.kind)
		}
	}
	if k, _ := pf.Lookup(keyKey); k != `{"records":"sha256:a"}` {
		t.Errorf("key %q", k)
	}
	rows := make([]parquet.Row, 8)
	n, _ := pf.RowGroups()[0].Rows().ReadRows(rows)
	if n != 4 || !rows[2][3].IsNull() || !rows[3][0].IsNull() || rows[2][0].IsNull() {
		t.Errorf("%d rows; row 3's flag and row 4's model should be NULL, row 3's model \"\": %v", n, rows[:n])
	}
}

// Writing a table removes its file of an older Bhasha (.gob), and only
// its; a table refused leaves it.
func TestKeepRemovesGob(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, DirName), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"acc_wide.gob", "other.gob"} {
		if err := os.WriteFile(filepath.Join(dir, DirName, n), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	odd := table()
	odd.Rows[0][1] = "x"
	if err := Write(dir, scored.Key{"k": "v"}, odd); err == nil {
		t.Fatal("kept a table with a text in its int column")
	}
	if _, err := os.Stat(filepath.Join(dir, DirName, "acc_wide.gob")); err != nil {
		t.Fatalf("a refused table removed the .gob: %v", err)
	}
	if err := Write(dir, scored.Key{"k": "v"}, table()); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, DirName, "*"))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	if want := []string{"acc_wide.parquet", "other.gob"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
}

// A kept table whose metadata lists as an int a cell that is not an
// integral double of its rows (a row past its end, a fraction, a column it
// lacks, a row twice) is an ErrFormat error, and no table, even when its
// digests hold.
func TestKeptTableBadInts(t *testing.T) {
	dir := t.TempDir()
	key := scored.Key{"records": "r"}
	tb := tables.New("t", "", tables.Key("model"), tables.Number("hin", ""), tables.Number("tam", ""))
	tb.Rows = append(tb.Rows, []any{"m1", 3, math.NaN()}, []any{"m2", math.NaN(), 1 << 53},
		[]any{"m3", 2.5, -(1 << 53)}, []any{"m4", 0, 0.0})
	if err := Write(dir, key, tb); err != nil {
		t.Fatal(err)
	}
	p := Path(dir, "t")
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const ints = `"ints":{"hin":[0,3],"tam":[1,2]}`
	if !bytes.Contains(orig, []byte(ints)) {
		t.Fatalf("no %s in the file", ints)
	}
	for _, c := range []struct{ name, ints string }{
		{"row past the end", `"ints":{"hin":[0,9],"tam":[1,2]}`},
		{"a fraction", `"ints":{"hin":[0,2],"tam":[1,2]}`},
		{"no such column", `"ints":{"hix":[0,3],"tam":[1,2]}`},
		{"a row twice", `"ints":{"hin":[0,0],"tam":[1,2]}`},
		{"a NaN", `"ints":{"hin":[0,1],"tam":[1,2]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			reseal(t, p, bytes.Replace(orig, []byte(ints), []byte(c.ints), 1))
			got, ok, err := Read(dir, "t", key)
			if ok || got != nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "not an int") {
				t.Errorf("ok %v, table %v, err %v; want an ErrFormat error saying a cell is not an int", ok, got != nil, err)
			}
		})
	}
}
