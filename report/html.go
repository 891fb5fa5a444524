package report

import (
	"bufio"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/analysis/tables"
)

//go:embed assets/echarts.min.js
var echartsJS string

// Page is what an HTML report shows.
type Page struct {
	Title     string
	Simulated bool // a banner on the page says SIMULATED
	// Notes are what a reader must know before reading any number (the
	// experiment or its inputs changed since the run, records ignored):
	// the HTML report shows them above the results.
	Notes []string
	// MethodNotes say how the numbers were made (the study's protocol
	// choices, options in force): the HTML report shows them after the
	// results in a "Method notes" section its table of contents links;
	// the workbook's README sheet lists them after Notes.
	MethodNotes []string
	Tables      []*tables.Table
	Infos       []tables.Info // per table, same order (description, what it mirrors); a table past its end, or one without a Name, shows its own
	Figures     []Figure
	// Provenance is shown as name/value pairs (models, servers, decoding,
	// inputs and their hashes, tool version, dates, options in force).
	Provenance [][2]string
	// MaxRows bounds the rows shown per table (the CSV files hold them
	// all); 0 shows every row.
	MaxRows int
	// Samples, when set, feeds the HTML sample explorer and the
	// workbook's samples sheet (one row per scored answer of the
	// selection, at most MaxSampleRows of them in the sheet). Its declared
	// columns drive the explorer: a filter per category column
	// (tables.KindCategory), a criterion select over its bool columns,
	// a search over its other text.
	Samples *tables.Table
	// SamplesTotal is the run's number of scored answers when Samples
	// holds a selection of them: every SamplesEvery-th (in table order)
	// when SamplesEvery > 1, else the first, unless SamplesHow says how
	// they were drawn. 0: Samples holds them all.
	SamplesTotal, SamplesEvery int
	// SamplesHow, when set, says how the selection in Samples was drawn
	// (the explorer's note: "N of M scored answers, SamplesHow").
	SamplesHow string
}

// MaxExplorerBytes bounds the samples embedded in the HTML explorer (the
// run directory's tables/answers.csv and scored.parquet hold them all):
// the report stays under 25 MB.
const MaxExplorerBytes = 15 << 20

// WriteHTML writes one self-contained HTML file: ECharts inlined once,
// no external request of any kind, every text from the run escaped
// (html/template: a response holding <script> or an onerror attribute
// shows as text and runs nothing), chart options embedded as JSON in
// script context with <, > and & escaped. The page is written into w as
// the template runs (PrepareHTML).
func WriteHTML(w io.Writer, p Page) error {
	write, err := PrepareHTML(context.Background(), p, Options{})
	if err != nil {
		return err
	}
	return write(w)
}

// PrepareHTML reads all that the HTML report shows of p (each table's
// rows, the figures, the explorer) and returns the function that writes
// the page into w from them, reading p no more: it may run beside
// another reader of p's tables. It tells o.Progress when the step
// starts, and write when it ends.
func PrepareHTML(ctx context.Context, p Page, o Options) (write func(w io.Writer) error, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	step := o.Step("HTML report", 0)
	var tvs []tableView
	for i, t := range p.Tables {
		info := t.Info()
		if i < len(p.Infos) && p.Infos[i].Name != "" {
			info = p.Infos[i]
		}
		tvs = append(tvs, tableViewOf(t, info, p.MaxRows, fmt.Sprintf("table-%d", i)))
	}
	var fvs []figView
	for i, f := range p.Figures {
		fv, err := figViewOf(f, fmt.Sprintf("fig-%d", i))
		if err != nil {
			return nil, err
		}
		fvs = append(fvs, fv)
	}
	ex := explorerViewOf(p.Samples, p.SamplesTotal, p.SamplesEvery, p.SamplesHow, "ex")
	view := map[string]any{
		"Title": p.Title, "Simulated": p.Simulated, "Notes": p.Notes, "MethodNotes": p.MethodNotes, "Tables": tvs, "Figures": fvs, "Provenance": p.Provenance,
		"ECharts": template.JS(echartsJS), "Written": time.Now().UTC().Format(time.RFC3339), "Explorer": ex,
	}
	return func(w io.Writer) error {
		defer step.At(0, true)
		bw := bufio.NewWriterSize(w, 1<<20) // the template writes a few bytes at a time
		if err := page.ExecuteTemplate(bw, "report.html", view); err != nil {
			return err
		}
		return bw.Flush()
	}, nil
}

type cellView struct {
	Text string
	Sort string // the number a sortable column sorts by ("" for text)
	Num  bool
}

