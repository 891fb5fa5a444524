package report

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
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
	Infos       []tables.Info // one per table, same order (description, what it mirrors)
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
		if err := page.Execute(bw, view); err != nil {
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

// tableViewOf lays a table out for the page: its header (headRows), at
// most maxRows rows (0: all) of its shown columns, cells as displayCell
// writes them, long texts cut.
func tableViewOf(t *tables.Table, info tables.Info, maxRows int, id string) tableView {
	tv := tableView{ID: id, Info: info, Total: t.Len(), Simulated: t.Simulated}
	n := t.Len()
	if maxRows > 0 && n > maxRows {
		n = maxRows
	}
	all := t.Columns()
	show := shownColumns(t, all, n)
	for _, c := range show {
		tv.Columns = append(tv.Columns, all[c])
	}
	if len(show) < len(all) {
		tv.Omitted = fmt.Sprintf("%d of its %d columns shown; the CSV file and the workbook hold every column", len(show), len(all))
	}
	if t.Len() == 0 {
		tv.Note = "No rows"
		if t.Note != "" {
			tv.Note += ": " + t.Note
		}
		tv.Note += "."
	}
	groups := t.ColumnGroups()
	if len(show) < len(all) {
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
			cells[i].Text = CutText(cells[i].Text, limit, fullTextAt(t, c))
		}
		tv.Rows = append(tv.Rows, cells)
	}
	tv.Shown = n
	return tv
}

