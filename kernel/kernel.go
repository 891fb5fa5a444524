// Package kernel shows Bhasha's results in GoNB notebooks (Go in
// Jupyter): a table as a sortable HTML table, a figure drawn inline, a
// live progress display for bhasha.Run, a one-line provenance summary,
// and the report's sample explorer over any subset of a run's answers.
// Everything shown is escaped as in the HTML report (the report package
// builds the fragments). Outside a notebook the display functions print
// nothing; the *HTML functions return what they would show. The cell
// helpers (Open, Run, Show, Draw, Save, Check) show a failure in the cell
// and end it (Stop), so that a notebook checks no error itself.
//
// ECharts is sent to the notebook once per kernel session (the first
// figure, or ECharts()), wrapped so that Jupyter's RequireJS does not
// capture it; a marker file in GoNB's session directory ($GONB_TMP_DIR)
// remembers that it was sent.
package kernel

import (
	"context"
	"fmt"
	"html"
	"html/template"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/progress"
)

// MaxRows bounds the rows Table shows (the table's CSV holds them all).
const MaxRows = 1000

// Table shows a table: its name, description, the paper table it mirrors,
// SIMULATED when it is, and at most MaxRows rows with the papers' headers,
// numbers formatted by column kind, sortable by a click on a header.
func Table(t *bhasha.Table) error {
	h, err := report.TableHTML(t, MaxRows)
	if err != nil {
		return err
	}
	show(h)
	return nil
}

// Tables shows the run's tables by name (Table each), in the order given.
func Tables(r *bhasha.Results, names ...string) error {
	for _, name := range names {
		t, err := r.Table(name)
		if err != nil {
			return err
		}
		if err := Table(t); err != nil {
			return err
		}
	}
	return nil
}

// show displays html in the cell's output and waits until GoNB has it.
func show(html string) {
	gonbui.DisplayHTML(html)
	gonbui.Sync()
}

// Figure draws one figure inline with its caption (Figures does, for one).
func Figure(f report.Figure) error {
	return showFigures([]report.Figure{f})
}

// Figures draws the run's figures whose names match one of patterns
// (every figure when none is given) and returns how many it drew. A
// pattern with a * is matched whole, as path.Match does
// ("clc_*_tint-cm"); one without is a prefix ("form_accuracy").
//
// Each figure is one output of the cell: the interactive chart with its
// caption (text/html), the figure drawn as a PNG image (image/png, also
// inside the HTML, where it shows until the chart replaces it) and its
// caption as text (text/plain), so that a saved notebook shows its
// figures where scripts do not run (untrusted, GitHub, nbviewer). The
// images are drawn by headless Chromium ("chromium" on the kernel's PATH;
// report.FigurePNGs), once for all the figures of the call; without
// Chromium the figures are interactive only. Interrupting the kernel
// stops the drawing.
func Figures(r *bhasha.Results, patterns ...string) (int, error) {
	figs, err := r.Figures()
	if err != nil {
		return 0, err
	}
	sel := slices.DeleteFunc(slices.Clone(figs), func(f report.Figure) bool { return len(patterns) > 0 && !matches(f.Name, patterns) })
	if err := showFigures(sel); err != nil {
		return 0, err
	}
	return len(sel), nil
}

// showFigures shows each figure as one output (figureData).
func showFigures(figs []report.Figure) error {
	if len(figs) == 0 {
		return nil
	}
	pngs := make([][]byte, len(figs))
	if browser, err := exec.LookPath("chromium"); err == nil && gonbui.IsNotebook {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		pngs, err = report.FigurePNGs(ctx, browser, figs)
		stop()
		if err != nil {
			return fmt.Errorf("drawing the figures' static images: %w", err)
		}
	}
	for i, f := range figs {
		d, err := figureData(f, pngs[i])
		if err != nil {
			return err
		}
		if !echartsSent() { // the library's script, the first time in a kernel session
			d.Data[protocol.MIMETextHTML] = report.EChartsScript() + d.Data[protocol.MIMETextHTML].(string)
		}
		gonbui.SendData(d)
		gonbui.Sync()
	}
	return nil
}

