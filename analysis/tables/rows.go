package tables

// Interner boxes each distinct string or int once, so that cells that
// repeat a value share one box and cost no allocation. The zero value is
// ready to use.
type Interner struct {
	strs map[string]any
	ints map[int]any
}

// String is s boxed, the same box for every equal s.
func (in *Interner) String(s string) any {
	if v, ok := in.strs[s]; ok {
		return v
	}
	if in.strs == nil {
		in.strs = map[string]any{}
	}
	var v any = s
	in.strs[s] = v
	return v
}

// Int is n boxed, the same box for every equal n.
func (in *Interner) Int(n int) any {
	if v, ok := in.ints[n]; ok {
		return v
	}
	if in.ints == nil {
		in.ints = map[int]any{}
	}
	var v any = n
	in.ints[n] = v
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
