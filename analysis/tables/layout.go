package tables

import (
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
// when not nil, selects the source rows.
func Pivot(name, description string, src *Table, keep func(t *Table, row []any) bool, rowKeys, colKeys, values, colOrder []string) *Table {
	type cell struct{ row, col string }
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
			vals := make([]any, len(rowKeys))
			for i, k := range rowKeys {
				vals[i] = src.cell(r, k)
			}
			rowVals[rk] = vals
		}
		if !slices.Contains(cols, ck) {
			cols = append(cols, ck)
		}
		vs := make([]any, len(values))
		for i, v := range values {
			vs[i] = src.cell(r, v)
		}
		cells[cell{rk, ck}] = vs
	}
	rank := func(c string) int {
		if i := slices.Index(colOrder, c); i >= 0 {
			return i
		}
		return len(colOrder)
	}
	slices.SortStableFunc(cols, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	header := slices.Clone(rowKeys)
	docs := map[string]string{}
	for _, c := range cols {
		for _, v := range values {
			h := c + "_" + v
			if len(values) == 1 {
				h = c
			}
			header = append(header, h)
			docs[h] = v + " where " + strings.Join(colKeys, ", ") + " = " + strings.ReplaceAll(c, "_", ", ")
			if d := ColumnDoc(src.Name, v); d != "" {
				docs[h] += " (" + d + ")"
			}
		}
	}
	t := &Table{Name: name, Description: description, Header: header, ColumnDocs: docs}
	for _, rk := range rows {
		out := slices.Clone(rowVals[rk])
		for _, c := range cols {
			vs, ok := cells[cell{rk, c}]
			for i := range values {
				if ok {
					out = append(out, vs[i])
				} else {
					out = append(out, math.NaN())
				}
			}
		}
		t.Rows = append(t.Rows, out)
	}
	if len(t.Rows) == 0 {
		t.Note = src.Note // why the table it lays out is empty
	}
	return t
}

// AccCLCWide is IndicKLAR's Tables 2, 8 and 9: per model × strategy, each
// language's accuracy (metric correct) and native CLC(L) side by side,
// languages as column groups ("<language>_acc", "<language>_clc"), for
// one form.
func AccCLCWide(accuracy, clcMeans *Table, form string) *Table {
	long := &Table{Name: "long", Header: []string{"model", "strategy", "language", "measure", "value"}}
	for _, r := range accuracy.Rows {
		if accuracy.Str(r, "metric") == "correct" && accuracy.Str(r, "form") == form {
			long.add(accuracy.Str(r, "model"), accuracy.Str(r, "strategy"), accuracy.Str(r, "language"), "acc", accuracy.Num(r, "rate"))
		}
	}
	for _, r := range clcMeans.Rows {
		if clcMeans.Str(r, "form") == form {
			long.add(clcMeans.Str(r, "model"), clcMeans.Str(r, "strategy"), clcMeans.Str(r, "language"), "clc", clcMeans.Num(r, "mean_jaccard"))
		}
	}
	return Pivot("acc_clc_wide", "accuracy and CLC(L) per language side by side (the papers' layout), form "+form, long, nil,
		[]string{"model", "strategy"}, []string{"language", "measure"}, []string{"value"}, nil)
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

// CorrelationMarks is IndicKLAR's Table 10: per model, Pearson's r and
// Spearman's ρ of prompt length against accuracy across languages, each
// with its significance marks (Stars), from the tokenization table.
func CorrelationMarks(tok *Table) *Table {
	t := &Table{Name: "tokenization_marks", Description: "Pearson r and Spearman ρ of prompt length against accuracy with significance marks (Table 10's layout)",
		Header: []string{"model", "languages", "pearson_r", "pearson_sig", "spearman_rho", "spearman_sig"},
		ColumnDocs: map[string]string{"languages": "languages correlated", "pearson_sig": "Stars of pearson_p (*** < 0.001, ** < 0.01, * < 0.05)",
			"spearman_sig": "Stars of spearman_p"}}
	for _, r := range tok.Rows {
		if tok.Str(r, "language") != "*" {
			continue
		}
		t.add(tok.Str(r, "model"), int(tok.Num(r, "n")), tok.Num(r, "pearson_r"), Stars(tok.Num(r, "pearson_p")), tok.Num(r, "spearman_rho"), Stars(tok.Num(r, "spearman_p")))
	}
	return t
}
