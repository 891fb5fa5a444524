package kernel

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/janpfeifer/gonb/gonbui/protocol"

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
	fig, err := report.FigureImageHTML(figs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := r.Samples()
	if err != nil {
		t.Fatal(err)
	}
	ss[0].Response = `</script><script>document.body.setAttribute('data-pwned','2')</script>`
	st, err := r.SamplesTable(nil) // the samples Samples returned, as edited
	if err != nil {
		t.Fatal(err)
	}
	ex, err := report.ExplorerHTML(st)
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

// aPNG is a small PNG image.
func aPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 0xD5, G: 0x5E, A: 0xFF})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// What a cell shows of a figure: the interactive chart with its caption,
// and, given the figure drawn, the image inside the chart's container (for
// a page whose scripts do not run) and as image/png beside it (for a
// reader that shows images), the caption as text.
func TestFigureData(t *testing.T) {
	f := report.Figure{Name: "form_accuracy_m", Caption: `Accuracy by form <b>"n = 20"</b>`,
		Option: json.RawMessage(`{"xAxis":{"type":"category","data":["a","b"]},"yAxis":{},"series":[{"type":"bar","data":[1,2]}]}`)}
	img := aPNG(t)
	for _, tc := range []struct {
		name string
		png  []byte
	}{
		{"without an image", nil},
		{"with an image", img},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := figureData(f, tc.png)
			if err != nil {
				t.Fatal(err)
			}
			h, _ := d.Data[protocol.MIMETextHTML].(string)
			if !strings.Contains(h, `<div class="chart" id="bh-fig-`) || !strings.Contains(h, "echarts.init(") {
				t.Errorf("no interactive chart in %.300s", h)
			}
			if got := d.Data[protocol.MIMETextPlain]; got != f.Caption {
				t.Errorf("text/plain %q, want the caption %q", got, f.Caption)
			}
			if strings.Contains(h, `<b>"n`) {
				t.Errorf("the caption is not escaped: %.500s", h)
			}
			got, hasPNG := d.Data[protocol.MIMEImagePNG].([]byte)
			inHTML := strings.Contains(h, `<img src="data:image/png;base64,`+base64.StdEncoding.EncodeToString(img)+`"`)
			if tc.png == nil {
				if hasPNG || strings.Contains(h, "<img") {
					t.Errorf("an image without one given: %v, %.300s", d.Data, h)
				}
				return
			}
			if !hasPNG || !bytes.Equal(got, tc.png) {
				t.Errorf("image/png is %d bytes, want the %d given", len(got), len(tc.png))
			}
			if !inHTML {
				t.Errorf("the HTML does not hold the image: %.500s", h)
			}
			if m, _ := d.Metadata[string(protocol.MIMEImagePNG)].(map[string]int); m["width"] != report.FigureImageWidth {
				t.Errorf("image/png metadata %v, want width %d", d.Metadata, report.FigureImageWidth)
			}
		})
	}
}

// The static image a cell shows: drawn by headless Chromium at the
// figure's size (twice the pixel density); on a page with ECharts the
// chart replaces it, on one without (a notebook whose scripts ran but
// whose ECharts was not sent again) it stays, with no note over it.
func TestFigureStaticImage(t *testing.T) {
	browser := browsertest.Chromium(t)
	f := report.Figure{Name: "bars", Caption: "two bars",
		Option: json.RawMessage(`{"xAxis":{"type":"category","data":["a","b"]},"yAxis":{},"series":[{"type":"bar","data":[1,2]}]}`)}
	pngs, err := report.FigurePNGs(context.Background(), browser, []report.Figure{f})
	if err != nil {
		t.Fatal(err)
	}
	if len(pngs) != 1 {
		t.Fatalf("%d images for one figure", len(pngs))
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(pngs[0]))
	if err != nil {
		t.Fatalf("the image is not a PNG: %v", err)
	}
	if cfg.Width != 2*report.FigureImageWidth || cfg.Height != 2*460 {
		t.Errorf("the image is %d×%d, want %d×%d", cfg.Width, cfg.Height, 2*report.FigureImageWidth, 2*460)
	}
	d, err := figureData(f, pngs[0])
	if err != nil {
		t.Fatal(err)
	}
	fig := d.Data[protocol.MIMETextHTML].(string)
	for _, tc := range []struct {
		name    string
		echarts string
		want    []string
		dont    []string
	}{
		{"with ECharts", report.EChartsScript(), []string{"<canvas"}, []string{"<img", "not loaded"}},
		{"without ECharts", "", []string{`<img src="data:image/png;base64,`}, []string{"<canvas", "not loaded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "cell.html")
			page := `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>` + tc.echarts + fig + `</body></html>`
			if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			dom, console := browsertest.DumpDOM(t, browser, file, 3*time.Second)
			if len(console) > 0 {
				t.Errorf("the figure wrote to the console: %q", console)
			}
			i, j := strings.Index(dom, `<div class="chart"`), strings.Index(dom, `<p class="caption">`)
			if i < 0 || j < i {
				t.Fatalf("no chart container in the page")
			}
			chart := dom[i:j]
			for _, w := range tc.want {
				if !strings.Contains(chart, w) {
					t.Errorf("the chart's container lacks %q: %.300s", w, chart)
				}
			}
			for _, w := range tc.dont {
				if strings.Contains(chart, w) {
					t.Errorf("the chart's container has %q: %.300s", w, chart)
				}
			}
		})
	}
}
