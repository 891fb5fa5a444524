// Package tablestore keeps a run's built tables on disk beside its scored
// answers (package scored), so that a later reader, a notebook cell in a
// fresh process, gets a table without reading the scored answers back and
// building it again. It is a cache: deleting the directory loses nothing
// (the tables are built again), and a file whose key is not the reader's
// (other records, scoring options, experiment or tool) is never read as
// its.
//
// File grammar: DIR/DirName/<tables.FileName(name)>.gob, one file per
// table, each
//
//	"bhasha kept table sha256:" 64 hex digits "\n"   the header: the
//	                          SHA-256 of every byte after it
//	one gob value of type file
//
// where the gob value holds Version; Key, what the table was made from
// (component → value: the scored answers' key and the experiment's
// hash); and the table: its name, header, declared columns, description,
// column docs, note, mirrors, headline mark, chart, and its rows, each
// cell one of nil, string, int, float64 or bool (a kind and a value). A
// table made row by row (tables.Source: the answers) is not kept; a cell
// of another type makes Write refuse the table. Write replaces a file
// atomically (package atomicfile): a reader sees the previous file or
// the new one. Read decodes a file only when its header's digest holds:
// one whose digest does not (a flipped byte anywhere, header or payload),
// or without a header, is an error wrapping ErrFormat, never a table.
package tablestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/atomicfile"
)

// DirName is the directory inside a run directory.
const DirName = "scored-tables"

// Version is the file format's version and the table builders': bump it
// when a table built from the same scored answers changes.
const Version = "2"

// header starts every kept table's file; the SHA-256 of the rest of the
// file follows it, in hex, then a newline.
const header = "bhasha kept table sha256:"

// headerLen is the length of a file's header, its newline included.
const headerLen = len(header) + 2*sha256.Size + 1

// file is one kept table.
type file struct {
	Version string
	Key     scored.Key // what the table was made from: component → value
	Table   wire
}

// wire is a tables.Table without its Source, its cells typed.
type wire struct {
	Name, Description, Note, Mirrors string
	Header                           []string
	Cols                             []tables.Column
	ColumnDocs                       map[string]string
	Headline                         bool
	Chart                            *tables.Chart
	Brief                            []string
	Rows                             [][]cell
}

// cell is one cell: its kind and value.
type cell struct {
	K kind
	S string
	I int64
	F float64
}

type kind uint8

const (
	kindNil kind = iota
	kindString
	kindInt
	kindFloat
	kindFalse
	kindTrue
)

// path is the file of table name in run directory dir.
func path(dir, name string) string {
	return filepath.Join(dir, DirName, tables.FileName(name)+".gob")
}

// Write keeps t, made from key, in run directory dir, replacing what was
// kept of it. A table made row by row, or with a cell that is not nil, a
// string, an int, a float64 or a bool, is an error (nothing written).
// The file's header holds the SHA-256 of its payload (one pass over it).
func Write(dir string, key scored.Key, t *tables.Table) error {
	if t.Source != nil {
		return fmt.Errorf("keeping table %s: it is made row by row", t.Name)
	}
	w := wire{Name: t.Name, Description: t.Description, Note: t.Note, Mirrors: t.Mirrors, Header: t.Header,
		Cols: t.Cols, ColumnDocs: t.ColumnDocs, Headline: t.Headline, Chart: t.Chart, Brief: t.Brief, Rows: make([][]cell, len(t.Rows))}
	for i, row := range t.Rows {
		cs := make([]cell, len(row))
		for j, v := range row {
			switch x := v.(type) {
			case nil:
			case string:
				cs[j] = cell{K: kindString, S: x}
			case int:
				cs[j] = cell{K: kindInt, I: int64(x)}
			case float64:
				cs[j] = cell{K: kindFloat, F: x}
			case bool:
				cs[j] = cell{K: kindFalse}
				if x {
					cs[j].K = kindTrue
				}
			default:
				return fmt.Errorf("keeping table %s: row %d, column %d: a cell of type %T", t.Name, i, j, v)
			}
		}
		w.Rows[i] = cs
	}
	var b bytes.Buffer
	b.Write(make([]byte, headerLen)) // the header, once the payload's digest is known
	if err := gob.NewEncoder(&b).Encode(file{Version: Version, Key: key, Table: w}); err != nil {
		return fmt.Errorf("keeping table %s: %w", t.Name, err)
	}
	out := b.Bytes()
	sum := sha256.Sum256(out[headerLen:])
	copy(out, header)
	hex.Encode(out[len(header):], sum[:])
	out[headerLen-1] = '\n'
	if err := os.MkdirAll(filepath.Join(dir, DirName), 0o755); err != nil {
		return fmt.Errorf("keeping table %s: %w", t.Name, err)
	}
	if err := atomicfile.WriteFile(path(dir, t.Name), out); err != nil {
		return fmt.Errorf("keeping table %s: %w", t.Name, err)
	}
	return nil
}

