// Package csvread reads delimited text files the way real dataset exports
// come: with or without a UTF-8 BOM, CRLF or LF line ends, header names
// with stray spaces and any letter case. Columns are found by name.
package csvread

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/internal/jsonpos"
)

// Table is a file read into rows, with each row's line number.
type Table struct {
	Path   string
	Header []string // trimmed, lower-cased
	Names  []string // the header as written, trimmed (for messages)
	Rows   [][]string
	Lines  []int // Lines[i] is the 1-based line where Rows[i] starts
	// Problems[i] is non-nil when Rows[i] is invalid as a whole: more
	// fields than the header (a shifted row), or a field that is not
	// valid UTF-8. Loaders report it (item.Set.Fail) before reading cells.
	Problems []*item.Problem
}

// rowProblem is rec's first field that is not UTF-8, or its fields past
// the header's (a shifted row), or nil.
func (t *Table) rowProblem(r *csv.Reader, rec []string, line int) *item.Problem {
	for j, f := range rec {
		if utf8.ValidString(f) {
			continue
		}
		_, _, msg, _ := jsonpos.BadUTF8([]byte(f))
		fl, _ := r.FieldPos(j)
		return &item.Problem{File: t.Path, Line: fl, Field: t.name(j), Msg: msg}
	}
	if len(rec) > len(t.Header) {
		return &item.Problem{File: t.Path, Line: line, Field: t.name(len(t.Header)),
			Msg: fmt.Sprintf("the row has %d fields but the header %d (%s): an unquoted delimiter inside a cell shifts the row",
				len(rec), len(t.Header), strings.Join(t.Names, ", "))}
	}
	return nil
}

// name is column j's header name, or "column N" past the header.
func (t *Table) name(j int) string {
	if j < len(t.Names) && t.Names[j] != "" {
		return t.Names[j]
	}
	return fmt.Sprintf("column %d", j+1)
}

// Read reads path with the given delimiter (',' or '\t'; a TSV file may
// hold stray quotes: files of that kind never quote).
func Read(path string, comma rune) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if bytes.HasPrefix(b, []byte("\xff\xfe")) || bytes.HasPrefix(b, []byte("\xfe\xff")) {
		return nil, item.Problem{File: path, Line: 1, Msg: "the file is UTF-16 (it starts with a byte-order mark); save it as UTF-8"}
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.Comma = comma
	r.LazyQuotes = comma == '\t'
	r.FieldsPerRecord = -1
	t := &Table{Path: path}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if pe, ok := errors.AsType[*csv.ParseError](err); ok {
				return nil, fmt.Errorf("%s line %d: %v", path, pe.StartLine, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if t.Header == nil {
			for j, h := range rec {
				if !utf8.ValidString(h) {
					_, _, msg, _ := jsonpos.BadUTF8([]byte(h))
					return nil, item.Problem{File: path, Line: line, Field: fmt.Sprintf("header column %d", j+1), Msg: msg}
				}
				t.Names = append(t.Names, strings.TrimSpace(h))
				t.Header = append(t.Header, strings.ToLower(strings.TrimSpace(h)))
			}
			continue
		}
		t.Rows = append(t.Rows, rec)
		t.Lines = append(t.Lines, line)
		t.Problems = append(t.Problems, t.rowProblem(r, rec, line))
	}
	if t.Header == nil {
		return nil, fmt.Errorf("%s: empty file (no header)", path)
	}
	return t, nil
}

// Col returns the index of the first column whose name is one of names
// (compared case-insensitively), or an error listing the header.
func (t *Table) Col(names ...string) (int, error) {
	for _, n := range names {
		if i := slices.Index(t.Header, strings.ToLower(n)); i >= 0 {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%s: no column %q (header: %s)", t.Path, names[0], strings.Join(t.Header, ", "))
}

// Cell returns row i, column c, trimmed; "" when the row is short.
func (t *Table) Cell(i, c int) string {
	if c < 0 || c >= len(t.Rows[i]) {
		return ""
	}
	return strings.TrimSpace(t.Rows[i][c])
}

// LangTable is one per-language file of a parallel dataset.
type LangTable struct {
	Lang  lang.Language
	Form  item.Form // english for English, native otherwise
	Table *Table
}

// ReadLanguageFiles reads every DIR/<language><ext> (the file name is a
// language name or code the registry resolves), in name order. Rows are
// parallel across such files, so a note is returned when their row counts
// differ.
func ReadLanguageFiles(ctx context.Context, dir, ext string, comma rune, reg *lang.Registry) ([]LangTable, []string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil || len(files) == 0 {
		return nil, nil, fmt.Errorf("%s: no <language>%s files", dir, ext)
	}
	sort.Strings(files)
	var out []LangTable
	counts := map[int][]string{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
		}
		l, err := reg.Lookup(strings.TrimSuffix(filepath.Base(f), ext))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: the file name must be a language: %w", f, err)
		}
		form := item.Native
		if l.ISO3 == "eng" {
			form = item.English
		}
		t, err := Read(f, comma)
		if err != nil {
			return nil, nil, err
		}
		counts[len(t.Rows)] = append(counts[len(t.Rows)], l.Name)
		out = append(out, LangTable{Lang: l, Form: form, Table: t})
	}
	var notes []string
	if len(counts) > 1 {
		notes = append(notes, fmt.Sprintf("files differ in row count %v; rows are aligned by position, so items past a file's end are missing there", counts))
	}
	return out, notes, nil
}
