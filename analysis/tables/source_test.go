package tables

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// TestSourceAgreesWithHeldRows: the answers made row by row (AnswerRows)
// read as the held table (Answers) does in every view: Len, Row, Text,
// CSV, Markdown, LaTeX, DataFrame and Held; a row's buffer is reused and
// appending to a held table's row leaves the table as it was.
func TestSourceAgreesWithHeldRows(t *testing.T) {
	s := score.NewSchema()
	for _, n := range []int{0, 1, 5000} {
		rows := make([]score.Row, n)
		for i := range rows {
			rows[i] = score.Row{Key: engine.Key{Experiment: "e", Model: fmt.Sprint("m", i%3), Item: fmt.Sprint(i), Language: "hin"},
				Gold: fmt.Sprint("g", i%7), Prediction: fmt.Sprint("p", i), Correct: i%2 == 0, PromptTokens: i % 11, Script: "Deva"}
		}
		held, src := Answers(rows, s), AnswerRows(rows, s)
		if src.Rows != nil || src.Source == nil || held.Source != nil {
			t.Fatalf("n=%d: AnswerRows holds %d rows (source %v), Answers has a source %v", n, len(src.Rows), src.Source != nil, held.Source != nil)
		}
		if held.Len() != n || src.Len() != n {
			t.Fatalf("n=%d: Len %d and %d", n, held.Len(), src.Len())
		}
		var buf []any
		for i := range n {
			buf = src.Row(i, buf)
			if !reflect.DeepEqual(buf, held.Rows[i]) {
				t.Fatalf("n=%d: row %d is %v, held %v", n, i, buf, held.Rows[i])
			}
			if i == n-1 {
				for c := range held.Header {
					if src.Text(i, c) != held.Text(i, c) {
						t.Errorf("n=%d: Text(%d, %d) %q, held %q", n, i, c, src.Text(i, c), held.Text(i, c))
					}
				}
			}
		}
		views := []struct {
			name string
			of   func(*Table) any
		}{
			{"CSV", func(t *Table) any { var b bytes.Buffer; t.WriteCSV(&b); return b.String() }},
			{"Markdown", func(t *Table) any { return t.Markdown() }},
			{"LaTeX", func(t *Table) any { return t.LaTeX() }},
			{"DataFrame", func(t *Table) any { return t.DataFrame().String() }},
			{"Held", func(t *Table) any { return t.Held().Rows }},
		}
		for _, v := range views {
			if a, b := v.of(src), v.of(held); !reflect.DeepEqual(a, b) {
				t.Errorf("n=%d: %s differs:\n%v\nheld:\n%v", n, v.name, a, b)
			}
		}
		// A reader's buffer holding another row, or cells of other types,
		// gives the same row; refilling it with the row it holds boxes
		// nothing again.
		for i := range min(n, 50) {
			for _, junk := range [][]any{src.Row(n-1-i, nil), slices.Repeat([]any{3.5, nil, true}, len(src.Header))} {
				got := src.Row(i, slices.Clone(junk))
				if !reflect.DeepEqual(got, held.Rows[i]) {
					t.Fatalf("n=%d: row %d over %v is %v, held %v", n, i, junk, got, held.Rows[i])
				}
			}
		}
		if n > 0 {
			row := src.Row(n-1, nil)
			if a := testing.AllocsPerRun(100, func() { row = src.Row(n-1, row) }); a != 0 {
				t.Errorf("n=%d: refilling a row with itself made %.0f allocations, want 0", n, a)
			}
		}
		if n > 0 {
			r := held.Row(0, nil)
			r = append(r, "extra")
			r[0] = "changed"
			if held.Rows[0][0] == "changed" || len(held.Rows[0]) != len(held.Header) {
				t.Errorf("n=%d: a row from Row changed the held table: %v", n, held.Rows[0])
			}
		}
	}
}
