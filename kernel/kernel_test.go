package kernel

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/internal/browsertest"
	"github.com/bhashalab/bhasha/report"
)

func TestProgressHTML(t *testing.T) {
	for _, tc := range []struct {
		p    bhasha.Progress
		want []string
	}{
		{bhasha.Progress{Stage: 1, Stages: 1, Done: 50, Total: 200, Rate: 25, Cached: 10}, []string{`value="25.0"`, "50 of 200 (25%)", "25/s", "0 failed", "10 cached", "6s left"}},
		{bhasha.Progress{Stage: 2, Stages: 2, Done: 3, Total: 3, Failed: 1, Final: true, Elapsed: 1234 * time.Millisecond}, []string{"stage 2 of 2: 3 of 3 (100%)", `color:#D55E00`, "1 failed", "done in 1.2s"}},
		{bhasha.Progress{Stages: 1}, []string{"0 of 0 (0%)", "—"}},
	} {
		got := ProgressHTML(tc.p)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %s lacks %q", tc.p, got, w)
			}
		}
	}
}

func TestReportStepHTML(t *testing.T) {
	for _, tc := range []struct {
		s    bhasha.ReportStep
		want []string
	}{
		{bhasha.ReportStep{What: "sheet samples", Done: 100, Total: 400, Elapsed: 2 * time.Second}, []string{`value="25.0"`, "report: sheet samples: 100/400 (25.0 %), 50.0/s, about 6.0 s left"}},
		{bhasha.ReportStep{What: "HTML <report>", Final: true, Elapsed: 1500 * time.Millisecond}, []string{"report: HTML &lt;report&gt;: done in 1.5 s"}},
	} {
		got := ReportStepHTML(tc.s)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %s lacks %q", tc.s, got, w)
			}
		}
		if tc.s.Total == 0 && strings.Contains(got, "<progress") {
			t.Errorf("%+v: a step without rows has a bar: %s", tc.s, got)
		}
	}
}

// A simulated run: its one-line provenance, and the fragments a notebook
// shows (table, figure, explorer) drawn by headless Chromium on a page
// with RequireJS's define, as Jupyter has, with a script payload in the
// answers shown as text.
func TestFragmentsInANotebookPage(t *testing.T) {
	dir := t.TempDir()
	exp := bhasha.Distractors("../testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(4))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")), Progress())
	if err != nil {
		t.Fatal(err)
	}
	prov := ProvenanceHTML(r)
	for _, w := range []string{"SIMULATED", "(study mdi)", "records (", "failed)", r.Dir()} {
		if !strings.Contains(prov, w) {
			t.Errorf("provenance %s lacks %q", prov, w)
		}
	}
	acc, err := r.Table("conditions_wide")
	if err != nil {
		t.Fatal(err)
	}
	acc.Rows[0][0] = `<img src=x onerror="document.body.setAttribute('data-pwned','1')">`
	table, err := report.TableHTML(acc, MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	figs, err := r.Figures()
	if err != nil || len(figs) == 0 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	fig, err := report.FigureHTML(figs[0])
	if err != nil {
		t.Fatal(err)
	}
	ss, err := r.Samples()
	if err != nil {
		t.Fatal(err)
	}
	ss[0].Response = `</script><script>document.body.setAttribute('data-pwned','2')</script>`
	ex, err := report.ExplorerHTML(bhasha.SamplesTable(ss))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"SIMULATED", "conditions_wide", "&lt;img src=x", "data-v="} {
		if !strings.Contains(table, w) {
			t.Errorf("table fragment lacks %q", w)
		}
	}
	// RequireJS as in classic Jupyter: an AMD define is on the page.
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><script>window.define=function(){window.amdUsed=true;};window.define.amd={};</script></head><body>` +
		report.EChartsScript() + prov + table + fig + ex +
		`<script>document.body.setAttribute("data-echarts", typeof window.echarts);</script></body></html>`
	file := filepath.Join(dir, "cell.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	d, console := browsertest.DumpDOM(t, browsertest.Chromium(t), file, 5*time.Second)
	if len(console) > 0 {
		t.Errorf("the fragments wrote to the console: %q", console)
	}
	if !strings.Contains(d, `data-echarts="object"`) {
		t.Error("ECharts did not define window.echarts under RequireJS")
	}
	if !strings.Contains(d, "<canvas") {
		t.Error("the figure did not draw")
	}
	if i := strings.Index(d, `data-pwned="`); i >= 0 {
		t.Errorf("a payload ran: %s", d[max(0, i-200):min(len(d), i+100)])
	}
	if !strings.Contains(d, " samples; page 1 of 1") {
		t.Error("the explorer did not render")
	}
}

