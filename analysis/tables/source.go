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
