package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// The papers' layout in the HTML page and the workbook: languages as
// column groups over ACC and CLC sub-columns, the key columns spanning
// both header rows, the data starting under them.
func TestGroupedHeaders(t *testing.T) {
	wide := &tables.Table{Name: "acc_clc_wide", Simulated: true,
		Header: []string{"model", "strategy", "hin_acc", "hin_clc", "tam_acc", "tam_clc"},
		Rows:   [][]any{{"tiny-1b", "baseline", 0.25, 0.5, 0.125, math.NaN()}, {"tiny-1b", "tint-cm", 0.5, 0.3333333, 0.375, 0.6}}}
	dom := &tables.Table{Name: "domains_wide", Header: []string{"language", "domain", "*_judge", "*_overlap", "m_judge", "m_overlap"},
		Rows: [][]any{{"hin", "Politics", 0.5, 0.25, 0.5, 0.25}, {"hin", "Geography", 0.75, 0.5, 0.75, 0.5}}, Chart: &tables.Chart{Keys: 2, Title: "accuracy per language and domain (one series per model and protocol column)"}}
	p := Page{Title: "layout", Simulated: true, Tables: []*tables.Table{wide, dom}}
	var html bytes.Buffer
	if err := WriteHTML(&html, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`rowspan="2">model</th>`, `colspan="2">hin</th>`, `colspan="2">tam</th>`, `title="hin_acc: `, `>ACC</th>`, `>CLC</th>`, `colspan="2">*</th>`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
	f := readBack(t, p)
	merged, err := f.GetMergeCells("acc_clc_wide")
	if err != nil {
		t.Fatal(err)
	}
	var spans []string
	for _, m := range merged {
		spans = append(spans, m.GetStartAxis()+":"+m.GetEndAxis()+"="+m.GetCellValue())
	}
	want := "A1:A2=model B1:B2=strategy C1:D1=hin E1:F1=tam"
	if strings.Join(spans, " ") != want {
		t.Errorf("merged header cells %v, want %s", spans, want)
	}
	for cell, v := range map[string]string{"C2": "ACC", "D2": "CLC", "A3": "tiny-1b", "C4": "0.5", "F3": ""} {
		if got, _ := f.GetCellValue("acc_clc_wide", cell); got != v && !(cell == "C4" && got == "0.500") {
			t.Errorf("acc_clc_wide %s = %q, want %q", cell, got, v)
		}
	}
	// Every header cell is in the header's style, those merged away too;
	// an empty value (NaN) is an empty cell in its column's format.
	head, _ := f.GetCellStyle("acc_clc_wide", "A1")
	for _, cell := range []string{"A2", "B2", "D1", "F2"} {
		if s, _ := f.GetCellStyle("acc_clc_wide", cell); s != head || head == 0 {
			t.Errorf("acc_clc_wide %s style %d, want the header's %d", cell, s, head)
		}
	}
	if got, want := styleOf(t, f, "acc_clc_wide", "F3"), styleOf(t, f, "acc_clc_wide", "F4"); got != want || want == 0 {
		t.Errorf("acc_clc_wide F3 (NaN) style %d, want its column's %d", got, want)
	}
	if d, _ := f.GetSheetDimension("acc_clc_wide"); d != "A1:F4" {
		t.Errorf("acc_clc_wide dimension %q, want A1:F4", d)
	}
	if panes, err := f.GetPanes("acc_clc_wide"); err != nil || !panes.Freeze || panes.YSplit != 2 || panes.TopLeftCell != "A3" {
		t.Errorf("panes %+v %v: want the two header rows frozen", panes, err)
	}
	charts := chartXML(f)
	for _, x := range charts {
		if !strings.Contains(x, "&#39;domains_wide&#39;!$C$1:$F$2") {
			t.Errorf("the domains chart's categories are not the two header rows:\n%s", x)
		}
	}
	if len(charts) != 1 {
		t.Errorf("%d charts, want the domains layout's one", len(charts))
	}
}

// readBack writes p's workbook and opens it again with excelize.
func readBack(t *testing.T, p Page) *excelize.File {
	t.Helper()
	var b bytes.Buffer
	if err := WriteXLSX(&b, p); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// chartXML is the XML of every chart in a workbook.
func chartXML(f *excelize.File) []string {
	var out []string
	for name, v := range f.Pkg.Range {
		if n, ok := name.(string); ok && strings.HasPrefix(n, "xl/charts/chart") {
			out = append(out, string(v.([]byte)))
		}
	}
	return out
}

// An empty table's sheet says why it is empty, in the HTML report's words
// (one full stop, whether or not the note ends with one): in a cell merged
// across the table's columns, wrapped, its row as tall as its lines (a
// text running past the table is cut off in print).
func TestEmptyTableSheetSaysWhy(t *testing.T) {
	for _, c := range []struct {
		note, want string
		lines      float64
	}{
		{"one language: CLC needs a pair of languages, and this run asked one language of every model it named", "No rows: one language: CLC needs a pair of languages, and this run asked one language of every model it named.", 3},
		{"", "No rows.", 1},
		{"no flip point: the run has no TinT-CM answers.", "No rows: no flip point: the run has no TinT-CM answers.", 2},
	} {
		empty := &tables.Table{Name: "clc_mean", Header: []string{"model", "language", "mean_jaccard"}, Note: c.note}
		if got := tableViewOf(empty, empty.Info(), 0, "t").Note; got != c.want {
			t.Errorf("the HTML's note = %q, want %q", got, c.want)
		}
		f := readBack(t, Page{Title: "empty", Tables: []*tables.Table{empty}})
		if got, _ := f.GetCellValue("clc_mean", "A2"); got != c.want {
			t.Errorf("A2 = %q, want %q", got, c.want)
		}
		merged, err := f.GetMergeCells("clc_mean")
		if err != nil || len(merged) != 1 || merged[0].GetStartAxis() != "A2" || merged[0].GetEndAxis() != "C2" {
			t.Errorf("merged cells %v %v, want A2:C2", merged, err)
		}
		st, err := f.GetStyle(styleOf(t, f, "clc_mean", "A2"))
		if err != nil || st.Alignment == nil || !st.Alignment.WrapText {
			t.Errorf("A2's style %+v %v: want its text wrapped", st, err)
		}
		if h, _ := f.GetRowHeight("clc_mean", 2); h != c.lines*lineHeight {
			t.Errorf("row 2 is %.1f points tall, want %.0f lines of %.1f", h, c.lines, lineHeight)
		}
	}
}

// styleOf is the style of a cell of sheet.
func styleOf(t *testing.T, f *excelize.File, sheet, cell string) int {
	t.Helper()
	s, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