// figureData is f as HTML (report.FigureImageHTML), png as image/png
// when not empty, and the caption as text/plain.
func figureData(f report.Figure, png []byte) (*protocol.DisplayData, error) {
	h, err := report.FigureImageHTML(f, png)
	if err != nil {
		return nil, err
	}
	d := &protocol.DisplayData{
		Data:     map[protocol.MIMEType]any{protocol.MIMETextHTML: h, protocol.MIMETextPlain: f.Caption},
		Metadata: map[string]any{},
	}
	if len(png) > 0 {
		d.Data[protocol.MIMEImagePNG] = png
		d.Metadata[string(protocol.MIMEImagePNG)] = map[string]int{"width": report.FigureImageWidth}
	}
	return d, nil
}

func matches(name string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, _ := path.Match(p, name)
		return ok || (!strings.Contains(p, "*") && strings.HasPrefix(name, p))
	})
}

// ECharts sends the ECharts library to the notebook. Figure sends it
// the first time in a kernel session; call ECharts after reloading a
// notebook page without restarting its kernel.
func ECharts() {
	show(report.EChartsScript())
	echartsSent()
}

// echartsSent marks ECharts as sent in $GONB_TMP_DIR and says whether it
// was marked already (false outside GoNB).
func echartsSent() bool {
	dir := os.Getenv("GONB_TMP_DIR")
	if dir == "" {
		return false
	}
	marker := filepath.Join(dir, ".bhasha-echarts-sent")
	if _, err := os.Stat(marker); err == nil {
		return true
	}
	os.WriteFile(marker, nil, 0o644)
	return false
}

// Progress is a bhasha.Run option that shows the run's progress in the
// cell's output and updates it in place: stage, done of total, rate,
// failures, answers from the cache and the time left; at most every
// 250 ms, and always at a stage's end.
func Progress() bhasha.RunOption {
	show := inPlace("bhasha-progress-")
	return bhasha.OnProgress(func(p bhasha.Progress) { show(p.Final, func() string { return ProgressHTML(p) }) })
}

// inPlace returns a function that updates one progress line, at most
// every 250 ms but always (and synced) when final.
func inPlace(prefix string) func(final bool, html func() string) {
	id := prefix + gonbui.UniqueId()
	var last time.Time
	return func(final bool, html func() string) {
		if !final && time.Since(last) < 250*time.Millisecond {
			return
		}
		last = time.Now()
		gonbui.UpdateHTML(id, html())
		if final {
			gonbui.Sync()
		}
	}
}

// ReportProgress is a bhasha.ReportOptions.Progress that shows the
// report's steps in the cell's output, one line updated in place
// (ReportStepHTML): reading the records, each long sheet, the files; at
// most every 250 ms, and always at a step's end.
func ReportProgress() func(bhasha.ReportStep) {
	show := inPlace("bhasha-report-progress-")
	return func(s bhasha.ReportStep) { show(s.Final, func() string { return ReportStepHTML(s) }) }
}

// ReportStepHTML is one step of writing a report as a cell shows it: a
// bar (for a step with rows) and the step's line (progress.StepLine:
// done of total, rate, time left or taken).
func ReportStepHTML(s bhasha.ReportStep) string {
	pct := -1.0
	if s.Total > 0 {
		pct = 100 * float64(s.Done) / float64(s.Total)
	}
	return progressHTML(pct, template.HTMLEscapeString(progress.StepLine("report: "+s.What, s.Done, s.Total, s.Elapsed, s.Final)))
}

// progressHTML is a progress line as a cell shows it: a bar at pct
// percent (none when pct < 0), then text (HTML).
func progressHTML(pct float64, text string) string {
	bar := ""
	if pct >= 0 {
		bar = fmt.Sprintf(`<progress max="100" value="%.1f" style="width:24em"></progress> `, pct)
	}
	return `<div class="bhasha-progress" style="font-family:sans-serif">` + bar + text + `</div>`
}

// ScoringProgress is a bhasha.Open option that shows, in the cell's
// output and updated in place, how far scoring the run's records has got
// (MB read of MB, the time left) and which table is being built; at most
// every 250 ms. A cell whose run's scored answers are stored shows
// nothing but the table step.
func ScoringProgress() bhasha.ReadOption {
	show := inPlace("bhasha-scoring-")
	shown := false
	return bhasha.OnScoring(func(p bhasha.ScoringProgress) {
		if !gonbui.IsNotebook || (p.Final && !shown) {
			return // outside a notebook; a step too short to have been shown
		}
		shown = true
		show(p.Final, func() string { return ScoringHTML(p) })
	})
}

