package bhasha

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/reportfiles"
	"github.com/bhashalab/bhasha/internal/runanswers"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/grid"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/study"
)

// Results is a run directory, finished or partial, from Run or Open: its
// manifest, tables, figures, samples and report.
type Results struct {
	dir      string
	exp      *Experiment
	manifest *Manifest
	a        *runanswers.Answers      // the scored answers and their tables, kept in the run directory
	rep      *reportfiles.Report      // the report files made from them
	samples  func() ([]Sample, error) // Samples, read once
}

// answers sets up r's scored answers and report, with notes (what
// opening the run noticed) first among its notes.
func (r *Results) answers(ctx context.Context, notes []string, cfg readConfig) {
	r.a = runanswers.New(ctx, r.dir, r.exp, r.manifest, notes, cfg.answers)
	r.rep = reportfiles.New(r.a, r.dir, r.exp, r.manifest)
	r.samples = sync.OnceValues(r.samplesOf)
}

// ReadOption adjusts Load, Parse and Open.
type ReadOption func(*readConfig)

type readConfig struct {
	experimentFile string
	studies        *Registry
	answers        runanswers.Config
}

func readWith(opts []ReadOption) readConfig {
	var c readConfig
	for _, o := range opts {
		o(&c)
	}
	if c.studies == nil {
		c.studies = BuiltinStudies()
	}
	return c
}

// ExperimentFile makes Open read the run's experiment from path instead
// (the experiment file moved, or a run from before runs kept their copy);
// "" keeps the run's own.
func ExperimentFile(path string) ReadOption { return func(c *readConfig) { c.experimentFile = path } }

// WithStudies reads experiments with these studies (a registry holding
// one of a program's own; default BuiltinStudies).
func WithStudies(r *Registry) ReadOption { return func(c *readConfig) { c.studies = r } }

// ScoringProgress is how far opening a run has got, passed to
// OnScoring: Step is "scoring" (Done and Total are bytes of the records
// read), "reading scored answers", "tables" or "table <name>"; Final is
// the step's last call.
type ScoringProgress struct {
	Step        string
	Done, Total int64
	Elapsed     time.Duration
	Final       bool
}

// OnScoring makes Open report its long steps (scoring the records,
// reading the scored answers the run keeps, building tables) to fn, from
// the goroutine that asked for them.
func OnScoring(fn func(ScoringProgress)) ReadOption {
	return func(c *readConfig) {
		c.answers.Progress = func(s runanswers.Step) { fn(ScoringProgress(s)) }
	}
}

// NoScoredStore makes Open neither read nor write the scored answers a
// run directory keeps (scored.parquet): the records are scored in memory.
func NoScoredStore() ReadOption { return func(c *readConfig) { c.answers.NoStore = true } }

// Open opens a run directory: its manifest and its experiment (the copy
// the run keeps, experiment.yaml, else the file the manifest names). When
// a dataset or template changed since the run, or the run warned of its
// answers (the manifest's warnings), Notes says so.
//
// A grid directory (the shard run directories of `bhasha run --shard`,
// and no manifest of its own) is opened as one run: the merged run
// grid.Open keeps under it, merged again when a shard changed; Dir is then
// that directory. Shards of different experiments or model identities, or
// holding the same request, are refused; missing and unfinished shards are
// named in Notes.
func Open(ctx context.Context, dir string, opts ...ReadOption) (*Results, error) {
	if grid.IsGrid(dir) {
		merged, err := grid.Open(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("opening run %s: %w", dir, err)
		}
		dir = merged
	}
	m, err := run.ReadManifest(dir)
	switch files, _ := records.Files(dir); {
	case errors.Is(err, os.ErrNotExist) && len(files) == 0:
		return nil, fmt.Errorf("opening run %s: not a run directory (it has neither %s nor %s)", dir, run.ManifestFile, records.FileName)
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("opening run %s: %w (whether its answers were simulated is recorded there; running the experiment into the directory again rebuilds it from the records: bhasha run --config %s --out %s, or bhasha.Run with bhasha.Out(%q))",
			dir, err, filepath.Join(dir, run.ExperimentFile), dir, dir)
	case err != nil:
		return nil, fmt.Errorf("opening run %s: %w", dir, err)
	}
	cfg := readWith(opts)
	path := cfg.experimentFile
	copied := false
	if path == "" {
		path = filepath.Join(dir, run.ExperimentFile)
		if _, err := os.Stat(path); err != nil {
			path = m.ExperimentFile
		} else {
			copied = true
		}
	}
	// Lazy: a kept table is read without the dataset's items (only its
	// hash); scoring, and Experiment, read the dataset.
	exp, err := experiment.Load(ctx, path, experiment.LoadOptions{Studies: cfg.studies, Lazy: true})
	if err != nil {
		return nil, fmt.Errorf("opening run %s: %w", dir, err)
	}
	r := &Results{dir: dir, exp: exp, manifest: m}
	var notes []string
	if p := r.Partial(); p != "" {
		notes = append(notes, p)
	}
	notes = append(notes, m.Warnings...) // what the run noticed about its answers
	if copied && m.CopyHash != "" && exp.Hash != m.CopyHash {
		notes = append(notes, fmt.Sprintf("%s was edited after the run wrote it (sha256 %.12s… → %.12s…): the tables score the run's records with the edited experiment, not the one that was run",
			path, m.CopyHash, exp.Hash))
	}
	if exp.Name != m.Experiment && m.Experiment != "" {
		return nil, fmt.Errorf("opening run %s: the manifest names experiment %q and %s names %q: a run directory holds one experiment", dir, m.Experiment, path, exp.Name)
	}
	inputs, err := exp.InputHashes()
	if err != nil {
		return nil, fmt.Errorf("opening run %s: %w", dir, err)
	}
	for _, c := range run.InputChanges(m, inputs, exp.Templates()) {
		notes = append(notes, c+"; the tables score the run's answers against the inputs as they are now")
	}
	cfg.answers.Inputs = inputs // hashed once, for the scoring key too
	r.answers(ctx, notes, cfg)
	return r, nil
}

