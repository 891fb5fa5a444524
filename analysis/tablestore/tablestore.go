// Package tablestore keeps a run's built tables on disk beside its scored
// answers (package scored), so that a later reader (a notebook cell in a
// fresh process) gets a table without reading the scored answers back. It
// is a cache: deleting the directory loses nothing, and a file whose key
// is not the reader's is never read as its.
//
// File grammar: DIR/DirName/<tables.FileName(name)>.parquet, one Parquet
// file per table:
//
//   - the table's rows, in order, and one optional column per table
//     column (Table.Columns), in the table's order, under its name: a
//     string (UTF-8), an int64, a double or a boolean as the column's type
//     is String, Int, Float or Bool. A nil cell is NULL; a float is stored
//     bit for bit (NaN, ±Inf and -0 included).
//   - key-value metadata: "bhasha.tables" the format version (Version);
//     "bhasha.key" a JSON object, what the table was made from;
//     "bhasha.table" a JSON object holding the table but its rows (name,
//     header, declared columns, description, notes, chart, ...) and, under
//     "ints", for each Float column that holds ints (a count beside a
//     missing cell, NaN), the rows whose cell is an int; and the digests
//     of package parquetseal.
//
// DIR/DirName/tables.json lists every table of the run in report order
// beside the key they were made from ({"key": {...}, "tables": [names]}),
// written once every one of them is kept or made row by row (WriteIndex):
// a reader that finds it under its key needs to build none of them.
//
// Write refuses (and writes nothing for) a table made row by row
// (tables.Source), one with a cell that is neither nil nor of its
// column's type (but an int of at most 2^53 in magnitude in a Float
// column), a row of another length than the header, two columns of one
// name, or metadata that JSON does not hold exactly (text that is not
// UTF-8). It replaces a file atomically (package atomicfile), and removes
// the table's file of an older Bhasha (<name>.gob), which is never read.
// Read checks both digests before it decodes anything: a damaged file is
// an error wrapping ErrFormat, never a table.
package tablestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/parquetseal"
)

// DirName is the directory inside a run directory.
const DirName = "scored-tables"

// Version is the file format's version and the table builders': bump it
// when a table built from the same scored answers changes.
const Version = "3"

// The key-value metadata a kept table's file holds besides the digests.
const (
	versionKey = "bhasha.tables"
	keyKey     = "bhasha.key"
	tableKey   = "bhasha.table"
)

// meta is what "bhasha.table" holds: the table without its rows (nor a
// Source: it is not kept), and the int cells of its Float columns.
type meta struct {
	*tables.Table
	Ints map[string][]int `json:"ints,omitempty"` // column name → rows
}

// Path is the file of table name in run directory dir.
func Path(dir, name string) string {
	return filepath.Join(dir, DirName, tables.FileName(name)+".parquet")
}

// maxExact is the largest magnitude of an int a double holds exactly.
const maxExact = 1 << 53

// leaf is the Parquet column of a table column of type typ.
func leaf(typ tables.Type) (parquet.Node, error) {
	var n parquet.Node
	switch typ {
	case tables.String:
		n = parquet.String()
	case tables.Int:
		n = parquet.Int(64)
	case tables.Float:
		n = parquet.Leaf(parquet.DoubleType)
	case tables.Bool:
		n = parquet.Leaf(parquet.BooleanType)
	default:
		return nil, fmt.Errorf("a column of type %q", typ)
	}
	return parquet.Compressed(parquet.Optional(n), &parquet.Snappy), nil
}

// ordered is a Parquet group whose fields are in the table's column order
// (a parquet.Group's are in the order of their names).
type ordered struct {
	parquet.Group
	at map[string]int // name → place
}

func (g ordered) Fields() []parquet.Field {
	out := make([]parquet.Field, len(g.at))
	for _, f := range g.Group.Fields() {
		out[g.at[f.Name()]] = f
	}
	return out
}

// cell is cell (i, j) of column col, as a Parquet value of column j: an
// int in a Float column is the double it is (isInt true).
func cell(v any, col tables.Column, j int) (pv parquet.Value, isInt bool, err error) {
	ok := false
	switch x := v.(type) {
	case nil:
		return parquet.NullValue().Level(0, 0, j), false, nil
	case string:
		ok = col.Type == tables.String
	case int:
		if col.Type == tables.Float && x >= -maxExact && x <= maxExact {
			v, isInt, ok = float64(x), true, true
		} else {
			ok = col.Type == tables.Int
		}
	case float64:
		ok = col.Type == tables.Float
	case bool:
		ok = col.Type == tables.Bool
	}
	if !ok {
		return pv, false, fmt.Errorf("a cell of type %T in column %s of type %s", v, col.Name, col.Type)
	}
	return parquet.ValueOf(v).Level(0, 1, j), isInt, nil
}