// ScoringHTML is one line of an open's progress: "scoring the records: a
// of b MB (pct %), time left", or the step and its time when it is done.
func ScoringHTML(p bhasha.ScoringProgress) string {
	const mb = 1 << 20
	if p.Final {
		return progressHTML(-1, html.EscapeString(p.Step)+": done in "+p.Elapsed.Round(100*time.Millisecond).String())
	}
	if p.Total <= 0 {
		return progressHTML(-1, html.EscapeString(p.Step)+"…")
	}
	pct := 100 * float64(p.Done) / float64(p.Total)
	eta := "—"
	if p.Done > 0 && p.Elapsed > 0 {
		eta = time.Duration(float64(p.Elapsed)*float64(p.Total-p.Done)/float64(p.Done)).Round(time.Second).String() + " left"
	}
	return progressHTML(pct, fmt.Sprintf("%s the records: %d of %d MB (%.0f%%), %s", html.EscapeString(p.Step), p.Done/mb, p.Total/mb, pct, eta))
}

// ProgressHTML is one progress line: a bar, "stage s of S: done of total
// (pct %), rate/s, failed, cached, ETA".
func ProgressHTML(p bhasha.Progress) string {
	pct := 0.0
	if p.Total > 0 {
		pct = 100 * float64(p.Done) / float64(p.Total)
	}
	eta := "—"
	switch {
	case p.Final:
		eta = "done in " + p.Elapsed.Round(100*time.Millisecond).String()
	case p.Rate > 0 && p.Total > p.Done:
		eta = (time.Duration(float64(p.Total-p.Done) / p.Rate * float64(time.Second))).Round(time.Second).String() + " left"
	}
	stage := ""
	if p.Stages > 1 {
		stage = fmt.Sprintf("stage %d of %d: ", p.Stage, p.Stages)
	}
	fail := ""
	if p.Failed > 0 {
		fail = ` style="color:#D55E00;font-weight:bold"`
	}
	return progressHTML(pct, fmt.Sprintf("%s%d of %d (%.0f%%), %.0f/s, <span%s>%d failed</span>, %d cached, %s",
		stage, p.Done, p.Total, pct, p.Rate, fail, p.Failed, p.Cached, eta))
}

// Provenance shows ProvenanceHTML(r).
func Provenance(r *bhasha.Results) {
	show(ProvenanceHTML(r))
}

// ProvenanceHTML is a run in one line: experiment and study, SIMULATED
// when it is, models (served name and root), records (ok, failed),
// status, start and end, tool version, and the run directory.
func ProvenanceHTML(r *bhasha.Results) string {
	m := r.Manifest()
	var models []string
	for _, mi := range m.Models {
		s := mi.Name
		if mi.ServedName != "" && mi.ServedName != mi.Name {
			s += " (" + mi.ServedName + ")"
		}
		if mi.Identity.Root != "" && mi.Identity.Root != mi.ServedName {
			s += " root " + mi.Identity.Root
		}
		models = append(models, s)
	}
	when := m.Started.UTC().Format("2006-01-02 15:04")
	if m.Ended != nil {
		when += "–" + m.Ended.UTC().Format("15:04 MST")
	}
	sim := ""
	if m.Simulated {
		sim = `<span style="color:#D55E00;font-weight:bold">SIMULATED</span> · `
	}
	return fmt.Sprintf(`<p class="bhasha-provenance" style="font-family:sans-serif">%s<b>%s</b> (study %s) · models: %s · %d records (%d ok, %d failed) · %s · %s · %s · <code>%s</code></p>`,
		sim, template.HTMLEscapeString(m.Experiment), template.HTMLEscapeString(r.Experiment().Study), template.HTMLEscapeString(strings.Join(models, ", ")),
		m.Counts.Records, m.Counts.OK, m.Counts.Failed, template.HTMLEscapeString(m.Status), when, template.HTMLEscapeString(m.Tool), template.HTMLEscapeString(r.Dir()))
}

// Samples shows the report's sample explorer over the run's answers that
// keep accepts (every answer when keep is nil) and returns how many it
// was given.
func Samples(r *bhasha.Results, keep func(bhasha.Sample) bool) (int, error) {
	t, err := r.SamplesTable(keep)
	if err != nil {
		return 0, err
	}
	h, err := report.ExplorerHTML(t)
	if err != nil {
		return 0, err
	}
	show(h)
	return t.Len(), nil
}