// headCell is a header cell: its text and title, its spans, and the
// column it starts at (Group: a column group's label).
type headCell struct {
	Text, Title      string
	Rowspan, Colspan int
	Col              int
	Group            bool
}

// headRows lays out cols' header: one row, or under groups the papers'
// two, a group's label over its sub-columns and the key columns down both.
func headRows(cols []tables.Column, groups []tables.ColumnGroup) [][]headCell {
	var top, sub []headCell
	for c, col := range cols {
		h := headCell{Text: col.Name, Title: col.Description, Rowspan: 1, Colspan: 1, Col: c}
		switch {
		case groups == nil:
			top = append(top, h)
		case c < groups[0].First:
			h.Rowspan = 2
			top = append(top, h)
		default:
			for _, g := range groups {
				if c == g.First {
					top = append(top, headCell{Text: g.Label, Rowspan: 1, Colspan: g.Last - g.First + 1, Col: c, Group: true})
				}
				if c >= g.First && c <= g.Last {
					h.Text, h.Title = tables.SubLabel(g.Subs[c-g.First]), col.Name+": "+col.Description
				}
			}
			sub = append(sub, h)
		}
	}
	if sub == nil {
		return [][]headCell{top}
	}
	return [][]headCell{top, sub}
}

// tableView is one table as the page shows it.
type tableView struct {
	ID        string
	Info      tables.Info
	Columns   []tables.Column
	Head      [][]headCell // headRows
	Rows      [][]cellView
	Shown     int
	Total     int
	Simulated bool
	Note      string // why the table has no rows ("" when it has some)
	Omitted   string // how many columns a brief table shows ("" when all)
}

// tableViewOf lays a table out for the page: its header, at most maxRows rows
// (0: all) of its shown columns, cells as displayCell writes them, texts cut.
func tableViewOf(t *tables.Table, info tables.Info, maxRows int, id string) tableView {
	n := t.Len()
	if maxRows > 0 {
		n = min(n, maxRows)
	}
	tv := tableView{ID: id, Info: info, Shown: n, Total: t.Len(), Simulated: t.Simulated}
	if t.Len() == 0 {
		tv.Note = noRows(t)
	}
	all := t.Columns()
	show := shownColumns(t, all, n)
	for _, c := range show {
		tv.Columns = append(tv.Columns, all[c])
	}
	groups := t.ColumnGroups()
	if len(show) < len(all) {
		tv.Omitted = fmt.Sprintf("%d of its %d columns shown; the CSV file and the workbook hold every column", len(show), len(all))
		groups = nil // a brief table shows one header row
	}
	tv.Head = headRows(tv.Columns, groups)
	var row []any
	limit := MaxTableText
	if t.Name == "answers" {
		limit = MaxAnswerText
	}
	for r := range n {
		row = t.Row(r, row)
		cells := make([]cellView, len(show))
		for i, c := range show {
			var v any
			if c < len(row) {
				v = row[c]
			}
			cells[i] = displayCell(tv.Columns[i], v)
			cells[i].Text = CutText(cells[i].Text, limit, fullTextIn(t.Name, t.Header, c))
		}
		tv.Rows = append(tv.Rows, cells)
	}
	return tv
}

// noRows says why t has no rows: "No rows." or "No rows: <its Note>."
func noRows(t *tables.Table) string {
	if t.Note == "" {
		return "No rows."
	}
	return "No rows: " + strings.TrimSuffix(t.Note, ".") + "."
}

// shownColumns are the columns the page shows of t's first n rows: all, or the
// brief ones holding a value in some row (all brief ones when none does).
func shownColumns(t *tables.Table, all []tables.Column, n int) []int {
	var show []int
	for c, col := range all {
		if t.Brief == nil || slices.Contains(t.Brief, col.Name) {
			show = append(show, c)
		}
	}
	if t.Brief == nil {
		return show
	}
	held := make([]bool, len(all))
	var row []any
	for r := range n {
		row = t.Row(r, row)
		for _, c := range show {
			if c < len(row) && tables.FormatCell(row[c]) != "" { // not nil, empty text or NaN
				held[c] = true
			}
		}
	}
	kept := slices.DeleteFunc(slices.Clone(show), func(c int) bool { return !held[c] })
	if len(kept) == 0 {
		return show
	}
	return kept
}