// Dir is the run directory.
func (r *Results) Dir() string { return r.dir }

// Experiment is the run's experiment, built (its dataset read). A
// dataset that no longer reads leaves it unbuilt (no plan, no items):
// the tables report why.
func (r *Results) Experiment() *Experiment {
	exp, _ := r.a.Experiment()
	return exp
}

// Manifest is the run's manifest.
func (r *Results) Manifest() *Manifest { return r.manifest }

// Partial says, when the run has requests it has not asked (it was
// interrupted, or a report asked only for judge verdicts), how many of how
// many have answers and how to resume it; "" for a finished run.
func (r *Results) Partial() string {
	m := r.manifest
	if m.Pending == 0 && m.Status != "interrupted" && m.Status != "running" && m.Status != "partial" {
		return ""
	}
	of := ""
	switch {
	case m.Requests > 0:
		of = fmt.Sprintf(" of %d", m.Requests)
	case m.Pending > 0:
		of = fmt.Sprintf(" of %d", m.Counts.OK+m.Pending)
	}
	answered := m.Counts.OK
	if m.Status == "running" { // killed: the counts were never written
		answered = 0
		records.Read(r.dir, func(rec *engine.Record) error {
			if rec.Status == engine.StatusOK {
				answered++
			}
			return nil
		})
	}
	resume := fmt.Sprintf("running the experiment into this directory again resumes it (bhasha run --config %s --out %s; from Go, bhasha.Run with bhasha.Out(%q))",
		filepath.Join(r.dir, run.ExperimentFile), r.dir, r.dir)
	if g := grid.Of(r.dir); g != "" {
		resume = fmt.Sprintf("running the grid's missing and unfinished shards again resumes it (bhasha run --config %s --out %s --shard K/N, see the notes)", cmp.Or(m.ExperimentFile, filepath.Join(r.dir, run.ExperimentFile)), g)
	}
	return fmt.Sprintf("the run is partial (status %s): %d%s requests have whole records, and the tables cover only the answers the run holds; %s",
		m.Status, answered, of, resume)
}

// Simulated reports whether the run's answers came from simulated models.
func (r *Results) Simulated() bool { return r.manifest.Simulated }

// Tables lists the run's tables, in report order. It builds every table
// (on a large run, seconds: Table builds only the one asked for), or
// reads them all when an earlier Tables or report kept them.
func (r *Results) Tables() ([]TableInfo, error) { return r.a.Tables() }

// Table returns one table by name (see Tables), building only it (and the
// tables it is laid out from, or that share its work).
func (r *Results) Table(name string) (*Table, error) { return r.a.Table(name) }

// Notes are what opening and scoring noticed: inputs changed since the
// run, duplicate records ignored, kept files that could not be read and
// were made again.
func (r *Results) Notes() []string { return r.a.Notes() }

