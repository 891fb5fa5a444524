// Package pqlist reads Parquet LIST columns whatever the writer named the
// list's element: "element" (the Parquet spec, pyarrow >= 13) or "item"
// (older pyarrow and arrow-rs defaults). Row types take the element type
// as a parameter, and Read picks the one matching the file.
package pqlist

import (
	"fmt"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Elem is an element of a LIST; Item and Element are its two namings.
type Elem[T any] interface {
	Value() (T, bool)
}

// Item is a list element named "item".
type Item[T any] struct {
	V *T `parquet:"item,optional"`
}

// Value returns the element and whether it is not null.
func (e Item[T]) Value() (T, bool) { return deref(e.V) }

// Element is a list element named "element".
type Element[T any] struct {
	V *T `parquet:"element,optional"`
}

// Value returns the element and whether it is not null.
func (e Element[T]) Value() (T, bool) { return deref(e.V) }

// Deref is *p, or T's zero value when p is nil (a null optional field).
func Deref[T any](p *T) T {
	v, _ := deref(p)
	return v
}

func deref[T any](p *T) (T, bool) {
	if p == nil {
		var z T
		return z, false
	}
	return *p, true
}

// List is a LIST group: list.<element>.
type List[E any] struct {
	List []E `parquet:"list"`
}

// Values returns the list's non-null elements.
func Values[T any, E Elem[T]](l *List[E]) []T {
	if l == nil {
		return nil
	}
	out := make([]T, 0, len(l.List))
	for _, e := range l.List {
		if v, ok := e.Value(); ok {
			out = append(out, v)
		}
	}
	return out
}

// ElementName returns the name of the leaf inside the first LIST group of
// the file's schema: "element" or "item" ("" when the file has no list).
func ElementName(path string) (string, error) {
	schema, err := readSchema(path)
	if err != nil {
		return "", err
	}
	return findList(schema), nil
}

// readSchema returns the schema of the Parquet file at path.
func readSchema(path string) (*parquet.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	return pf.Schema(), nil
}

func findList(n parquet.Node) string {
	isList := false
	if lt := n.Type().LogicalType(); lt != nil {
		_, isList = lt.Value.(*format.ListType)
	}
	// Writers without logical types still use the group "list" of one field.
	if fs := n.Fields(); isList || (len(fs) == 1 && fs[0].Name() == "list" && fs[0].Repeated()) {
		for _, f := range n.Fields() { // the repeated group "list"
			for _, leaf := range f.Fields() {
				return leaf.Name()
			}
		}
	}
	for _, f := range n.Fields() {
		if name := findList(f); name != "" {
			return name
		}
	}
	return ""
}

// Columns returns the file's schema as text (column names and types).
func Columns(path string) (string, error) {
	schema, err := readSchema(path)
	if err != nil {
		return "", err
	}
	return schema.String(), nil
}