func TestFigurePatterns(t *testing.T) {
	for _, tc := range []struct {
		name     string
		patterns []string
		want     bool
	}{
		{"form_accuracy_m_baseline", []string{"form_accuracy"}, true},
		{"clc_m_native_tint-cm", []string{"clc_*_tint-cm"}, true},
		{"clc_m_native_tint-en", []string{"clc_*_tint-cm"}, false},
		{"latency_m", []string{"form_accuracy", "latency"}, true},
		{"flip_points_m", []string{"clc_*"}, false},
	} {
		if got := matches(tc.name, tc.patterns); got != tc.want {
			t.Errorf("matches(%q, %q) = %v", tc.name, tc.patterns, got)
		}
	}
}

// The explorer in a notebook aligns its cells as the report does, text
// left and numbers right, under a notebook's style that right-aligns
// every cell (as JupyterLab's rendered HTML does).
func TestExplorerAlignsAsTheReport(t *testing.T) {
	samples := &bhasha.Table{Name: "samples", Header: []string{"model", "item", "language", "answer", "gold", "correct"},
		Rows: [][]any{{"tiny-1b", 17, "hin", "दिल्ली", "Delhi", true}, {"tiny-1b", 18, "tam", "a long answer", "x", false}}}
	ex, err := report.ExplorerHTML(samples)
	if err != nil {
		t.Fatal(err)
	}
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><style>.jp-RenderedHTMLCommon td,.jp-RenderedHTMLCommon th,.jp-RenderedHTMLCommon tr{text-align:right}</style></head><body>` +
		`<div class="jp-RenderedHTMLCommon">` + ex + `</div><script>var out=[];document.querySelectorAll("table tr").forEach(function(tr){var row=[];` +
		`Array.prototype.forEach.call(tr.cells,function(c){row.push(c.textContent+"="+getComputedStyle(c).textAlign);});out.push(row.join("|"));});` +
		`var p=document.createElement("pre");p.id="probe";p.textContent=out.join("\n");document.body.appendChild(p);</script></body></html>`
	file := filepath.Join(t.TempDir(), "explorer.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
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
	rows := strings.Split(d[i+len(`<pre id="probe">`):j], "\n")
	if len(rows) != 3 {
		t.Fatalf("explorer rows %q", rows)
	}
	for _, row := range rows {
		for _, c := range strings.Split(row, "|") {
			text, align, _ := strings.Cut(c, "=")
			want := "left"
			if text == "17" || text == "18" {
				want = "right"
			}
			if align != want {
				t.Errorf("explorer cell %q is aligned %s, want %s (row %q)", text, align, want, row)
			}
		}
	}
}

func TestScoringHTML(t *testing.T) {
	tests := []struct {
		p    bhasha.ScoringProgress
		want []string
	}{
		{bhasha.ScoringProgress{Step: "scoring", Done: 50 << 20, Total: 200 << 20, Elapsed: 2 * time.Second}, []string{`value="25.0"`, "scoring the records: 50 of 200 MB (25%)", "6s left"}},
		{bhasha.ScoringProgress{Step: "table <accuracy>", Final: true, Elapsed: 1234 * time.Millisecond}, []string{"table &lt;accuracy&gt;: done in 1.2s"}},
		{bhasha.ScoringProgress{Step: "scoring"}, []string{"scoring…"}},
	}
	for _, tc := range tests {
		got := ScoringHTML(tc.p)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %s lacks %q", tc.p, got, w)
			}
		}
	}
}
