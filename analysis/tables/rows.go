package tables

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
