package tables

// Source makes a table's rows as they are read, for a table as long as
// the run. N is the number of rows. Fill writes row i's len(Header) cells
// into row, which the caller owns and which holds what its buffer held
// (the row before, or nils); Fill sets every cell, but may leave one that
// already holds its value, and gives the same cells for i on every call.
type Source struct {
	N    int
	Fill func(i int, row []any)
	// Hold, when set, makes every row at once for Held, more compactly
	// than Fill row by row (sharing the boxes of repeated cells).
	Hold func() [][]any
}

// Len is the table's number of rows: len(t.Rows), or its Source's N.
func (t *Table) Len() int {
	if t.Source != nil {
		return t.Source.N
	}
	return len(t.Rows)
}

// Row is row i's cells written into buf (grown when short): t.Rows[i]
// copied, or the row its Source makes. The caller owns the result (it may
// append to it) until it passes buf again.
func (t *Table) Row(i int, buf []any) []any {
	if t.Source == nil {
		return append(buf[:0], t.Rows[i]...)
	}
	if cap(buf) < len(t.Header) {
		buf = make([]any, len(t.Header))
	}
	buf = buf[:len(t.Header)]
	t.Source.Fill(i, buf) // over the buffer's cells: Source says why
	return buf
}

// Held is the table with its rows held: t itself, or for a table with a
// Source a copy whose Rows are made by it (Source.Hold when set, else
// Fill) and whose Source is nil. What renders a whole table in memory
// (Markdown, LaTeX, DataFrame) reads Held.
func (t *Table) Held() *Table {
	if t.Source == nil {
		return t
	}
	h := *t
	h.Source = nil
	if t.Source.Hold != nil {
		h.Rows = t.Source.Hold()
	} else {
		h.Fill(t.Source.N, t.Source.Fill)
	}
	return &h
}

// Interner boxes each distinct string or int once, so that cells that
// repeat a value share one box and cost no allocation. The zero value is
// ready to use.
type Interner struct {
	strs map[string]any
	ints map[int]any
}

// String is s boxed, the same box for every equal s.
func (in *Interner) String(s string) any { return intern(&in.strs, s) }

// Int is n boxed, the same box for every equal n.
func (in *Interner) Int(n int) any { return intern(&in.ints, n) }

// intern is k boxed in *m, the box made and kept there at its first use.
func intern[K comparable](m *map[K]any, k K) any {
	if v, ok := (*m)[k]; ok {
		return v
	}
	if *m == nil {
		*m = map[K]any{}
	}
	var v any = k
	(*m)[k] = v
	return v
}

// Fill sets t.Rows to n rows of len(t.Header) cells each, fill(i, row)
// writing row i's cells. The rows share one backing array per block of
// 4,096 rows.
func (t *Table) Fill(n int, fill func(i int, row []any)) {
	width := len(t.Header)
	t.Rows = make([][]any, n)
	var block []any
	for i := range n {
		if len(block) < width {
			block = make([]any, width*min(4096, n-i))
		}
		row := block[:width:width]
		block = block[width:]
		fill(i, row)
		t.Rows[i] = row
	}
}