// displayCell writes a cell for a reader: numbers by their column's kind
// (rates with three decimals, p-values as tables.FormatP, whole counts
// without decimals), NaN as empty; the exact value stays in Sort.
func displayCell(col tables.Column, v any) cellView {
	x, ok := v.(float64)
	if !ok {
		if i, isInt := v.(int); isInt {
			return cellView{Text: strconv.Itoa(i), Sort: strconv.Itoa(i), Num: true}
		}
		return cellView{Text: tables.FormatCell(v), Num: col.Numeric()}
	}
	cv := cellView{Num: true, Sort: strconv.FormatFloat(x, 'g', -1, 64)}
	switch {
	case math.IsNaN(x):
		cv.Text, cv.Sort = "", ""
	case col.Kind == tables.KindPValue:
		cv.Text = tables.FormatP(x)
	case x == 0:
		cv.Text = "0"
	case col.Kind == tables.KindMillis:
		cv.Text = strconv.FormatFloat(x, 'f', 1, 64)
	case (col.Kind == tables.KindCount || col.Kind == tables.KindNone || col.Kind == tables.KindStatistic) && whole(x):
		cv.Text = strconv.FormatFloat(x, 'f', 0, 64)
	case math.Abs(x) < 1e-3:
		cv.Text = strconv.FormatFloat(x, 'e', 2, 64)
	default:
		cv.Text = strconv.FormatFloat(x, 'f', 3, 64)
	}
	return cv
}

// whole reports whether x is an integer a float64 holds exactly.
func whole(x float64) bool {
	return x == math.Trunc(x) && math.Abs(x) < 1<<53
}

// figView is one figure as the page draws it.
type figView struct {
	ID         string
	Caption    string
	Mirrors    string
	Option     any
	Height     int          // pixels: a figure with nothing to draw (no series) is a short one
	Image      template.URL // the figure drawn (a data URL) shown until the script draws it, or ""
	ImageWidth int          // its width in CSS pixels
}

func figViewOf(f Figure, id string) (figView, error) {
	var o any
	if err := json.Unmarshal(f.Option, &o); err != nil {
		return figView{}, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	h := 460
	if m, ok := o.(map[string]any); ok && m["series"] == nil {
		h = 200
	}
	return figView{ID: id, Caption: f.Caption, Mirrors: f.Mirrors, Option: o, Height: h}, nil
}

// explorerView is the sample explorer: its samples, its note and its ids' prefix.
type explorerView struct {
	ID   string
	Data *explorer
	Note string
}

// explorer is the samples the page embeds: column names, how each is
// shown (fields), and rows of plain values.
type explorer struct {
	Columns []string        `json:"columns"`
	Fields  []explorerField `json:"fields"`
	Rows    [][]any         `json:"rows"`
}

// explorerField is how the explorer shows one column of its samples.
type explorerField struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Filter      bool   `json:"filter,omitempty"`    // a category column: a select of its values
	Criterion   bool   `json:"criterion,omitempty"` // a bool column both true and false: the criterion select offers it
	List        bool   `json:"list,omitempty"`      // a column of the row list: not long text, not empty or false throughout
	Search      bool   `json:"search,omitempty"`    // a text column the search box looks in
}

// explorerLongText is the length above which a text shows only in details.
const explorerLongText = 80

// explorerFields says how the explorer shows each of t's columns.
func explorerFields(t *tables.Table, rows [][]any) []explorerField {
	cols := t.Columns()
	out := make([]explorerField, len(cols))
	for c, col := range cols {
		f := explorerField{Name: col.Name, Type: string(col.Type), Description: col.Description,
			Filter: col.Type == tables.String && col.Kind == tables.KindCategory}
		f.Search = col.Type == tables.String && !f.Filter
		long, informative, falsy := false, false, false
		for _, r := range rows {
			if c >= len(r) {
				continue
			}
			switch v := r[c].(type) {
			case string:
				informative = informative || v != ""
				long = long || (!f.Filter && utf8.RuneCountInString(v) > explorerLongText)
			case bool:
				informative, falsy = informative || v, falsy || !v
			case nil:
			default:
				informative = true
			}
		}
		f.List = informative && !long
		f.Criterion = col.Type == tables.Bool && informative && falsy
		out[c] = f
	}
	return out
}

