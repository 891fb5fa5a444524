package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// The explorer keeps what fits in MaxExplorerBytes, spread over the
// samples given, and says how many of the run's answers it shows and how
// they were chosen.
func TestExplorerSelection(t *testing.T) {
	rowsOf := func(n, size int) *tables.Table {
		tb := &tables.Table{Name: "samples", Header: []string{"model", "response"}}
		for i := range n {
			tb.Rows = append(tb.Rows, []any{"m" + string(rune('a'+i%3)), strings.Repeat("x", size)})
		}
		return tb
	}
	for _, tc := range []struct {
		name         string
		t            *tables.Table
		total, every int
		kept         int
		note         string
	}{
		{"all fit", rowsOf(10, 100), 0, 0, 10, "All 10 scored answers"},
		{"a spread selection that fits", rowsOf(10, 100), 95, 10, 10, "10 of 95 scored answers, every 10th (in table order)"},
		// 40 rows of ~1 MB: 15 MB keeps every 3rd, 13 or 14 of them
		{"too big: every 3rd", rowsOf(40, 1<<20), 0, 0, 14, "14 of 40 scored answers, every 3rd (in table order)"},
		{"too big after a spread", rowsOf(40, 1<<20), 400, 10, 14, "14 of 400 scored answers, every 30th (in table order)"},
		{"the first rows, then too big", rowsOf(40, 1<<20), 4000, 1, 14, "14 of 4000 scored answers, every 3rd of the first 40"},
		{"the first rows", rowsOf(10, 100), 4000, 1, 10, "10 of 4000 scored answers, the first"},
	} {
		e, note := explorerData(tc.t, tc.total, tc.every)
		if len(e.Rows) != tc.kept || !strings.Contains(note, tc.note) {
			t.Errorf("%s: kept %d (want %d), note %q (want %q)", tc.name, len(e.Rows), tc.kept, note, tc.note)
		}
		if tc.kept < len(tc.t.Rows) && e.Rows[1][0] == tc.t.Rows[1][0] && tc.name != "the first rows" {
			t.Errorf("%s: the kept rows are not spread", tc.name)
		}
	}
	if got := []string{ordinal(1), ordinal(2), ordinal(3), ordinal(11), ordinal(12), ordinal(21), ordinal(113)}; strings.Join(got, " ") != "1st 2nd 3rd 11th 12th 21st 113th" {
		t.Errorf("ordinals %v", got)
	}
}

// A long table goes through the streaming writer: capped rows, a note
// with what was left out, formula-like text stored as text.
func TestStreamedSheet(t *testing.T) {
	tb := &tables.Table{Name: "answers", Header: []string{"item", "prediction", "rate"}}
	for i := range 5 {
		tb.Rows = append(tb.Rows, []any{i, "=HYPERLINK(\"http://x\")", 0.25})
	}
	f := excelize.NewFile()
	st, err := newStyles(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeStream(f, "answers", tb, 7, 3, "tables/answers.csv", st); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	g, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := g.GetRows("answers")
	if len(rows) != 5 || rows[3][1] != "=HYPERLINK(\"http://x\")" || !strings.Contains(rows[4][0], "4 more rows are in tables/answers.csv") || !strings.Contains(rows[4][0], "first 3 of 7") {
		t.Errorf("streamed sheet %q", rows)
	}
	if formula, _ := g.GetCellFormula("answers", "B2"); formula != "" {
		t.Errorf("B2 holds the formula %q", formula)
	}
}
