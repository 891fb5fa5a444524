package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/bhashalab/bhasha/analysis/tables"
)

//go:embed assets/echarts.min.js
var echartsJS string

// Page is what an HTML report shows.
type Page struct {
	Title     string
	Simulated bool // a banner on the page says SIMULATED
	Notes     []string
	Tables    []*tables.Table
	Infos     []tables.Info // one per table, same order (description, what it mirrors)
	Figures   []Figure
	// Provenance is shown as name/value pairs (models, servers, decoding,
	// inputs and their hashes, tool version, dates, options in force).
	Provenance [][2]string
	// MaxRows bounds the rows shown per table (the CSV files hold them
	// all); 0 shows every row.
	MaxRows int
	// Samples, when set, feeds the HTML sample explorer and the
	// workbook's samples sheet (one row per scored answer).
	Samples *tables.Table
	// SamplesTotal is the run's number of scored answers when Samples
	// holds a selection of them: every SamplesEvery-th (in table order)
	// when SamplesEvery > 1, else the first. 0: Samples holds them all.
	SamplesTotal, SamplesEvery int
}

// MaxExplorerBytes bounds the samples embedded in the HTML explorer (the
// workbook holds them all): the report stays under 25 MB.
const MaxExplorerBytes = 15 << 20

// WriteHTML writes one self-contained HTML file: ECharts inlined once,
// no external request of any kind, every text from the run escaped
// (html/template: a response holding <script> or an onerror attribute
// shows as text and runs nothing), chart options embedded as JSON in
// script context with <, > and & escaped.
func WriteHTML(w io.Writer, p Page) error {
	type cellView struct {
		Text string
		Num  bool
	}
	type headCell struct {
		Text, Title      string
		Rowspan, Colspan int
	}
	type tableView struct {
		Info    tables.Info
		Columns []tables.Column
		// Head is the header's rows: one, or two under column groups
		// (the group spanning its sub-columns, key columns down both).
		Head  [][]headCell
		Rows  [][]cellView
		Shown int
		Total int
	}
	type figView struct {
		ID      string
		Caption string
		Mirrors string
		Option  any
	}
	var tvs []tableView
	for i, t := range p.Tables {
		tv := tableView{Columns: t.Columns(), Total: len(t.Rows)}
		groups := t.ColumnGroups()
		top := make([]headCell, 0, len(tv.Columns))
		var sub []headCell
		for c, col := range tv.Columns {
			h := headCell{Text: col.Name, Title: col.Description, Rowspan: 1, Colspan: 1}
			if groups == nil {
				top = append(top, h)
				continue
			}
			if c < groups[0].First {
				h.Rowspan = 2
				top = append(top, h)
				continue
			}
			for _, g := range groups {
				if c == g.First {
					top = append(top, headCell{Text: g.Label, Rowspan: 1, Colspan: g.Last - g.First + 1})
				}
				if c >= g.First && c <= g.Last {
					h.Text, h.Title = tables.SubLabel(g.Subs[c-g.First]), col.Name+": "+col.Description
				}
			}
			sub = append(sub, h)
		}
		tv.Head = [][]headCell{top}
		if sub != nil {
			tv.Head = append(tv.Head, sub)
		}
		if i < len(p.Infos) {
			tv.Info = p.Infos[i]
		}
		if tv.Info.Name == "" {
			tv.Info = tables.Info{Name: t.Name, Description: t.Description}
		}
		n := len(t.Rows)
		if p.MaxRows > 0 && n > p.MaxRows {
			n = p.MaxRows
		}
		for r := range n {
			cells := make([]cellView, len(t.Header))
			for c := range t.Header {
				cells[c] = cellView{Text: t.Text(r, c), Num: tv.Columns[c].Numeric()}
			}
			tv.Rows = append(tv.Rows, cells)
		}
		tv.Shown = n
		tvs = append(tvs, tv)
	}
	var fvs []figView
	for i, f := range p.Figures {
		var o any
		if err := json.Unmarshal(f.Option, &o); err != nil {
			return fmt.Errorf("figure %s: %w", f.Name, err)
		}
		fvs = append(fvs, figView{ID: fmt.Sprintf("fig-%d", i), Caption: f.Caption, Mirrors: f.Mirrors, Option: o})
	}
	explorer, note := explorerData(p.Samples, p.SamplesTotal, p.SamplesEvery)
	return page.Execute(w, map[string]any{
		"Title": p.Title, "Simulated": p.Simulated, "Notes": p.Notes, "Tables": tvs, "Figures": fvs, "Provenance": p.Provenance,
		"ECharts": template.JS(echartsJS), "Written": time.Now().UTC().Format(time.RFC3339), "Explorer": explorer, "ExplorerNote": note,
	})
}