// Write keeps t, made from key, in run directory dir, replacing what was
// kept of it, and removes its file of an older Bhasha (.gob), if any. A
// table the package comment says is not kept is an error, and nothing is
// written. It hashes the file as it writes it and reads its footer back
// once (package parquetseal).
func Write(dir string, key scored.Key, t *tables.Table) error {
	if t.Source != nil {
		return fmt.Errorf("keeping table %s: it is made row by row", t.Name)
	}
	refuse := func(err error) error { return fmt.Errorf("keeping table %s: %w", t.Name, err) }
	cols := t.Columns()
	bare := *t
	bare.Rows = nil
	m := meta{Table: &bare}
	g := ordered{Group: parquet.Group{}, at: map[string]int{}}
	for j, c := range cols {
		if _, dup := g.at[c.Name]; dup {
			return refuse(fmt.Errorf("two columns named %q", c.Name))
		}
		n, err := leaf(c.Type)
		if err != nil {
			return refuse(fmt.Errorf("column %s: %w", c.Name, err))
		}
		g.Group[c.Name], g.at[c.Name] = n, j
	}
	if len(cols) == 0 {
		return refuse(errors.New("no columns"))
	}
	rows := make([]parquet.Row, len(t.Rows))
	for i, row := range t.Rows {
		if len(row) != len(cols) {
			return refuse(fmt.Errorf("row %d: %d cells for %d columns", i, len(row), len(cols)))
		}
		r := make(parquet.Row, len(row))
		for j, v := range row {
			pv, isInt, err := cell(v, cols[j], j)
			if err != nil {
				return refuse(fmt.Errorf("row %d: %w", i, err))
			}
			if isInt {
				if m.Ints == nil {
					m.Ints = map[string][]int{}
				}
				m.Ints[cols[j].Name] = append(m.Ints[cols[j].Name], i)
			}
			r[j] = pv
		}
		rows[i] = r
	}
	mj, err := json.Marshal(m)
	if err != nil {
		return refuse(err)
	}
	back := meta{Table: &tables.Table{}}
	if err := json.Unmarshal(mj, &back); err != nil || !reflect.DeepEqual(back, m) {
		return refuse(errors.New("its name, header, columns or notes do not read back from JSON as they are (text that is not UTF-8)"))
	}
	kj, err := json.Marshal(key)
	if err != nil {
		return refuse(err)
	}
	p := Path(dir, t.Name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return refuse(err)
	}
	f, err := atomicfile.Create(p)
	if err != nil {
		return refuse(err)
	}
	defer f.Abort()
	h := parquetseal.NewHasher(f)
	w := parquet.NewWriter(h, parquet.NewSchema("table", g),
		parquet.KeyValueMetadata(versionKey, Version),
		parquet.KeyValueMetadata(keyKey, string(kj)),
		parquet.KeyValueMetadata(tableKey, string(mj)))
	parquetseal.Reserve(w)
	if _, err := w.WriteRows(rows); err != nil {
		return refuse(fmt.Errorf("writing %s: %w", p, err))
	}
	if err := w.Close(); err != nil {
		return refuse(fmt.Errorf("writing %s: %w", p, err))
	}
	if err := parquetseal.Seal(f.File, h); err != nil {
		return refuse(fmt.Errorf("writing %s: its digests: %w", p, err))
	}
	if err := f.Commit(); err != nil {
		return refuse(err)
	}
	os.Remove(filepath.Join(dir, DirName, tables.FileName(t.Name)+".gob")) // never read: nothing is lost if it stays
	return nil
}

// ErrFormat wraps the error of a file that is not a kept table this
// version reads (truncated, damaged, not Parquet): the caller builds the
// table again.
var ErrFormat = errors.New("not a readable kept table")

