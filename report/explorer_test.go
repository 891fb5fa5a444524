package report

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/browsertest"
)

// The explorer keeps what fits in MaxExplorerBytes, spread over the
// samples given, and says how many of the run's answers it shows and how
// they were chosen; it cuts each long text first (CutSampleTexts), so
// that long texts alone do not leave samples out.
func TestExplorerSelection(t *testing.T) {
	// rowsOf is n rows of about size bytes of text each, in columns of at
	// most MaxSampleText characters (none cut).
	rowsOf := func(n, size int) *tables.Table {
		cols := (size + MaxSampleText - 1) / MaxSampleText
		tb := &tables.Table{Name: "samples", Header: []string{"model"}}
		for c := range cols {
			tb.Header = append(tb.Header, fmt.Sprintf("text%d", c))
		}
		text := strings.Repeat("x", size/cols)
		for i := range n {
			row := []any{"m" + string(rune('a'+i%3))}
			for range cols {
				row = append(row, text)
			}
			tb.Rows = append(tb.Rows, row)
		}
		return tb
	}
	longTexts := &tables.Table{Name: "samples", Header: []string{"model", "response"}}
	for i := range 40 {
		longTexts.Rows = append(longTexts.Rows, []any{"m" + string(rune('a'+i%3)), strings.Repeat("x", 1<<20)})
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
		{"long texts cut: all fit", longTexts, 0, 0, 40, "All 40 scored answers"},
	} {
		ev := explorerViewOf(tc.t, tc.total, tc.every, "", "ex")
		e, note := ev.Data, ev.Note
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
// with what was left out, formula-like text stored as text, and columns
// as wide as their first rows' texts (from 10 to 40 characters), and no
// cell for an empty text (a long text beside it shows over it).
func TestStreamedSheet(t *testing.T) {
	tb := &tables.Table{Name: "answers", Header: []string{"item", "prediction", "rate", "script", "response", "error"}}
	for i := range 5 {
		tb.Rows = append(tb.Rows, []any{i, "=HYPERLINK(\"http://x\")", 0.25, "Devanagari", strings.Repeat("long ", 20), ""})
	}
	f := excelize.NewFile()
	st, err := newStyles(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeTable(context.Background(), f, "answers", tb, st, &longRows{total: 7, limit: 3, rest: "tables/answers.csv"}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeWorkbook(f, &b, map[string]bool{"answers": true}); err != nil {
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
	if typ, err := g.GetCellType("answers", "F2"); err != nil || typ != excelize.CellTypeUnset {
		t.Errorf("an empty text is a cell of type %v (%v)", typ, err)
	}
	for col, want := range map[string]float64{"A": 10, "B": 24, "C": 10, "D": 12, "E": 40} {
		if w, err := g.GetColWidth("answers", col); err != nil || w != want {
			t.Errorf("column %s: width %v (%v), want %v", col, w, err, want)
		}
	}
}

// explorerSamples is a samples table with declared columns: categories,
// free text (a long one), criteria, an int.
func explorerSamples() *tables.Table {
	t := tables.New("samples", "", tables.Category("model", "the model"), tables.Text("item", "the item"), tables.Category("judge", "a verdict"),
		tables.Text("prediction", "the answer"), tables.Flag("correct", "the strict criterion"), tables.Flag("translit", "beside"),
		tables.Flag("failed", "never true here"), tables.Integer("chosen", "an option"), tables.Text("error", "always empty"), tables.Text("response", "long"))
	long := strings.Repeat("a long response ", 10)
	t.Add("m1", "1", "correct", "Delhi", true, true, false, -1, "", long)
	t.Add("m2", "2", "incorrect", "Paris", false, true, false, 2, "", "short")
	t.Add("m2", "3", "", "रोम", false, false, false, -1, "", long)
	return t
}

// The explorer's fields come from the declared columns: a filter per
// category, the criterion select over the bools that vary, the text
// columns searched, and every column listed but long text and those empty
// or false in every row.
func TestExplorerFields(t *testing.T) {
	tb := explorerSamples()
	got := map[string]explorerField{}
	for _, f := range explorerFields(tb, tb.Rows) {
		got[f.Name] = f
	}
	for _, tc := range []struct {
		name                            string
		filter, criterion, list, search bool
	}{
		{"model", true, false, true, false},
		{"item", false, false, true, true},
		{"judge", true, false, true, false},
		{"prediction", false, false, true, true},
		{"correct", false, true, true, false},
		{"translit", false, true, true, false},
		{"failed", false, false, false, false},
		{"chosen", false, false, true, false},
		{"error", false, false, false, true},
		{"response", false, false, false, true},
	} {
		f, ok := got[tc.name]
		if !ok || f.Filter != tc.filter || f.Criterion != tc.criterion || f.List != tc.list || f.Search != tc.search || f.Description == "" {
			t.Errorf("field %s: %+v, want filter %v criterion %v list %v search %v", tc.name, f, tc.filter, tc.criterion, tc.list, tc.search)
		}
	}
}

// In a browser the explorer builds its filters, its criterion select and
// its list's header from the fields the Go side wrote, and filters by them.
func TestExplorerBuildsFromFields(t *testing.T) {
	h, err := ExplorerHTML(explorerSamples())
	if err != nil {
		t.Fatal(err)
	}
	probe := `<script>function pick(sel,v){var s=document.querySelector(sel);s.value=v;s.dispatchEvent(new Event("change"));}
var out=[];out.push("filters="+Array.prototype.map.call(document.querySelectorAll("select[data-field]"),function(s){return s.getAttribute("data-field");}).join(","));
out.push("header="+Array.prototype.map.call(document.querySelectorAll("table th"),function(h){return h.textContent;}).join(","));
var crit=document.querySelectorAll("select:not([data-field])")[0];
out.push("criteria="+Array.prototype.map.call(crit.options,function(o){return o.value;}).join(","));
pick("select[data-field=model]","m2");out.push("m2="+document.querySelector("p[id$=-count]").textContent.split(";")[0]);
crit.value="+translit";crit.dispatchEvent(new Event("change"));out.push("m2+translit="+document.querySelector("p[id$=-count]").textContent.split(";")[0]);
var p=document.createElement("pre");p.id="probe";p.textContent=out.join("\n");document.body.appendChild(p);</script>`
	file := filepath.Join(t.TempDir(), "explorer.html")
	if err := os.WriteFile(file, []byte(`<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>`+h+probe+`</body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, console := browsertest.DumpDOM(t, browsertest.Chromium(t), file, 3*time.Second)
	if len(console) > 0 {
		t.Errorf("the explorer wrote to the console: %q", console)
	}
	i, j := strings.Index(d, `<pre id="probe">`), strings.LastIndex(d, "</pre>")
	if i < 0 || j < i {
		t.Fatal("the probe did not run")
	}
	got := d[i+len(`<pre id="probe">`) : j]
	for _, want := range []string{"filters=model,judge", "header=model,item,judge,prediction,correct,translit,chosen",
		"criteria=,+correct,-correct,+translit,-translit", "m2=2 of 3 samples", "m2+translit=1 of 3 samples"} {
		if !strings.Contains(got, want) {
			t.Errorf("explorer probe lacks %q:\n%s", want, got)
		}
	}
}

// A streamed sheet declares its columns' widths in ascending order
// (Excel repairs a sheet whose <col> elements are not), a table's and a
// long table's alike.
func TestStreamedColumnsInOrder(t *testing.T) {
	short := &tables.Table{Name: "accuracy", Header: []string{"model", "language", "rate", "note"}, Rows: [][]any{{"m", "hin", 0.5, "a longer note than its header"}}}
	long := &tables.Table{Name: "answers", Header: []string{"item", "prediction", "rate"}, Rows: [][]any{{1, "x", 0.5}}}
	for _, c := range []struct {
		name  string
		write func(f *excelize.File, st styleSet) error
	}{
		{"table", func(f *excelize.File, st styleSet) error {
			_, err := writeTable(context.Background(), f, short.Name, short, st, nil)
			return err
		}},
		{"long table", func(f *excelize.File, st styleSet) error {
			_, err := writeTable(context.Background(), f, long.Name, long, st, &longRows{total: 1, limit: 10, rest: "x.csv"})
			return err
		}},
	} {
		f := excelize.NewFile()
		st, err := newStyles(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.write(f, st); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := writeWorkbook(f, &b, map[string]bool{short.Name: true, long.Name: true}); err != nil {
			t.Fatal(err)
		}
		z, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
		if err != nil {
			t.Fatal(err)
		}
		r, err := z.Open("xl/worksheets/sheet2.xml")
		if err != nil {
			t.Fatal(err)
		}
		xml, _ := io.ReadAll(r)
		var mins []int
		for _, m := range regexp.MustCompile(`<col min="(\d+)"`).FindAllSubmatch(xml, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			mins = append(mins, n)
		}
		if len(mins) < 2 || !slices.IsSorted(mins) {
			t.Errorf("%s: columns declared in the order %v", c.name, mins)
		}
	}
}