// explorer is the samples the page embeds: column names and rows of
// plain values (the page's script shows them with textContent only).
type explorer struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// explorerData keeps the samples that fit in MaxExplorerBytes, spread
// evenly over those given (every k-th when they do not all fit, so every
// model, language and strategy still appears), and says how many it kept
// of the run's total and how they were chosen.
func explorerData(t *tables.Table, total, every int) (*explorer, string) {
	if t == nil || len(t.Rows) == 0 {
		return nil, ""
	}
	if total == 0 {
		total, every = len(t.Rows), 1
	}
	sizes := make([]int, len(t.Rows))
	sum := 0
	for i, r := range t.Rows {
		b, _ := json.Marshal(r)
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
		e.Rows = append(e.Rows, t.Rows[i])
	}
	kept := len(e.Rows)
	if kept == total {
		return e, fmt.Sprintf("All %d scored answers: filter them, search their text, and click one for its prompt, raw response and verdicts.", total)
	}
	how := "the first"
	switch k := max(every, 1) * step; {
	case k > 1 && (every > 1 || total == len(t.Rows)):
		how = fmt.Sprintf("every %s (in table order)", ordinal(k))
	case step > 1:
		how = fmt.Sprintf("every %s of the first %d", ordinal(step), len(t.Rows))
	}
	return e, fmt.Sprintf("%d of %d scored answers, %s, so that the page stays under 25 MB (the workbook's samples sheet and records.jsonl hold them all): filter them, search their text, click one for its details.", kept, total, how)
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

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
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
.scroll{overflow-x:auto;max-width:100%}
.chart{width:100%;max-width:1100px;height:460px}
.caption{font-size:.9em;color:#444;margin-bottom:2em}
.note{background:#fff8e1;padding:.4em .8em;margin:.3em 0}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:bold}
</style>
<script>{{.ECharts}}</script>
</head><body>
{{if .Simulated}}<div class="banner" id="simulated-banner">SIMULATED: these answers came from Bhasha's simulated models, not from a real LLM.</div>{{end}}
<h1>{{.Title}}</h1>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
<h2>Figures</h2>
{{range .Figures}}<div class="chart" id="{{.ID}}"></div>
<p class="caption">{{.Caption}}{{if .Mirrors}} (mirrors {{.Mirrors}}){{end}}</p>
<script>(function(){var el=document.getElementById({{.ID}});var c=echarts.init(el,null,{renderer:"canvas"});c.setOption({{.Option}});})();</script>
{{else}}<p>No figure for this study yet.</p>{{end}}
<h2>Tables</h2>
{{range .Tables}}<h3 id="table-{{.Info.Name}}">{{.Info.Name}}</h3>
<p>{{.Info.Description}}{{if .Info.Mirrors}} (mirrors {{.Info.Mirrors}}){{end}}{{if lt .Shown .Total}} — the first {{.Shown}} of {{.Total}} rows; the CSV file holds them all{{end}}</p>
<div class="scroll"><table><thead>{{range .Head}}<tr>{{range .}}<th title="{{.Title}}"{{if gt .Rowspan 1}} rowspan="{{.Rowspan}}"{{end}}{{if gt .Colspan 1}} colspan="{{.Colspan}}"{{end}}>{{.Text}}</th>{{end}}</tr>{{end}}</thead><tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Num}} class="num"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{end}}
{{if .Explorer}}<h2 id="samples">Samples</h2>
<p>{{.ExplorerNote}}</p>
<div id="explorer">
<label>model <select data-field="model"></select></label>
<label>language <select data-field="language"></select></label>
<label>form <select data-field="form"></select></label>
<label>strategy <select data-field="strategy"></select></label>
<label>condition <select data-field="condition"></select></label>
<label>verdict <select data-field="verdict"><option value="">all</option><option>correct</option><option>wrong</option><option>failed</option></select></label>
<label>search <input type="search" id="ex-search" placeholder="prompt, response, answer, gold"></label>
<p id="ex-count"></p>
<table id="ex-table"><thead><tr><th>model</th><th>item</th><th>language</th><th>form</th><th>strategy</th><th>condition</th><th>answer</th><th>gold</th><th>correct</th><th>script</th><th>judge</th></tr></thead><tbody></tbody></table>
<p><button id="ex-prev">previous</button> <button id="ex-next">next</button></p>
<pre id="ex-detail"></pre>
</div>
<script type="application/json" id="ex-data">{{.Explorer}}</script>
<script>(function(){
var data=JSON.parse(document.getElementById("ex-data").textContent);
var cols=data.columns, rows=data.rows, col={};cols.forEach(function(c,i){col[c]=i;});
function val(r,c){var i=col[c];return i===undefined||r[i]===null?"":String(r[i]);}
var selects=document.querySelectorAll("#explorer select[data-field]");
selects.forEach(function(s){var f=s.getAttribute("data-field");if(f==="verdict")return;var seen={};rows.forEach(function(r){seen[val(r,f)]=1;});
 var o=document.createElement("option");o.value="";o.textContent="all";s.appendChild(o);
 Object.keys(seen).sort().forEach(function(v){var o=document.createElement("option");o.value=v;o.textContent=v===""?"(none)":v;s.appendChild(o);});});
var page=0,per=100,shown=[];
function matches(r){var ok=true;selects.forEach(function(s){var f=s.getAttribute("data-field"),v=s.value;if(!v)return;
 if(f==="verdict"){var failed=val(r,"failed")==="true",corr=val(r,"correct")==="true";
  if(v==="failed"&&!failed||v==="correct"&&(failed||!corr)||v==="wrong"&&(failed||corr))ok=false;}
 else if(val(r,f)!==v)ok=false;});
 var q=document.getElementById("ex-search").value.toLowerCase();
 if(q&&["prompt","response","answer","gold"].every(function(c){return val(r,c).toLowerCase().indexOf(q)<0;}))ok=false;return ok;}
function render(){shown=rows.filter(matches);var tb=document.querySelector("#ex-table tbody");tb.textContent="";
 shown.slice(page*per,page*per+per).forEach(function(r){var tr=document.createElement("tr");
  ["model","item","language","form","strategy","condition","answer","gold","correct","script","judge"].forEach(function(c){var td=document.createElement("td");td.textContent=val(r,c);tr.appendChild(td);});
  tr.addEventListener("click",function(){var d=cols.map(function(c){return c+": "+val(r,c);}).join("\n");document.getElementById("ex-detail").textContent=d;});
  tb.appendChild(tr);});
 document.getElementById("ex-count").textContent=shown.length+" of "+rows.length+" samples; page "+(page+1)+" of "+Math.max(1,Math.ceil(shown.length/per))+" (click a row for its prompt, response and verdicts)";}
selects.forEach(function(s){s.addEventListener("change",function(){page=0;render();});});
document.getElementById("ex-search").addEventListener("input",function(){page=0;render();});
document.getElementById("ex-prev").addEventListener("click",function(){if(page>0){page--;render();}});
document.getElementById("ex-next").addEventListener("click",function(){if((page+1)*per<shown.length){page++;render();}});
render();})();</script>
{{end}}
<h2>Provenance</h2>
<dl>{{range .Provenance}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}<dt>written</dt><dd>{{.Written}}</dd></dl>
</body></html>
`))

// Entry is one run of an index page (and of the index workbook).
type Entry struct {
	Name, Status, Report, Workbook string
	Records, Failed                int
	Simulated                      bool
	// Tables are the run's headline tables the index workbook copies
	// (WriteIndexXLSX); the HTML index links the run's report instead.
	Tables []*tables.Table
}

// WriteIndex writes a small self-contained page linking a set of runs'
// reports (make demo's out/demo/report.html), with a SIMULATED banner when
// any run was simulated.
func WriteIndex(w io.Writer, title string, entries []Entry) error {
	sim := false
	for _, e := range entries {
		sim = sim || e.Simulated
	}
	return index.Execute(w, map[string]any{"Title": title, "Entries": entries, "Simulated": sim, "Written": time.Now().UTC().Format(time.RFC3339)})
}

var index = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{{.Title}}</title>
<style>body{font-family:"Noto Sans",sans-serif;margin:2em}.banner{background:#D55E00;color:#fff;padding:.6em 1em;font-weight:bold}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.3em .6em}td.num{text-align:right}</style></head><body>
{{if .Simulated}}<div class="banner">SIMULATED: these answers came from Bhasha's simulated models, not from a real LLM.</div>{{end}}
<h1>{{.Title}}</h1>
<table><thead><tr><th>experiment</th><th>status</th><th>records</th><th>failed</th><th>report</th><th>workbook</th></tr></thead><tbody>
{{range .Entries}}<tr><td>{{.Name}}{{if .Simulated}} (SIMULATED){{end}}</td><td>{{.Status}}</td><td class="num">{{.Records}}</td><td class="num">{{.Failed}}</td>
<td><a href="{{.Report}}">{{.Report}}</a></td><td><a href="{{.Workbook}}">{{.Workbook}}</a></td></tr>
{{end}}</tbody></table><p>written {{.Written}}</p></body></html>
`))