// Scored is the number of scored answers: read from the run's store of
// them when it is current (no scoring, no rows read), else scored.
func (r *Results) Scored() (int, error) { return r.a.Scored() }

// WriteTables writes every table as CSV under DIR/tables (each file
// atomically, first column "simulated") and returns them. It holds the
// directory's shared lock: it refuses a directory a run is writing.
func (r *Results) WriteTables() ([]*Table, error) { return r.a.WriteTables() }

// Figures are the run's figures, in report order (the study's plan
// draws them from its tables, experiment.Figurer: the paper's figures its
// tables allow, each with its caption, n, and SIMULATED when it is).
func (r *Results) Figures() ([]study.Figure, error) {
	p, err := r.rep.Page()
	return p.Figures, err
}

// ReportStep is how far writing a report has come: the step (reading
// the records' prompts and responses, a sheet, the HTML file), rows done
// of its total (0 of 0 for a step without rows), the time since it
// started, and Final at its end.
type ReportStep struct {
	What        string
	Done, Total int
	Elapsed     time.Duration
	Final       bool
}

// ReportOptions adjust how WriteReport writes the reports; the zero
// value writes the HTML report and the workbook alone.
type ReportOptions struct {
	// Progress, when set, is told of each step of writing the reports: at
	// its start, every 20,000 rows and at its end (the command line prints
	// a line per step; a notebook cell shows it in place, kernel.Save).
	Progress func(ReportStep)

	// Tables, when set, has WriteReport write every table as CSV under
	// DIR/tables too (as WriteTables does) and call it with them once
	// written, before the HTML and the workbook. A run directory that
	// cannot be written gets no table files: Tables is called with none,
	// and Notes says so.
	Tables func([]*Table)

	// SheetRows bounds the rows of the workbook's long sheets: the
	// samples sheet (default and at most 50,000 answers) and a table over
	// 50,000 rows (default 1,000,000), which keeps its first n rows and
	// its last; the README sheet says how many were left out and where.
	SheetRows int

	// ReleaseRows has WriteReport let go of the run's scored answers
	// (over 2^20 of them) once the report's tables are built, reading the
	// answers it lists back from DIR/scored.parquet a row group at a time;
	// a later call reads them back. Not while another goroutine uses the
	// Results; without a current store it changes nothing.
	ReleaseRows bool
}

// WriteReport writes the run's HTML report to html and its workbook to
// xlsx (either may be "", for none), each atomically: when ctx ends or
// anything fails, a file not yet complete is left as it was.
//
// Both show one seeded, stratified draw of the answers (the same number
// from each model × language × strategy, and each criterion of the
// answer schema both ways) with their records' prompts and responses:
// the HTML explorer its first 20,000 that fit its bytes, the workbook's
// samples sheet its first 50,000 (ReportOptions.SheetRows), in table
// order, the README sheet saying they are n of the run's N answers.
// Every record is read once; only the sample's texts are held.
func (r *Results) WriteReport(ctx context.Context, html, xlsx string, opts ReportOptions) error {
	return r.rep.Write(ctx, html, xlsx, reportOptions(opts))
}

// reportOptions is o as the report's writer reads it.
func reportOptions(o ReportOptions) reportfiles.Options {
	c := reportfiles.Options{SheetRows: o.SheetRows, Release: o.ReleaseRows, KeepUpTo: reportfiles.EarlyRows, Tables: o.Tables}
	if fn := o.Progress; fn != nil {
		c.Progress = func(s report.Step) { fn(ReportStep(s)) }
	}
	return c
}

// WriteExports writes paper-ready files under dir: every table as CSV and
// as a LaTeX booktabs table, every figure's ECharts option and, when
// headless Chromium is installed, every figure as SVG and PNG. It returns
// whether the figures were drawn.
func (r *Results) WriteExports(ctx context.Context, dir string) (drawn bool, err error) {
	return r.rep.WriteExports(ctx, dir)
}

// Compare sets two runs of the same items side by side: per model ×
// strategy × language × form × condition (and pooled, "*"), each run's
// accuracy on the items both answered, the paired difference b − a with
// its interval and McNemar's p (tables.Compare). Use it for an option
// that changes the requests (shuffled candidates, the paper's wording):
// run the experiment twice, differing only in that option.
func Compare(a, b *Results) (*Table, error) {
	for _, r := range []*Results{a, b} {
		if err := r.a.Score(); err != nil {
			return nil, err
		}
	}
	t := tables.Compare(a.a.Rows(), b.a.Rows())
	t.Simulated = a.Simulated() || b.Simulated()
	return t, nil
}