// shownColumns are the indexes of the columns the page shows of t's
// first n rows: all, or t's brief columns holding a value in some row
// (every brief column when none does).
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
			if c < len(row) && !blank(row[c]) {
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

// blank reports whether a cell holds no value: nil, empty text or NaN.
func blank(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return math.IsNaN(x)
	}
	return false
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
	step := 1
	if sum > MaxExplorerBytes {
		step = (sum + MaxExplorerBytes - 1) / MaxExplorerBytes
	}
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
// records (with the record's key when known) for the prompt, the response
// and the error.
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
	if k%100 < 11 || k%100 > 13 {
		switch k % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", k, suffix)
}

// fragments are the parts a report page and a notebook cell share: a
// sortable table, a figure, the explorer, each id prefixed by the view's.
const fragments = `
{{define "table"}}<div class="scroll"><table id="{{.ID}}" class="bh-table"><thead>{{range .Head}}<tr>{{range .}}<th title="{{.Title}}"{{if gt .Rowspan 1}} rowspan="{{.Rowspan}}"{{end}}{{if gt .Colspan 1}} colspan="{{.Colspan}}"{{end}}>{{.Text}}</th>{{end}}</tr>{{end}}</thead><tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Num}} class="num"{{end}}{{if .Sort}} data-v="{{.Sort}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
<script>(function(){var t=document.getElementById({{.ID}});if(!t)return;var hs=t.tHead.rows,order=[],idx=0,j=0;
for(var i=0;i<hs[0].cells.length;i++){var h=hs[0].cells[i];
 if(hs.length===1||h.rowSpan>1){order.push([h,idx++]);continue;}
 for(var s=0;s<h.colSpan;s++){order.push([hs[1].cells[j++],idx++]);}}
order.forEach(function(p){var h=p[0],c=p[1],asc=true;h.style.cursor="pointer";h.addEventListener("click",function(){
 var rows=Array.prototype.slice.call(t.tBodies[0].rows);rows.sort(function(a,b){var x=a.cells[c],y=b.cells[c];
  var vx=x.getAttribute("data-v"),vy=y.getAttribute("data-v");var d=(vx!==null&&vy!==null)?(parseFloat(vx)-parseFloat(vy)):x.textContent.localeCompare(y.textContent);
  return asc?d:-d;});asc=!asc;rows.forEach(function(r){t.tBodies[0].appendChild(r);});});});})();</script>{{end}}
{{define "tablecard"}}<div class="bh-fragment" data-table="{{.Info.Name}}" style="max-height:28em;overflow:auto"><p><b>{{.Info.Name}}</b>{{if .Simulated}} <span style="color:#D55E00;font-weight:bold">SIMULATED</span>{{end}}{{if .Info.Description}}: {{.Info.Description}}{{end}}{{if .Info.Mirrors}} (mirrors {{.Info.Mirrors}}){{end}} — {{.Total}} rows{{if lt .Shown .Total}}, the first {{.Shown}} shown{{end}}</p>
{{if .Note}}<p class="note" style="background:#fff8e1;padding:.4em .8em">{{.Note}}</p>{{end}}{{if .Omitted}}<p>{{.Omitted}}.</p>{{end}}{{template "table" .}}</div>{{end}}
{{define "figure"}}<div class="chart" id="{{.ID}}" style="width:100%;max-width:1100px;height:{{.Height}}px">{{if .Image}}<img src="{{.Image}}" alt="{{.Caption}}" style="width:100%;max-width:{{.ImageWidth}}px;height:auto">{{end}}</div>
<p class="caption">{{.Caption}}{{if .Mirrors}} (mirrors {{.Mirrors}}){{end}}</p>
<script>(function(){var el=document.getElementById({{.ID}});if(!window.echarts){if(!el.firstChild)el.textContent="ECharts is not loaded on this page: run the cell that loads it (kernel.ECharts()) again.";return;}
el.textContent="";var c=echarts.init(el,null,{renderer:"canvas"});c.setOption({{.Option}});})();</script>{{end}}
{{/* the explorer aligns its cells itself (inline styles: text left, numbers right, as the report's tables), so that a notebook's style, which right-aligns every cell, does not */}}
{{define "explorer"}}<p>{{.Note}}</p>
<div id="{{.ID}}-explorer">
<span id="{{.ID}}-filters"></span>
<label>search <input type="search" id="{{.ID}}-search"></label>
<p id="{{.ID}}-count"></p>
<div class="scroll"><table id="{{.ID}}-table"><thead><tr></tr></thead><tbody></tbody></table></div>
<p><button id="{{.ID}}-prev">previous</button> <button id="{{.ID}}-next">next</button></p>
<pre id="{{.ID}}-detail" style="white-space:pre-wrap;overflow-wrap:anywhere"></pre>
</div>
<script type="application/json" id="{{.ID}}-data">{{.Data}}</script>
<script>(function(){var P={{.ID}};function $(s){return document.getElementById(P+"-"+s);}
var data=JSON.parse($("data").textContent);
var cols=data.columns,rows=data.rows,fields=data.fields||[],col={};cols.forEach(function(c,i){col[c]=i;});
function val(r,c){var i=col[c];return i===undefined||r[i]===null||r[i]===undefined?"":String(r[i]);}
function names(p){return fields.filter(p).map(function(f){return f.name;});}
var listed=names(function(f){return f.list;}),searched=names(function(f){return f.search;}),criteria=fields.filter(function(f){return f.criterion;});
function option(s,v,text){var o=document.createElement("option");o.value=v;o.textContent=text;s.appendChild(o);}
function labelled(text,s){var l=document.createElement("label");l.textContent=text+" ";l.appendChild(s);$("filters").appendChild(l);$("filters").appendChild(document.createTextNode(" "));}
var selects=[];
fields.forEach(function(f){if(!f.filter)return;var seen={};rows.forEach(function(r){seen[val(r,f.name)]=1;});
 var s=document.createElement("select");s.setAttribute("data-field",f.name);s.title=f.description||"";option(s,"","all");
 Object.keys(seen).sort().forEach(function(v){option(s,v,v===""?"(none)":v);});selects.push(s);labelled(f.name,s);});
var crit=null;
if(criteria.length){crit=document.createElement("select");option(crit,"","all");
 criteria.forEach(function(f){option(crit,"+"+f.name,f.name);option(crit,"-"+f.name,"not "+f.name);});labelled("criterion",crit);}
$("search").placeholder=searched.join(", ");
var head=$("table").tHead.rows[0];
listed.forEach(function(c,i){var th=document.createElement("th");th.textContent=c;th.style.textAlign="left";var f=fields.filter(function(f){return f.name===c;})[0];th.title=f.description||"";head.appendChild(th);});
var page=0,per=100,shown=[];
function matches(r){var ok=true;selects.forEach(function(s){var v=s.value;if(v&&val(r,s.getAttribute("data-field"))!==v)ok=false;});
 if(crit&&crit.value){var want=crit.value.charAt(0)==="+";if((val(r,crit.value.slice(1))==="true")!==want)ok=false;}
 var q=$("search").value.toLowerCase();
 if(q&&searched.every(function(c){return val(r,c).toLowerCase().indexOf(q)<0;}))ok=false;return ok;}
function render(){shown=rows.filter(matches);var tb=$("table").tBodies[0];tb.textContent="";
 shown.slice(page*per,page*per+per).forEach(function(r){var tr=document.createElement("tr");
  listed.forEach(function(c){var td=document.createElement("td");td.textContent=val(r,c);
   var num=typeof r[col[c]]==="number";td.style.textAlign=num?"right":"left";if(num)td.style.fontVariantNumeric="tabular-nums";tr.appendChild(td);});
  tr.addEventListener("click",function(){var d=cols.map(function(c){return c+": "+val(r,c);}).join("\n");$("detail").textContent=d;});
  tb.appendChild(tr);});
 $("count").textContent=shown.length+" of "+rows.length+" samples; page "+(page+1)+" of "+Math.max(1,Math.ceil(shown.length/per))+" (click a row for every field: prompt, response, criteria and verdicts)";}
selects.concat(crit?[crit]:[]).forEach(function(s){s.addEventListener("change",function(){page=0;render();});});
$("search").addEventListener("input",function(){page=0;render();});
$("prev").addEventListener("click",function(){if(page>0){page--;render();}});
$("next").addEventListener("click",function(){if((page+1)*per<shown.length){page++;render();}});
render();})();</script>{{end}}
`

// page is the report: the fragments inside one self-contained document.
var page = template.Must(template.Must(template.New("report").Parse(fragments)).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>{{.Title}}{{if .Simulated}} (SIMULATED){{end}}</title>
<style>
body{font-family:"Noto Sans","Noto Sans Devanagari","Noto Sans Bengali","Noto Sans Tamil",sans-serif;margin:0 2em 2em;color:#222}
.banner{position:sticky;top:0;background:#D55E00;color:#fff;padding:.6em 1em;font-weight:bold;z-index:10}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.2em .5em;vertical-align:top}
th{background:#f2f2f2}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow:auto;max-width:100%;max-height:80vh}
.scroll thead{position:sticky;top:0;z-index:1}
.chart{width:100%;max-width:1100px;height:460px}
.caption{font-size:.9em;color:#444;margin-bottom:2em}
.note{background:#fff8e1;padding:.4em .8em;margin:.3em 0}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:bold}dd{margin:0;overflow-wrap:anywhere}
.toc{margin:.8em 0;line-height:1.6}
</style>
<script>{{.ECharts}}</script>
</head><body>
{{if .Simulated}}<div class="banner" id="simulated-banner">SIMULATED: these answers came from Bhasha's simulated models, not from a real LLM.</div>{{end}}
<h1>{{.Title}}</h1>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
<nav class="toc"><a href="#figures">Figures</a> ({{len .Figures}}) · Tables: {{range $i, $t := .Tables}}{{if $i}}, {{end}}<a href="#table-{{$t.Info.Name}}">{{$t.Info.Name}}</a>{{end}}{{if .Explorer}} · <a href="#samples">Samples</a>{{end}}{{if .MethodNotes}} · <a href="#method-notes">Method notes</a> ({{len .MethodNotes}}: how these numbers were made){{end}} · <a href="#provenance">Provenance</a></nav>
<h2 id="figures">Figures</h2>
{{range .Figures}}{{template "figure" .}}
{{else}}<p>No figure for this study yet.</p>{{end}}
<h2 id="tables">Tables</h2>
{{range .Tables}}<h3 id="table-{{.Info.Name}}">{{.Info.Name}}</h3>
<p>{{.Info.Description}}{{if .Info.Mirrors}} (mirrors {{.Info.Mirrors}}){{end}}{{if lt .Shown .Total}} — the first {{.Shown}} of {{.Total}} rows; the CSV file holds them all{{end}}</p>
{{if .Note}}<p class="note table-note">{{.Note}}</p>{{end}}{{if .Omitted}}<p class="table-omitted">{{.Omitted}}.</p>{{end}}{{template "table" .}}
{{end}}
{{if .Explorer}}<h2 id="samples">Samples</h2>
{{template "explorer" .Explorer}}
{{end}}
{{if .MethodNotes}}<h2 id="method-notes">Method notes</h2>
{{range .MethodNotes}}<p class="note method-note">{{.}}</p>
{{end}}{{end}}
<h2 id="provenance">Provenance</h2>
<dl>{{range .Provenance}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}<dt>written</dt><dd>{{.Written}}</dd></dl>
</body></html>
`))

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

var index = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{{.Title}}</title>
<style>body{font-family:"Noto Sans",sans-serif;margin:2em}.banner{background:#D55E00;color:#fff;padding:.6em 1em;font-weight:bold}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.3em .6em}td.num{text-align:right}td.about{max-width:36em}</style></head><body>
{{if .Simulated}}<div class="banner">SIMULATED: these answers came from Bhasha's simulated models, not from a real LLM.</div>{{end}}
<h1>{{.Title}}</h1>
<table><thead><tr><th>experiment</th><th>what it is</th><th>status</th><th>records</th><th>failed</th><th>report</th><th>workbook</th></tr></thead><tbody>
{{range .Entries}}<tr><td>{{.Name}}{{if .Simulated}} (SIMULATED){{end}}</td><td class="about">{{.About}}</td><td>{{.Status}}</td><td class="num">{{.Records}}</td><td class="num">{{.Failed}}</td>
<td><a href="{{.Report}}">{{.Report}}</a></td><td><a href="{{.Workbook}}">{{.Workbook}}</a></td></tr>
{{end}}</tbody></table><p>written {{.Written}}</p></body></html>
`))
