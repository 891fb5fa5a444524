package report

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// printPage is a workbook of every sheet kind: tables (one with a long
// header label, one with grouped headers, one streamed), figures with
// a scatter, interval bars and a heatmap, provenance and samples.
func printPage(t *testing.T) Page {
	t.Helper()
	acc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 2, 8, 0.25, 0.07, 0.59},
		[]any{"indicklar", "m", "eng", "english", "baseline", "", "correct", 4, 8, 0.5, 0.22, 0.78},
		[]any{"indicklar", "m", "ben", "native", "baseline", "", "correct", 1, 8, 0.125, 0.02, 0.47},
		[]any{"indicklar", "m", "hin", "code-mixed", "baseline", "", "correct", 3, 8, 0.375, 0.14, 0.69})
	clc := table("clc", []string{"model", "a", "b", "items", "intersection", "union", "jaccard"},
		[]any{"m", "hin", "ben", 8, 2, 4, 0.5}, []any{"m", "hin", "tam", 8, 1, 4, 0.25})
	clc.Cols = []tables.Column{tables.Key("model"), tables.Text("a", "a unit"), tables.Text("b", "a unit"), tables.Count("items", "items"), tables.Count("intersection", "right under both"),
		tables.Count("union", "right under either"), tables.Proportion("jaccard", "intersection / union (cross-lingual consistency)")}
	dec := table("script_decomposition", []string{"model", "condition", "n", "halluc_rate", "switch_rate", "agree"},
		[]any{"m", "hi", 500, 0.71, 0.2, 0.9}, []any{"m", "clean", 500, 0.416, 0.1, 0.8})
	dec.Cols = []tables.Column{tables.Key("model"), tables.Text("condition", "the condition"), tables.Key("n"), tables.Proportion("halluc_rate", "halluc / n"),
		tables.Proportion("switch_rate", "switched / n"), tables.Key("agree")}
	long := table("long_header", []string{"model", "a_column_whose_name_is_far_longer_than_forty_characters_rate"}, []any{"m", 0.5})
	wide := &tables.Table{Name: "acc_clc_wide", Simulated: true, Header: []string{"model", "strategy", "hin_acc", "hin_clc"},
		Rows: [][]any{{"m", "baseline", 0.25, 0.5}}}
	tok := table("tokenization", []string{"model", "language", "n", "mean_prompt_tokens", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"},
		[]any{"m", "hin", 8, 60.0, 0.5, -0.9, 0.01, -0.8, 0.2}, []any{"m", "tam", 8, 90.0, 0.25, -0.9, 0.01, -0.8, 0.2},
		[]any{"m", "ben", 8, 75.0, 0.375, -0.9, 0.01, -0.8, 0.2})
	figs := drawn(t, "print") // from acc, tok and a CLC matrix (studies' TestReportFixtures)
	samples := table("answers", []string{"model", "language", "prompt", "response", "correct"},
		[]any{"m", "hin", "Which city?", "Delhi", true}, []any{"m", "ben", "Which river?", "=Ganga", false})
	return Page{Title: "print", Simulated: true, Tables: []*tables.Table{acc, clc, dec, long, wide, tok}, Figures: figs,
		Provenance: [][2]string{{"experiment", "print"}, {"decoding", strings.Repeat("a long decoding option ", 20)}}, Samples: samples}
}

// oneLine is the height of a row of one line of Calibri 11, in points.
const oneLine = 15.0

