// Package tablestest holds what a study's table tests share: a scored
// row built from its key and verdict, and a table's cell found by the
// values of other cells. A program's own study may use it in its tests.
package tablestest

import (
	"strconv"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// Row is a scored answer of model on item in language, form, strategy
// and condition, right or wrong by correct.
func Row(model, lang, form, strategy, cond, item string, correct bool) score.Row {
	return score.Row{Key: engine.Key{Model: model, Language: lang, Form: form, Strategy: strategy, Condition: cond, Item: item}, Correct: correct}
}

// Cell is column col of the first row of tb whose cells, as the CSV
// writes them (tables.FormatCell), equal match's values by column name;
// the test fails when no row matches.
func Cell(t testing.TB, tb *tables.Table, match map[string]string, col string) string {
	t.Helper()
	for _, r := range tb.Rows {
		ok := true
		for k, v := range match {
			if tables.FormatCell(r[max(tb.Col(k), 0)]) != v {
				ok = false
			}
		}
		if ok {
			return tables.FormatCell(r[max(tb.Col(col), 0)])
		}
	}
	t.Fatalf("%s: no row %v", tb.Name, match)
	return ""
}

// Num is a cell's text as a number; the test fails when it is none.
func Num(t testing.TB, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
