// Package pqlist reads Parquet LIST columns whatever the writer named the
// list's element: "element" (the Parquet spec, pyarrow >= 13) or "item"
// (older pyarrow and arrow-rs defaults).
package pqlist

import (
	"cmp"
	"context"
	"fmt"
	"os"

	"github.com/parquet-go/parquet-go"

	"github.com/bhashalab/bhasha/datasets/item"
)

// Elem is a list element: the file's element column is read into the
// field of its name, the other is nil.
type Elem[T any] struct {
	Item    *T `parquet:"item,optional"`
	Element *T `parquet:"element,optional"`
}

// Deref is *p, or T's zero value when p is nil (a null optional field).
func Deref[T any](p *T) T {
	if p == nil {
		var z T
		return z
	}
	return *p
}

// List is a LIST group: list.<element>.
type List[T any] struct {
	List []Elem[T] `parquet:"list"`
}

// Values returns the list's non-null elements.
func Values[T any](l *List[T]) []T {
	if l == nil {
		return nil
	}
	out := make([]T, 0, len(l.List))
	for _, e := range l.List {
		if v := cmp.Or(e.Element, e.Item); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// Columns returns the schema of the Parquet file at path as text (column
// names and types); an error says the file cannot be opened or read as
// Parquet.
func Columns(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return "", fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	return pf.Schema().String(), nil
}

// Each reads the Parquet file at path into rows of T and calls add with
// each row and its place ("row N", 0-based), in order, stopping at add's
// first error. An unreadable file is an error naming path and what (the
// dataset and the columns it wants); ctx is checked every 4,096 rows.
func Each[T any](ctx context.Context, path, what string, add func(r *T, src item.Problem) error) error {
	if _, err := Columns(path); err != nil {
		return err
	}
	rows, err := parquet.ReadFile[T](path)
	if err != nil {
		return fmt.Errorf("%s: reading %s: %w", path, what, err)
	}
	for i := range rows {
		if i%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("reading %s: %w", path, ctx.Err())
		}
		if err := add(&rows[i], item.Problem{File: path, Record: fmt.Sprintf("row %d", i)}); err != nil {
			return err
		}
	}
	return nil
}