// The workbook's default font and its header style's font are named and
// sized (Calibri 11); a header row, and a README line, too long for one
// line gets the height of the lines it wraps to.
func TestWorkbookFonts(t *testing.T) {
	p := printPage(t)
	p.Notes = []string{strings.Repeat("a note that runs on ", 30)}
	f := readBack(t, p)
	if name, err := f.GetDefaultFont(); err != nil || name != "Calibri" {
		t.Errorf("default font %q %v, want Calibri", name, err)
	}
	for _, sheet := range []string{"accuracy", "figures", "provenance", "samples"} {
		cell := "A1"
		if sheet == "figures" {
			cell = "A2"
		}
		id, err := f.GetCellStyle(sheet, cell)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.GetStyle(id)
		if err != nil || st.Font == nil || st.Font.Family != "Calibri" || st.Font.Size != 11 || !st.Font.Bold {
			t.Errorf("%s %s: header font %+v %v, want bold Calibri 11", sheet, cell, st.Font, err)
		}
	}
	if h, _ := f.GetRowHeight("long_header", 1); h < 2*oneLine {
		t.Errorf("a header wrapped to two lines has a row %g points high", h)
	}
	if h, _ := f.GetRowHeight("accuracy", 1); h != oneLine {
		t.Errorf("a one-line header's row is %g points high, want %g", h, oneLine)
	}
	notes, _ := f.GetRows("README")
	for i, r := range notes {
		if len(r) > 0 && strings.HasPrefix(r[0], "a note that runs on") {
			if h, _ := f.GetRowHeight("README", i+1); h < 4*oneLine {
				t.Errorf("README row %d (%d characters) is %g points high", i+1, len(r[0]), h)
			}
		}
	}
}

// Every sheet prints landscape, one page wide (any number tall), within
// its print area, the table sheets' header rows repeated on each page.
func TestWorkbookPrintSetup(t *testing.T) {
	f := readBack(t, printPage(t))
	names := map[string]map[string]string{} // sheet → defined name → what it refers to
	for _, d := range f.GetDefinedName() {
		if names[d.Scope] == nil {
			names[d.Scope] = map[string]string{}
		}
		names[d.Scope][d.Name] = d.RefersTo
	}
	titles := map[string]string{"accuracy": "$1:$1", "clc": "$1:$1", "acc_clc_wide": "$1:$2", "provenance": "$1:$1", "samples": "$1:$1"}
	for _, sheet := range f.GetSheetList() {
		lay, err := f.GetPageLayout(sheet)
		if err != nil {
			t.Fatal(err)
		}
		props, _ := f.GetSheetProps(sheet)
		if lay.Orientation == nil || *lay.Orientation != "landscape" || lay.FitToWidth == nil || *lay.FitToWidth != 1 ||
			lay.FitToHeight == nil || *lay.FitToHeight != 0 || props.FitToPage == nil || !*props.FitToPage {
			t.Errorf("%s: page layout %s, fit to page %v: want landscape, one page wide, any number tall", sheet, layout(lay), props.FitToPage)
		}
		if m, _ := f.GetPageMargins(sheet); m.Left == nil || *m.Left > 0.5 {
			t.Errorf("%s: left margin %v, want narrow", sheet, m.Left)
		}
		area := names[sheet]["_xlnm.Print_Area"]
		if !strings.HasPrefix(area, "'"+sheet+"'!$A$1:$") {
			t.Errorf("%s: print area %q", sheet, area)
		}
		if want, ok := titles[sheet]; ok && names[sheet]["_xlnm.Print_Titles"] != "'"+sheet+"'!"+want {
			t.Errorf("%s: print titles %q, want rows %s", sheet, names[sheet]["_xlnm.Print_Titles"], want)
		}
	}
	// The figures' print area holds their charts: 10 columns of 64 pixels
	// right of the widest block.
	if area := names["figures"]["_xlnm.Print_Area"]; !strings.Contains(area, ":$") || colOf(t, area) < 12 {
		t.Errorf("figures print area %q stops before the charts", area)
	}
	if got, want := names["accuracy"]["_xlnm.Print_Area"], "'accuracy'!$A$1:$L$5"; got != want {
		t.Errorf("accuracy print area %q, want %q", got, want)
	}
}

func layout(l excelize.PageLayoutOptions) string {
	s := func(p *int) string {
		if p == nil {
			return "unset"
		}
		return strconv.Itoa(*p)
	}
	o := "unset"
	if l.Orientation != nil {
		o = *l.Orientation
	}
	return o + ", fit " + s(l.FitToWidth) + " wide × " + s(l.FitToHeight) + " tall"
}