// Read returns table name as kept in run directory dir when it was made
// from key: ok is false, with no error, when none is kept or the one kept
// was made from another key or by another Version; a file that cannot be
// read, or whose digests do not hold (it is damaged), is an error wrapping
// ErrFormat that names the file, and none of its content is returned. It
// reads the file once to check its digests, then decodes it.
func Read(dir, name string, key scored.Key) (t *tables.Table, ok bool, err error) {
	p := Path(dir, name)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading kept table %s: %w", p, err)
	}
	defer f.Close()
	bad := func(format string, args ...any) (*tables.Table, bool, error) {
		return nil, false, fmt.Errorf("%s: %w: %s", p, ErrFormat, fmt.Sprintf(format, args...))
	}
	pf, err := scored.OpenSealed(f, true)
	if err != nil {
		return bad("%v", err)
	}
	if v, _ := pf.Lookup(versionKey); v != Version {
		return nil, false, nil
	}
	var k scored.Key
	if s, _ := pf.Lookup(keyKey); json.Unmarshal([]byte(s), &k) != nil {
		return bad("metadata %s is not a JSON object of texts", keyKey)
	}
	if !maps.Equal(k, key) {
		return nil, false, nil
	}
	m := meta{Table: &tables.Table{}}
	if s, _ := pf.Lookup(tableKey); json.Unmarshal([]byte(s), &m) != nil || m.Source != nil {
		return bad("metadata %s is not a table's", tableKey)
	}
	if m.Name != name {
		return bad("it holds table %q", m.Name)
	}
	t = m.Table
	t.Rows = make([][]any, 0, pf.NumRows())
	for _, rg := range pf.RowGroups() {
		if t.Rows, err = readRows(rg, t.Rows, m.Header); err != nil {
			return bad("row %d: %v", len(t.Rows), err)
		}
	}
	if len(t.Rows) != int(pf.NumRows()) {
		return bad("%d rows for %d in its footer", len(t.Rows), pf.NumRows())
	}
	for col, rs := range m.Ints {
		j := slices.Index(m.Header, col)
		for _, i := range rs {
			x, isFloat := 0.0, false
			if j >= 0 && i >= 0 && i < len(t.Rows) {
				x, isFloat = t.Rows[i][j].(float64)
			}
			if !isFloat || x != math.Trunc(x) || math.Abs(x) > maxExact {
				return bad("metadata %s: row %d of column %q is not an int", tableKey, i, col)
			}
			t.Rows[i][j] = int(x)
		}
	}
	return t, true, nil
}

// readRows appends the rows of row group rg to rows, each of the cells of
// header's columns.
func readRows(rg parquet.RowGroup, rows [][]any, header []string) ([][]any, error) {
	rr := rg.Rows()
	defer rr.Close()
	buf := make([]parquet.Row, 256)
	for {
		n, err := rr.ReadRows(buf)
		for _, r := range buf[:n] {
			if len(r) != len(header) {
				return rows, fmt.Errorf("%d values for %d columns", len(r), len(header))
			}
			row := make([]any, len(r))
			for _, v := range r {
				j := v.Column()
				if j < 0 || j >= len(row) {
					return rows, fmt.Errorf("a value of column %d", j)
				}
				switch {
				case v.IsNull():
				case v.Kind() == parquet.ByteArray:
					row[j] = string(v.ByteArray())
				case v.Kind() == parquet.Int64:
					row[j] = int(v.Int64())
				case v.Kind() == parquet.Boolean:
					row[j] = v.Boolean()
				case v.Kind() == parquet.Double:
					row[j] = v.Double()
				default:
					return rows, fmt.Errorf("column %s: a value of kind %v", header[j], v.Kind())
				}
			}
			rows = append(rows, row)
		}
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
	}
}

// IndexName is the file, inside DirName, that lists the run's tables.
const IndexName = "tables.json"

// index is IndexName's content.
type index struct {
	Key    scored.Key `json:"key"`
	Tables []string   `json:"tables"`
}

// WriteIndex writes dir's list of every table, names in report order,
// made from key, replacing the file atomically.
func WriteIndex(dir string, key scored.Key, names []string) error {
	b, err := json.Marshal(index{Key: key, Tables: names})
	if err == nil {
		err = os.MkdirAll(filepath.Join(dir, DirName), 0o755)
	}
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(dir, DirName, IndexName), b)
	}
	if err != nil {
		return fmt.Errorf("keeping the list of tables of %s: %w", dir, err)
	}
	return nil
}

// ReadIndex is the list WriteIndex wrote from key: ok is false when there
// is none, or it was made from another key or does not parse (a cache:
// the tables are listed by building them).
func ReadIndex(dir string, key scored.Key) (names []string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, DirName, IndexName))
	var ix index
	if err != nil || json.Unmarshal(b, &ix) != nil || !maps.Equal(ix.Key, key) || ix.Tables == nil {
		return nil, false
	}
	return ix.Tables, true
}
