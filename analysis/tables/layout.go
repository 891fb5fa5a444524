package tables

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Pivot lays a long table out wide, the way the papers print their
// tables: one row per distinct combination of rowKeys (in the order first
// seen), one column per distinct combination of colKeys (in colOrder's
// order when it names them, the rest sorted after) and value column,
// named "<col values joined by _>_<value>" ("<col values>" when there is
// one value column). Cells keep their types; a missing cell is NaN. keep,
// when not nil, selects the source rows. The columns derive from the
// source's: a key column is declared as there; a value column has the
// source column's type and kind (Float when a missing cell makes an int
// column's NaN) and says which value it holds where ("rate where
// condition = hi (k / n)").
func Pivot(name, description string, src *Table, keep func(t *Table, row []any) bool, rowKeys, colKeys, values, colOrder []string) *Table {
	type cell struct{ row, col string }
	cellsOf := func(row []any, keys []string) []any {
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = src.cell(row, k)
		}
		return out
	}
	join := func(row []any, keys []string) string {
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = src.Str(row, k)
		}
		return strings.Join(parts, "_")
	}
	var rows, cols []string
	rowVals := map[string][]any{}
	cells := map[cell][]any{}
	for _, r := range src.Rows {
		if keep != nil && !keep(src, r) {
			continue
		}
		rk, ck := join(r, rowKeys), join(r, colKeys)
		if _, ok := rowVals[rk]; !ok {
			rows = append(rows, rk)
			rowVals[rk] = cellsOf(r, rowKeys)
		}
		if !slices.Contains(cols, ck) {
			cols = append(cols, ck)
		}
		cells[cell{rk, ck}] = cellsOf(r, values)
	}
	rank := func(c string) int {
		if i := slices.Index(colOrder, c); i >= 0 {
			return i
		}
		return len(colOrder)
	}
	slices.SortStableFunc(cols, func(a, b string) int { return cmp.Or(rank(a)-rank(b), strings.Compare(a, b)) })
	srcCols := src.Columns()
	decl := func(name string) Column {
		if i := src.Col(name); i >= 0 && i < len(srcCols) {
			return srcCols[i]
		}
		return Text(name, "")
	}
	var out []Column
	for _, k := range rowKeys {
		out = append(out, decl(k))
	}
	for _, c := range cols {
		missing := slices.ContainsFunc(rows, func(rk string) bool { _, ok := cells[cell{rk, c}]; return !ok })
		for _, v := range values {
			h := c + "_" + v
			if len(values) == 1 {
				h = c
			}
			col := decl(v)
			col.Name = h
			doc := v + " where " + strings.Join(colKeys, ", ") + " = " + strings.ReplaceAll(c, "_", ", ")
			if col.Description != "" {
				doc += " (" + col.Description + ")"
			}
			col.Description = doc
			if col.Type == Int && missing {
				col.Type = Float // a missing cell is NaN
			}
			out = append(out, col)
		}
	}
	t := New(name, description, out...)
	missing := slices.Repeat([]any{math.NaN()}, len(values))
	for _, rk := range rows {
		out := slices.Clone(rowVals[rk])
		for _, c := range cols {
			vs, ok := cells[cell{rk, c}]
			if !ok {
				vs = missing
			}
			out = append(out, vs...)
		}
		t.Rows = append(t.Rows, out)
	}
	if len(t.Rows) == 0 {
		t.Note = src.Note // why the table it lays out is empty
	}
	return t
}

// Stars marks a p-value as the papers do: *** below 0.001, ** below
// 0.01, * below 0.05, "" otherwise (and for NaN).
func Stars(p float64) string {
	switch {
	case p < 0.001:
		return "***"
	case p < 0.01:
		return "**"
	case p < 0.05:
		return "*"
	}
	return ""
}

// ColumnGroup is a run of adjacent columns that a layout table prints
// under one spanning header, as the papers do: IndicKLAR's languages over
// their ACC and CLC sub-columns ("hin_acc", "hin_clc"), Table 15's
// strategies over from / flipped / share, IndicQuest's models over the
// three protocols. First and Last are column indexes (inclusive); Subs
// are the sub-column labels, in order.
type ColumnGroup struct {
	Label       string
	First, Last int
	Subs        []string
}

// ColumnGroups returns the spanning headers of a layout table (a name
// ending in "_wide"): after the leading key columns (those whose name has
// no "_"), every column must be named "<group>_<sub>" (split at the last
// "_") and belong to a run of at least two adjacent columns sharing the
// group. When any value column breaks the rule (the distractor study's
// "es_long" stands alone), the table has no groups and ColumnGroups
// returns nil, so a header is never half grouped.
func (t *Table) ColumnGroups() []ColumnGroup {
	if !strings.HasSuffix(t.Name, "_wide") {
		return nil
	}
	first := 0
	for first < len(t.Header) && !strings.Contains(t.Header[first], "_") {
		first++
	}
	if first == 0 || first == len(t.Header) {
		return nil
	}
	var out []ColumnGroup
	for c := first; c < len(t.Header); c++ {
		i := strings.LastIndex(t.Header[c], "_")
		if i <= 0 || i == len(t.Header[c])-1 {
			return nil
		}
		label, sub := t.Header[c][:i], t.Header[c][i+1:]
		if n := len(out); n > 0 && out[n-1].Label == label && out[n-1].Last == c-1 {
			out[n-1].Last = c
			out[n-1].Subs = append(out[n-1].Subs, sub)
			continue
		}
		out = append(out, ColumnGroup{Label: label, First: c, Last: c, Subs: []string{sub}})
	}
	if slices.ContainsFunc(out, func(g ColumnGroup) bool { return g.Last == g.First }) {
		return nil
	}
	return out
}

// SubLabel is how a grouped column's sub-header reads: the papers' ACC
// and CLC in capitals, other sub-columns as named.
func SubLabel(sub string) string {
	switch sub {
	case "acc", "clc":
		return strings.ToUpper(sub)
	}
	return sub
}