// colOf is the last column of a range reference.
func colOf(t *testing.T, ref string) int {
	t.Helper()
	cells := strings.Split(strings.ReplaceAll(ref[strings.LastIndex(ref, "!")+1:], "$", ""), ":")
	c, _, err := excelize.CellNameToCoordinates(cells[len(cells)-1])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var seriesRef = regexp.MustCompile(`<(xVal|yVal|cat|val|plus|minus)><(numRef|strRef)><f>([^<]*)</f>`)

// refCells reads the cells of a chart's range reference ('sheet'!$B$3:$B$5).
func refCells(t *testing.T, f *excelize.File, ref string) (sheet string, cells []string) {
	t.Helper()
	ref = strings.ReplaceAll(ref, "&#39;", "'")
	i := strings.LastIndex(ref, "!")
	sheet = strings.ReplaceAll(strings.Trim(ref[:i], "'"), "''", "'")
	ends := strings.Split(strings.ReplaceAll(ref[i+1:], "$", ""), ":")
	c0, r0, err := excelize.CellNameToCoordinates(ends[0])
	if err != nil {
		t.Fatal(err)
	}
	c1, r1, _ := excelize.CellNameToCoordinates(ends[len(ends)-1])
	for c := c0; c <= c1; c++ {
		for r := r0; r <= r1; r++ {
			cells = append(cells, cellName(c, r))
		}
	}
	return sheet, cells
}

// number reads a cell as a number: a numeric cell, not text.
func number(t *testing.T, f *excelize.File, sheet, cell string) (float64, bool) {
	t.Helper()
	typ, err := f.GetCellType(sheet, cell)
	if err != nil || (typ != excelize.CellTypeNumber && typ != excelize.CellTypeUnset) {
		return 0, false
	}
	v, err := f.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
	if err != nil || v == "" {
		return 0, false
	}
	x, err := strconv.ParseFloat(v, 64)
	return x, err == nil
}

// A scatter chart's series are number references (x and y) over the
// series' own rows, every cell a number; markers have a fill of their own
// (LibreOffice draws an unfilled one as nothing).
func TestWorkbookScatterNumeric(t *testing.T) {
	f := readBack(t, printPage(t))
	found := 0
	for _, x := range chartXML(f) {
		if !strings.Contains(x, "<scatterChart>") {
			continue
		}
		found++
		for _, ser := range strings.Split(x, "<ser>")[1:] {
			refs := seriesRef.FindAllStringSubmatch(ser, -1)
			kinds := map[string]bool{}
			for _, m := range refs {
				kinds[m[1]] = true
				if m[2] != "numRef" {
					t.Errorf("scatter %s is a %s, want a number reference: %s", m[1], m[2], m[3])
				}
				sheet, cells := refCells(t, f, m[3])
				for _, c := range cells {
					if _, ok := number(t, f, sheet, c); !ok {
						v, _ := f.GetCellValue(sheet, c)
						t.Errorf("scatter %s cell %s!%s is %q, not a number", m[1], sheet, c, v)
					}
				}
			}
			if !kinds["xVal"] || !kinds["yVal"] {
				t.Errorf("a scatter series lacks x or y values: %.300s", ser)
			}
			if strings.Contains(ser, "<marker><symbol val=\"circle\"></symbol>") && !regexp.MustCompile(`<marker>.*?<spPr><a:solidFill>`).MatchString(ser) {
				t.Errorf("a scatter marker has no fill: %.400s", ser)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d scatter charts, want the tokenization figure's", found)
	}
}

// An interval bar chart's columns carry their whiskers as custom error
// bars: below each bar by rate − lo, above by hi − rate, the distances in
// numeric cells and the bounds in the lo and hi columns beside the data.
func TestWorkbookWhiskers(t *testing.T) {
	f := readBack(t, printPage(t))
	checked := 0
	for _, x := range chartXML(f) {
		if !strings.Contains(x, "accuracy by form") {
			continue
		}
		for _, ser := range strings.Split(x, "<ser>")[1:] {
			if !strings.Contains(ser, "<errBars>") || !strings.Contains(ser, `<errValType val="cust">`) {
				t.Errorf("a column series without custom error bars: %.300s", ser)
				continue
			}
			refs := map[string]string{}
			for _, m := range seriesRef.FindAllStringSubmatch(ser, -1) {
				refs[m[1]] = m[3]
			}
			name := regexp.MustCompile(`<tx><strRef><f>([^<]*)</f>`).FindStringSubmatch(ser)
			if name == nil || refs["val"] == "" || refs["plus"] == "" || refs["minus"] == "" {
				t.Fatalf("series refs %v: %.300s", refs, ser)
			}
			sheet, head := refCells(t, f, name[1])
			label, _ := f.GetCellValue(sheet, head[0])
			_, hr, _ := excelize.CellNameToCoordinates(head[0])
			header, _ := f.GetRows(sheet)
			lo, hi := slices.Index(header[hr-1], label+" lo"), slices.Index(header[hr-1], label+" hi")
			if lo < 0 || hi < 0 {
				t.Fatalf("no %q lo and hi columns in %v", label, header[hr-1])
			}
			_, vals := refCells(t, f, refs["val"])
			_, plus := refCells(t, f, refs["plus"])
			_, minus := refCells(t, f, refs["minus"])
			for i, cell := range vals {
				v, ok := number(t, f, sheet, cell)
				if !ok {
					continue
				}
				_, r, _ := excelize.CellNameToCoordinates(cell)
				l, okl := number(t, f, sheet, cellName(lo+1, r))
				h, okh := number(t, f, sheet, cellName(hi+1, r))
				p, okp := number(t, f, sheet, plus[i])
				m, okm := number(t, f, sheet, minus[i])
				if !okl || !okh || !okp || !okm || math.Abs(p-(h-v)) > 1e-9 || math.Abs(m-(v-l)) > 1e-9 {
					t.Errorf("%s row %d: bar %g, interval %g–%g, error bars −%g +%g", label, r, v, l, h, m, p)
				}
				checked++
			}
		}
	}
	if checked != 5 {
		t.Errorf("%d bars checked, want 5 (English, pooled, beside ben and hin; native: ben, hin; code-mixed: hin)", checked)
	}
}

// Category labels sit under the plot area (tick labels low), not at the
// axis inside negative bars, in the figures' charts and the layout
// tables' charts alike.
func TestWorkbookCategoryLabelsLow(t *testing.T) {
	p := printPage(t)
	p.Tables = append(p.Tables, &tables.Table{Name: "domains_wide", Header: []string{"language", "domain", "m_judge", "m_overlap"},
		Rows: [][]any{{"hin", "Politics", 0.5, 0.25}, {"hin", "Geography", 0.75, 0.5}}, Chart: &tables.Chart{Keys: 2, Title: "accuracy per language and domain (one series per model and protocol column)"}})
	f := readBack(t, p)
	n := 0
	for _, x := range chartXML(f) {
		if !strings.Contains(x, "<barChart>") && !strings.Contains(x, "<scatterChart>") {
			continue
		}
		n++
		axis := x[strings.Index(x, "</barChart>")+1:]
		if strings.Contains(x, "<scatterChart>") {
			axis = x[strings.Index(x, "</scatterChart>")+1:]
		}
		// the first axis after the chart is the category (x) axis
		if i := strings.Index(axis, "<tickLblPos val="); i < 0 || !strings.HasPrefix(axis[i:], `<tickLblPos val="low">`) {
			t.Errorf("category labels not low: %.200s", axis[max(0, i):])
		}
	}
	if n < 3 {
		t.Errorf("%d bar and scatter charts, want the form, tokenization and domains charts", n)
	}
}

// A rate's colour scale follows the direction its column declares:
// green high where higher is better (Jaccard: cross-lingual
// consistency; a declared accuracy), green low where lower is better
// (hallucination, switched answers), a neutral single hue where the
// column declares neither (k / n of whichever metric, an agreement
// share); a heatmap takes its figure's own colour scale.
func TestWorkbookRateColours(t *testing.T) {
	p := printPage(t)
	own := tables.New("own", "", tables.Key("model"), tables.Proportion("foo_rate", "accuracy of the foo protocol"), tables.Proportion("bar_rate", "share of answers refused"))
	own.Add("m", 0.5, 0.5)
	p.Tables = append(p.Tables, own)
	f := readBack(t, p)
	norm := func(c string) string { return strings.ToUpper(strings.TrimPrefix(c, "#")) }
	scale := func(sheet, col string) []string {
		cf, err := f.GetConditionalFormats(sheet)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := f.GetRows(sheet)
		c := slices.Index(rows[0], col)
		for ref, opts := range cf {
			if strings.HasPrefix(ref, colName(c+1)) && len(opts) == 1 {
				o := opts[0]
				if o.Type == "2_color_scale" {
					return []string{norm(o.MinColor), norm(o.MaxColor)}
				}
				return []string{norm(o.MinColor), norm(o.MidColor), norm(o.MaxColor)}
			}
		}
		return nil
	}
	green, red, neutral := "63BE7B", "F8696B", []string{"F7FBFF", "6BAED6"}
	for _, c := range []struct {
		sheet, col string
		want       []string
	}{
		{"clc", "jaccard", []string{red, "FFEB84", green}},
		{"own", "foo_rate", []string{red, "FFEB84", green}},
		{"script_decomposition", "halluc_rate", []string{green, "FFEB84", red}},
		{"script_decomposition", "switch_rate", []string{green, "FFEB84", red}},
		{"script_decomposition", "agree", neutral},
		{"accuracy", "rate", neutral},
		{"own", "bar_rate", neutral},
	} {
		if got := scale(c.sheet, c.col); !slices.Equal(got, c.want) {
			t.Errorf("%s.%s colour scale %v, want %v", c.sheet, c.col, got, c.want)
		}
	}
	cf, _ := f.GetConditionalFormats("figures")
	for ref, opts := range cf {
		if o := opts[0]; norm(o.MinColor) != "F7FBFF" || norm(o.MidColor) != "6BAED6" || norm(o.MaxColor) != "08306B" {
			t.Errorf("heatmap %s scale %s → %s → %s, want the figure's blues", ref, o.MinColor, o.MidColor, o.MaxColor)
		}
	}
	if len(cf) != 1 {
		t.Errorf("%d colour scales on the figures sheet, want the heatmap's", len(cf))
	}
}

// The index workbook's table sheets print as a run's table sheets do:
// landscape, one page wide (any number tall), their header rows repeated
// on each page.
func TestIndexTablesPrintSetup(t *testing.T) {
	wide := &tables.Table{Name: "acc_clc_wide", Simulated: true, Header: []string{"model", "strategy", "hin_acc", "hin_clc"},
		Rows: [][]any{{"m", "baseline", 0.25, 0.5}}}
	for _, c := range []struct {
		table  *tables.Table
		sheet  string
		titles string
	}{
		{table("accuracy", []string{"model", "language", "rate"}, []any{"m", "hin", 0.5}), "run accuracy", "$1:$1"},
		{wide, "run acc_clc_wide", "$1:$2"},
	} {
		var b bytes.Buffer
		if err := WriteIndexXLSX(&b, "index", []Entry{{Name: "run", Tables: []*tables.Table{c.table}}}); err != nil {
			t.Fatal(err)
		}
		f, err := excelize.OpenReader(&b)
		if err != nil {
			t.Fatal(err)
		}
		lay, err := f.GetPageLayout(c.sheet)
		if err != nil {
			t.Fatal(err)
		}
		if lay.Orientation == nil || *lay.Orientation != "landscape" || lay.FitToWidth == nil || *lay.FitToWidth != 1 || lay.FitToHeight == nil || *lay.FitToHeight != 0 {
			t.Errorf("%s: page layout %s: want landscape, one page wide, any number tall", c.sheet, layout(lay))
		}
		titles := ""
		for _, d := range f.GetDefinedName() {
			if d.Scope == c.sheet && d.Name == "_xlnm.Print_Titles" {
				titles = d.RefersTo
			}
		}
		if want := "'" + c.sheet + "'!" + c.titles; titles != want {
			t.Errorf("%s: print titles %q, want %q", c.sheet, titles, want)
		}
		f.Close()
	}
}
