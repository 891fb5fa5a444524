// Package csvread reads delimited text files the way real dataset exports
// come: with or without a UTF-8 BOM, CRLF or LF line ends, header names
// with stray spaces and any letter case. Columns are found by name.
package csvread

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Table is a file read into rows, with each row's line number.
type Table struct {
	Path   string
	Header []string // trimmed, lower-cased
	Rows   [][]string
	Lines  []int // Lines[i] is the 1-based line where Rows[i] starts
}

// Read reads path with the given delimiter (',' or '\t'). lazyQuotes
// allows stray quotes (TSV files that never quote).
func Read(path string, comma rune, lazyQuotes bool) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	r := csv.NewReader(bytes.NewReader(b))
	r.Comma = comma
	r.LazyQuotes = lazyQuotes
	r.FieldsPerRecord = -1
	if comma == '\t' {
		r.LazyQuotes = true
	}
	t := &Table{Path: path}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s line %d: %v", path, pe.StartLine, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if t.Header == nil {
			for _, h := range rec {
				t.Header = append(t.Header, strings.ToLower(strings.TrimSpace(h)))
			}
			continue
		}
		t.Rows = append(t.Rows, rec)
		t.Lines = append(t.Lines, line)
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
		for i, h := range t.Header {
			if h == strings.ToLower(n) {
				return i, nil
			}
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