// payload is the payload of kept table file b, read from p, when its
// header's digest holds; else an error wrapping ErrFormat that names p
// and what does not hold.
func payload(p string, b []byte) ([]byte, error) {
	if len(b) < headerLen || string(b[:len(header)]) != header || b[headerLen-1] != '\n' {
		return nil, fmt.Errorf("%s: %w: no header %q (damaged, or kept by an older Bhasha)", p, ErrFormat, header+"…")
	}
	var want [sha256.Size]byte
	if _, err := hex.Decode(want[:], b[len(header):headerLen-1]); err != nil {
		return nil, fmt.Errorf("%s: %w: damaged: its header's digest: %v", p, ErrFormat, err)
	}
	if got := sha256.Sum256(b[headerLen:]); got != want {
		return nil, fmt.Errorf("%s: %w: damaged: its header says sha256:%x, its contents are sha256:%x", p, ErrFormat, want, got)
	}
	return b[headerLen:], nil
}

// ErrFormat wraps the error of a file that is not a kept table this
// version reads (truncated, corrupt, another version): the caller builds
// the table again.
var ErrFormat = errors.New("not a readable kept table")

// Read returns table name as kept in run directory dir when it was made
// from key: ok is false, with no error, when none is kept or the one kept
// was made from another key; a file that cannot be read, or whose
// header's digest does not hold (it is damaged), is an error wrapping
// ErrFormat, and none of its content is returned. It reads the file once
// and makes one SHA-256 pass over it before decoding it.
func Read(dir, name string, key scored.Key) (t *tables.Table, ok bool, err error) {
	p := path(dir, name)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading kept table %s: %w", p, err)
	}
	if b, err = payload(p, b); err != nil {
		return nil, false, err
	}
	var f file
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&f); err != nil {
		return nil, false, fmt.Errorf("%s: %w: %v", p, ErrFormat, err)
	}
	if f.Version != Version || !maps.Equal(f.Key, key) {
		return nil, false, nil
	}
	w := f.Table
	if w.Name != name {
		return nil, false, fmt.Errorf("%s: %w: it holds table %q", p, ErrFormat, w.Name)
	}
	t = &tables.Table{Name: w.Name, Description: w.Description, Note: w.Note, Mirrors: w.Mirrors, Header: w.Header,
		Cols: w.Cols, ColumnDocs: w.ColumnDocs, Headline: w.Headline, Chart: w.Chart, Brief: w.Brief, Rows: make([][]any, len(w.Rows))}
	for i, cs := range w.Rows {
		row := make([]any, len(cs))
		for j, c := range cs {
			switch c.K {
			case kindNil:
			case kindString:
				row[j] = c.S
			case kindInt:
				row[j] = int(c.I)
			case kindFloat:
				row[j] = c.F
			case kindFalse, kindTrue:
				row[j] = c.K == kindTrue
			default:
				return nil, false, fmt.Errorf("%s: %w: row %d, column %d: cell kind %d", p, ErrFormat, i, j, c.K)
			}
		}
		t.Rows[i] = row
	}
	return t, true, nil
}
