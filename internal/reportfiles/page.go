package reportfiles

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// Page gathers what the HTML report, the workbook and the exports show,
// once: every table (built: runanswers.Answers.AllTables), the figures,
// the notes and the run's provenance.
func (r *Report) Page() (report.Page, error) {
	r.pageOnce.Do(func() { r.pg, r.pageErr = r.buildPage() })
	return r.pg, r.pageErr
}

func (r *Report) buildPage() (report.Page, error) {
	all, err := r.a.AllTables()
	if err != nil {
		return report.Page{}, err
	}
	figs, err := r.exp.Figures(all)
	if err != nil {
		return report.Page{}, err
	}
	m := r.manifest
	prov := [][2]string{{"experiment", m.Experiment + " (study " + r.exp.Study + ")"}, {"experiment file", shownPath(r.dir, m.ExperimentFile)},
		{"experiment SHA-256", m.ExperimentHash}, {"tool", m.Tool}, {"status", m.Status},
		{"started", m.Started.UTC().Format(time.RFC3339)}, {"records", fmt.Sprintf("%d (%d ok, %d failed)", m.Counts.Records, m.Counts.OK, m.Counts.Failed)}}
	if m.Ended != nil {
		prov = append(prov, [2]string{"ended", m.Ended.UTC().Format(time.RFC3339)})
	}
	for _, mi := range m.Models {
		servers := make([]string, 0, len(mi.Servers))
		for _, s := range mi.Servers {
			servers = append(servers, s.Endpoint+" "+s.Version)
		}
		root := mi.Identity.Root
		if mi.Identity.Revision != "" {
			root += ", revision " + mi.Identity.Revision
		}
		prov = append(prov, [2]string{"model " + mi.Name, fmt.Sprintf("%s (root %s) at %s", mi.ServedName, root, strings.Join(servers, ", "))})
	}
	for _, g := range slices.Sorted(maps.Keys(m.Decodings)) {
		b, _ := json.Marshal(m.Decodings[g])
		prov = append(prov, [2]string{"decoding " + g, string(b)})
	}
	for _, k := range slices.Sorted(maps.Keys(m.Inputs)) {
		prov = append(prov, [2]string{"input " + shownPath(r.dir, k), m.Inputs[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(m.Templates)) {
		prov = append(prov, [2]string{"template " + k, m.Templates[k]})
	}
	prov = append(prov, r.exp.OptionProvenance()...) // the study's option blocks: scoring options, prompt options
	ts := all
	var infos []tables.Info // the papers' tables' only: the run's own show their Info
	// The papers' published numbers beside the run's, first, when the run
	// has any of them.
	if v, err := r.exp.VersusPaper(all); err != nil {
		return report.Page{}, err
	} else if v != nil && len(v.Rows) > 0 {
		lead := []*tables.Table{v}
		infos = []tables.Info{{Name: v.Name, Description: v.Description, Mirrors: "the papers' published numbers"}}
		if rd := experiment.VersusReadings(v); rd != nil { // the ambiguous rows' readings, side by side
			lead, infos = append(lead, rd), append(infos, tables.Info{Name: rd.Name, Description: rd.Description, Mirrors: "the papers' published numbers, read two ways"})
		}
		ts = append(lead, ts...)
	}
	return report.Page{Title: "Bhasha report: " + m.Experiment, Simulated: m.Simulated, Notes: r.a.RunNotes(), MethodNotes: r.a.PlanNotes(),
		Tables: ts, Infos: infos, Figures: figs, Provenance: prov, MaxRows: 500}, nil
}

// ExplorerSamples bounds the samples the HTML report's explorer draws
// (explorerPicks: the same number from each model × language × strategy,
// and each flag of the answer schema both ways); the explorer then keeps
// the first of them that fit in report.MaxExplorerBytes.
const ExplorerSamples = 20_000

// shownPath is input file p as the report shows it: relative to the run
// directory, or to the folder holding it, when under it; else its base
// name (the report shows no absolute path).
func shownPath(runDir, p string) string {
	if p == "" {
		return ""
	}
	if dir, err := filepath.Abs(runDir); err == nil && filepath.IsAbs(p) {
		if rel, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
		if rel, err := filepath.Rel(filepath.Dir(dir), p); err == nil && filepath.IsLocal(rel) {
			return "../" + filepath.ToSlash(rel)
		}
	}
	return filepath.Base(p)
}

// WriteExports writes paper-ready files under dir: every table as CSV and
// as a LaTeX booktabs table, every figure's ECharts option and, when
// headless Chromium is installed, every figure as SVG and PNG. It returns
// whether the figures were drawn.
func (r *Report) WriteExports(ctx context.Context, dir string) (drawn bool, err error) {
	p, err := r.Page()
	if err != nil {
		return false, err
	}
	browser, _ := exec.LookPath("chromium")
	if err := report.WriteExports(ctx, dir, p, browser); err != nil {
		return false, fmt.Errorf("exports of %s: %w", r.dir, err)
	}
	return browser != "", nil
}

// PromptText shows a request body's prompt: a completion's prompt as it
// is, a chat's messages as "role: content" paragraphs.
func PromptText(body json.RawMessage) string {
	prompt, msgs, err := engine.PromptOf(body)
	if err != nil || len(msgs) == 0 {
		return prompt
	}
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Role + ": " + m.Content
	}
	return strings.Join(parts, "\n\n")
}

// SampleColumns are the columns a samples table has after the answer
// schema's: what only a sample holds, its record's text.
func SampleColumns() []tables.Column {
	return []tables.Column{
		tables.Text("prompt", "the prompt as sent (chat messages as role: content paragraphs)"),
		tables.Text("response", "the raw model output"),
		tables.Text("error", "why the request failed"),
		tables.Flag("simulated", "the answer came from a simulated model"),
	}
}