// explorerViewOf keeps the samples that fit in MaxExplorerBytes (every
// k-th when not all do), their long texts cut, and says how many it kept
// of the run's total and how they were chosen; nil for no samples.
func explorerViewOf(t *tables.Table, total, every int, how, id string) *explorerView {
	if t == nil || len(t.Rows) == 0 {
		return nil
	}
	if total == 0 {
		total, every = len(t.Rows), 1
	}
	sizes := make([]int, len(t.Rows))
	rows := make([][]any, len(t.Rows)) // t's rows, their long texts cut
	sum := 0
	for i, r := range t.Rows {
		rows[i] = CutSampleTexts(t.Header, r, "")
		b, _ := json.Marshal(rows[i])
		sizes[i] = len(b) + 1
		sum += sizes[i]
	}
	step := max(1, (sum+MaxExplorerBytes-1)/MaxExplorerBytes)
	e := &explorer{Columns: t.Header}
	size := 0
	for i := 0; i < len(t.Rows); i += step {
		if size+sizes[i] > MaxExplorerBytes {
			break
		}
		size += sizes[i]
		e.Rows = append(e.Rows, rows[i])
	}
	e.Fields = explorerFields(t, e.Rows)
	kept := len(e.Rows)
	if kept == total {
		return &explorerView{id, e, fmt.Sprintf("All %d scored answers: filter them, search their text, and click one for its prompt, raw response and verdicts.", total)}
	}
	if how != "" {
		if step > 1 {
			how += fmt.Sprintf(", then every %s of those", ordinal(step))
		}
		return &explorerView{id, e, fmt.Sprintf("Showing %d of %d scored answers: %s, so that the page stays under 25 MB (all %d are in tables/answers.csv and scored.parquet, with the run's records, records-*.parquet and records.jsonl, holding every request and response): filter them, search their text, click one for its details.", kept, total, how, total)}
	}
	how = "the first"
	switch k := max(every, 1) * step; {
	case k > 1 && (every > 1 || total == len(t.Rows)):
		how = fmt.Sprintf("every %s (in table order)", ordinal(k))
	case step > 1:
		how = fmt.Sprintf("every %s of the first %d", ordinal(step), len(t.Rows))
	}
	return &explorerView{id, e, fmt.Sprintf("%d of %d scored answers, %s, so that the page stays under 25 MB (tables/answers.csv, scored.parquet and the run's records hold them all): filter them, search their text, click one for its details.", kept, total, how)}
}

// CutSampleTexts returns row, a row of a samples table with columns
// header, with each text over MaxSampleText characters cut (CutText),
// its note naming where the full text is (sampleFullText; key is the
// record's key, or "" when not known): row itself when it cuts nothing,
// else a copy. The explorer cuts the rows it is given so.
func CutSampleTexts(header []string, row []any, key string) []any {
	out := row
	for c, v := range row {
		s, ok := v.(string)
		if !ok || len(s) <= MaxSampleText {
			continue
		}
		cut := CutText(s, MaxSampleText, sampleFullText(header, c, key))
		if cut == s {
			continue
		}
		if len(out) > 0 && &out[0] == &row[0] {
			out = slices.Clone(row)
		}
		out[c] = cut
	}
	return out
}

// sampleFullText is where a cut text of samples column c is in full: the
// records (and the record's key when known) for the prompt, response, error.
func sampleFullText(header []string, c int, key string) string {
	where := fullTextIn("samples", header, c)
	if where != recordsFile {
		return where
	}
	where = "the run's records (records.jsonl, or a sealed records-N.parquet)"
	if key != "" {
		where += ", record key " + key
	}
	return where
}

// ordinal writes k as "2nd", "3rd", "11th", "21st".
func ordinal(k int) string {
	suffix := "th"
	if d := k % 10; d >= 1 && d <= 3 && (k%100 < 11 || k%100 > 13) {
		suffix = [...]string{1: "st", 2: "nd", 3: "rd"}[d]
	}
	return fmt.Sprintf("%d%s", k, suffix)
}

//go:embed templates/*.html
var templateFiles embed.FS

// page is the report (report.html): the fragments a report page and a
// notebook cell share (a sortable table, a figure, the explorer, each id
// prefixed by the view's) inside one self-contained document.
var page = template.Must(template.ParseFS(templateFiles, "templates/fragments.html", "templates/report.html"))

// Entry is one run of an index page (and of the index workbook).
type Entry struct {
	Name, Status, Report, Workbook string
	// About is one line on what the run is (its experiment's description
	// or its study's, and its dataset), shown beside its name.
	About           string
	Records, Failed int
	Simulated       bool
	// Tables are the run's headline tables the index workbook copies
	// (WriteIndexXLSX); the HTML index links the run's report instead.
	Tables []*tables.Table
}

// WriteIndex writes a small self-contained page linking a set of runs'
// reports (make demo's out/demo/report.html), with a SIMULATED banner when
// any run was simulated.
func WriteIndex(w io.Writer, title string, entries []Entry) error {
	sim := slices.ContainsFunc(entries, func(e Entry) bool { return e.Simulated })
	return index.Execute(w, map[string]any{"Title": title, "Entries": entries, "Simulated": sim, "Written": time.Now().UTC().Format(time.RFC3339)})
}

var index = template.Must(template.ParseFS(templateFiles, "templates/index.html"))
