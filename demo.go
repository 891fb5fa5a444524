package bhasha

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/report"
)

// Demo runs the *.yaml experiments of dir ("": every built-in smoke
// experiment of DefaultInputs: IndicKLAR under all strategies, IndicQuest
// with a judge, the distractor study on TriviaQA and TruthfulQA) against
// the in-process simulator into out/<experiment>, writes each one's
// tables as CSV under out/<experiment>/tables, its HTML report as
// out/<experiment>/report.html and its workbook as
// out/<experiment>/report.xlsx, links them all from out/report.html and
// out/report.xlsx (with each run's headline tables), and returns the
// results in file order. The built-in inputs are written to out/inputs
// first, so the runs' manifests name files that exist. opts adjust every
// run (CacheDir, Log, ...); Out and Simulator are set by Demo.
func Demo(ctx context.Context, dir, out string, opts ...RunOption) ([]*Results, error) {
	if dir == "" {
		inputs := filepath.Join(out, "inputs")
		if err := os.RemoveAll(inputs); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		if err := os.CopyFS(inputs, DefaultInputs()); err != nil {
			return nil, fmt.Errorf("demo: writing the built-in experiments: %w", err)
		}
		dir = filepath.Join(inputs, "experiments")
	}
	files, err := fs.Glob(os.DirFS(dir), "*.yaml")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("demo: no experiment files in %s", dir)
	}
	var res []*Results
	defer func() { writeIndex(out, res) }()
	for _, f := range files {
		exp, err := Load(ctx, filepath.Join(dir, f))
		if err != nil {
			return res, err
		}
		runDir := filepath.Join(out, strings.TrimSuffix(f, ".yaml"))
		r, err := Run(ctx, exp, append(opts, Out(runDir), Simulator())...)
		if r != nil {
			res = append(res, r)
		}
		if err != nil {
			return res, fmt.Errorf("demo %s: %w", exp.Name, err)
		}
		if err := r.WriteReport(ctx, filepath.Join(runDir, "report.html"), filepath.Join(runDir, "report.xlsx"), ReportOptions{Tables: func([]*Table) {}}); err != nil {
			return res, fmt.Errorf("demo %s: %w", exp.Name, err)
		}
	}
	return res, nil
}

// writeIndex writes out/report.html and out/report.xlsx linking every
// run's report and workbook (with its headline tables); best effort.
func writeIndex(out string, res []*Results) {
	var es []report.Entry
	for _, r := range res {
		m := r.Manifest()
		rel, _ := filepath.Rel(out, r.Dir())
		e := report.Entry{Name: m.Experiment, About: r.about(), Status: m.Status, Records: m.Counts.Records, Failed: m.Counts.Failed, Simulated: m.Simulated,
			Report: filepath.ToSlash(filepath.Join(rel, "report.html")), Workbook: filepath.ToSlash(filepath.Join(rel, "report.xlsx"))}
		if p, err := r.rep.Page(); err == nil {
			// the tables a reader of several runs compares first, as each marks itself (Table.Headline)
			e.Tables = slices.DeleteFunc(slices.Clone(p.Tables), func(t *Table) bool { return !t.Headline })
		}
		es = append(es, e)
	}
	for name, write := range map[string]func(io.Writer, string, []report.Entry) error{"report.html": report.WriteIndex, "report.xlsx": report.WriteIndexXLSX} {
		var b bytes.Buffer
		if write(&b, "Bhasha demo", es) == nil {
			atomicfile.WriteFile(filepath.Join(out, name), b.Bytes())
		}
	}
}

// about is one line on the run for an index: study, description, dataset.
func (r *Results) about() string {
	what := r.exp.Description
	if what == "" {
		if s, ok := r.exp.Studies.Lookup(r.exp.Study); ok {
			what = s.About()
		}
	}
	out := "study " + r.exp.Study
	if what != "" {
		out += ": " + what
	}
	if d := r.manifest.Dataset; d != nil && d.Name != "" {
		out += fmt.Sprintf(" (dataset %s, %d items)", d.Name, d.Items)
	}
	return out
}
