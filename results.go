package bhasha

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// Results is a run directory, finished or partial, from Run or Open: its
// manifest, tables and samples.
type Results struct {
	dir      string
	exp      *Experiment
	manifest *Manifest

	ctx         context.Context // Open's: scoring and table building stop when it is cancelled
	cfg         readConfig
	once        sync.Once
	scored      atomic.Bool // score has run (rows, set and scorErr are its)
	rows        []score.Row
	schema      *score.Schema // the study's answer schema
	notes       []string
	set         *experiment.TableSet // the tables, built on demand
	scorErr     error
	storedLines int // the record lines a stale store was made from
	// storeKey is the key of the store on disk (DIR/scored.parquet)
	// when rows are its rows (read from it, or written to it); nil
	// when they are not (no store, or it could not be written).
	storeKey  scored.Key
	keptNames sync.Map // the tables kept from these rows, by name: each written once
	// keptNotes say which kept tables could not be read (damaged) and
	// were built again; guarded by keptMu, as Table may be called from
	// several goroutines.
	keptMu    sync.Mutex
	keptNotes []string
	openNotes int // len(notes) before scoring added its own
	// planNotes say how the study's plan made its numbers
	// (experiment.Noter): the report's method notes, set by scoring.
	planNotes []string
	// The experiment's scoring inputs (Experiment.ScoringInputs: the
	// dataset and templates hashed), read once: each key of the scored
	// answers or kept tables would hash them again.
	inputsOnce sync.Once
	inputs     map[string]string
	inputsErr  error
	allOnce    sync.Once
	tables     []*Table // every table, in report order (allTables)

	// The samples and the report page are built once (the HTML report and
	// the workbook share them).
	samplesOnce sync.Once
	samples     []Sample
	samplesErr  error
	pageOnce    sync.Once
	pg          report.Page
	pageErr     error
}

// ReadOption adjusts Load, Parse and Open.
type ReadOption func(*readConfig)

type readConfig struct {
	experimentFile string
	studies        *Registry
	progress       func(ScoringProgress)
	noStore        bool
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
// (the experiment file moved, or a run from before runs kept their copy).
func ExperimentFile(path string) ReadOption { return func(c *readConfig) { c.experimentFile = path } }

// WithStudies reads experiments with these studies (a registry holding
// one of a program's own; default BuiltinStudies).
func WithStudies(r *Registry) ReadOption { return func(c *readConfig) { c.studies = r } }

// Open opens a run directory: its manifest and its experiment (the copy
// the run keeps, experiment.yaml, else the file the manifest names). When
// a dataset or template changed since the run, or the run warned of its
// answers (the manifest's warnings), Notes says so.
func Open(ctx context.Context, dir string, opts ...ReadOption) (*Results, error) {
	m, err := run.ReadManifest(dir)
	if files, _ := records.Files(dir); errors.Is(err, os.ErrNotExist) && len(files) == 0 {
		return nil, fmt.Errorf("opening run %s: not a run directory (it has neither %s nor %s)", dir, run.ManifestFile, records.FileName)
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("opening run %s: %w (whether its answers were simulated is recorded there; running the experiment into the directory again rebuilds it from the records: bhasha run --config %s --out %s, or bhasha.Run with bhasha.Out(%q))",
			dir, err, filepath.Join(dir, run.ExperimentFile), dir, dir)
	}
	if err != nil {
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
	exp, err := experiment.Load(ctx, path, experiment.LoadOptions{Studies: cfg.studies})
	if err != nil {
		return nil, fmt.Errorf("opening run %s: %w", dir, err)
	}
	r := &Results{dir: dir, exp: exp, manifest: m, ctx: ctx, cfg: cfg}
	if p := r.Partial(); p != "" {
		r.notes = append(r.notes, p)
	}
	r.notes = append(r.notes, m.Warnings...) // what the run noticed about its answers
	if copied && m.CopyHash != "" && exp.Hash != m.CopyHash {
		r.notes = append(r.notes, fmt.Sprintf("%s was edited after the run wrote it (sha256 %.12s… → %.12s…): the tables score the run's records with the edited experiment, not the one that was run",
			path, m.CopyHash, exp.Hash))
	}
	if exp.Name != m.Experiment && m.Experiment != "" {
		return nil, fmt.Errorf("opening run %s: the manifest names experiment %q and %s names %q: a run directory holds one experiment", dir, m.Experiment, path, exp.Name)
	}
	changes, err := inputChanges(m, exp)
	if err != nil {
		return nil, fmt.Errorf("opening run %s: %w", dir, err)
	}
	for _, c := range changes {
		r.notes = append(r.notes, c+"; the tables score the run's answers against the inputs as they are now")
	}
	return r, nil
}

// Dir is the run directory.
func (r *Results) Dir() string { return r.dir }

// Experiment is the run's experiment.
func (r *Results) Experiment() *Experiment { return r.exp }

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
	return fmt.Sprintf("the run is partial (status %s): %d%s requests have whole records, and the tables cover only the answers the run holds; running the experiment into this directory again resumes it (bhasha run --config %s --out %s; from Go, bhasha.Run with bhasha.Out(%q))",
		m.Status, answered, of, filepath.Join(r.dir, run.ExperimentFile), r.dir, r.dir)
}

// Simulated reports whether the run's answers came from simulated models.
func (r *Results) Simulated() bool { return r.manifest.Simulated }

// InputChanges says which inputs (dataset files, templates) changed since
// the run: tables then score the run's answers against today's inputs.
func (r *Results) InputChanges() ([]string, error) { return inputChanges(r.manifest, r.exp) }

// inputChanges compares the inputs m recorded with exp's as they are now
// (run.InputChanges).
func inputChanges(m *Manifest, exp *Experiment) ([]string, error) {
	inputs, err := exp.InputHashes()
	if err != nil {
		return nil, err
	}
	return run.InputChanges(m, inputs, exp.Templates()), nil
}

// score scores the run once (or reads the scored answers the run
// directory keeps, when they are current: scoredstore.go) and prepares
// its tables, built when asked for.
func (r *Results) score() error {
	r.once.Do(func() {
		r.scored.Store(true)
		rows, notes, err := r.scoredRows(r.context())
		if err != nil {
			r.scorErr = err
			return
		}
		r.openNotes = len(r.notes)
		r.notes = append(r.notes, notes...)
		r.planNotes = r.exp.PlanNotes()
		r.rows, r.schema = rows, r.exp.AnswerSchema()
		answers := experiment.TableGroup{Names: []string{"answers"}, Build: func(func(string) *tables.Table) []*tables.Table {
			return []*tables.Table{tables.AnswerRows(rows, r.schema)} // made row by row as a report writes it
		}}
		r.set, r.scorErr = r.exp.TableSet(rows, answers)
	})
	return r.scorErr
}

// forget lets go of the scored rows and all that was built from them
// (the tables, the report page): the Results is again as Open left it,
// and the next call that needs them scores again, which reads them back
// from the store. Only when rows are the store's (storeKey), and not
// while another goroutine uses the Results.
func (r *Results) forget() {
	r.rows, r.set, r.tables, r.scorErr, r.storeKey = nil, nil, nil, nil, nil
	r.keptNames.Clear()
	r.scored.Store(false)
	r.pg, r.pageErr = report.Page{}, nil
	r.notes = r.notes[:r.openNotes:r.openNotes]
	r.planNotes = nil
	r.once, r.allOnce, r.pageOnce = sync.Once{}, sync.Once{}, sync.Once{}
}

// context is the context Open was given (Background for a run's results).
func (r *Results) context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// allTables scores the run and builds every table (once), in report order.
func (r *Results) allTables() ([]*Table, error) {
	if err := r.score(); err != nil {
		return nil, err
	}
	r.allOnce.Do(func() {
		done := r.progress("tables", 0, 0)
		r.tables = r.set.All()
		for _, t := range r.tables {
			t.Simulated = r.manifest.Simulated
		}
		r.keep(r.tables...)
		done()
	})
	return r.tables, nil
}

// Tables lists the run's tables, in report order. It builds every table
// (on a large run, seconds: Table builds only the one asked for).
func (r *Results) Tables() ([]TableInfo, error) {
	ts, err := r.allTables()
	if err != nil {
		return nil, err
	}
	out := make([]TableInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Info())
	}
	return out, nil
}

// Table returns one table by name (see Tables), building only it (and the
// tables it is laid out from, or that share its work).
func (r *Results) Table(name string) (*Table, error) {
	// With the rows in memory, a table already built from them is the
	// one: its kept file is not read.
	if r.scored.Load() && r.score() == nil {
		if t, ok := r.set.Built(name); ok {
			r.keep(t) // built beside another: kept once
			return r.served(t), nil
		}
	}
	if t, ok := r.keptTable(name); ok {
		return t, nil
	}
	if err := r.score(); err != nil {
		return nil, err
	}
	if err := r.context().Err(); err != nil {
		return nil, fmt.Errorf("building table %s of run %s: %w", name, r.dir, err)
	}
	done := r.progress("table "+name, 0, 0)
	t, ok := r.set.Table(name)
	done()
	if ok {
		r.keep(t)
		return r.served(t), nil
	}
	ts, err := r.allTables()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return nil, fmt.Errorf("run %s has no table %q (it has %s)", r.dir, name, strings.Join(names, ", "))
}

// served is a table of the set as a caller gets it: held when it is made
// row by row (the answers: every row made), marked simulated when the run
// is.
func (r *Results) served(t *Table) *Table {
	if t.Source != nil {
		t = t.Held()
	}
	t.Simulated = r.manifest.Simulated
	return t
}

// Notes are what opening and scoring noticed: inputs changed since the
// run, duplicate records ignored, kept files that could not be read and
// were made again.
func (r *Results) Notes() []string {
	r.score()
	return r.allNotes()
}

// allNotes is a copy of the notes: opening's and scoring's, the plan's
// method notes, then the kept tables'.
func (r *Results) allNotes() []string {
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	return slices.Concat(r.notes, r.planNotes, r.keptNotes)
}

// runNotes is a copy of the notes a reader needs before any number:
// opening's and scoring's, then the kept tables' (allNotes without the
// plan's method notes).
func (r *Results) runNotes() []string {
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	return slices.Concat(r.notes, r.keptNotes)
}

// Scored is the number of scored answers: read from the run's store of
// them when it is current (no scoring, no rows read), else scored.
func (r *Results) Scored() (int, error) {
	if !r.scored.Load() {
		if n, ok := r.storedCount(); ok {
			return n, nil
		}
	}
	if err := r.score(); err != nil {
		return 0, err
	}
	return len(r.rows), nil
}

// WriteTables writes every table as CSV under DIR/tables (each file
// atomically, first column "simulated") and returns them. It holds the
// directory's shared lock: it refuses a directory a run is writing.
func (r *Results) WriteTables() ([]*Table, error) {
	lk, err := records.LockDir(r.dir, records.Shared)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	ts, err := r.allTables()
	if err != nil {
		return nil, err
	}
	if ts == nil {
		return nil, errors.New("no tables")
	}
	return ts, tables.Write(filepath.Join(r.dir, "tables"), ts)
}

// Compare sets two runs of the same items side by side: per model ×
// strategy × language × form × condition (and pooled, "*"), each run's
// accuracy on the items both answered, the paired difference b − a with
// its interval and McNemar's p (tables.Compare). Use it for an option
// that changes the requests (shuffled candidates, the paper's wording):
// run the experiment twice, differing only in that option.
func Compare(a, b *Results) (*Table, error) {
	if err := a.score(); err != nil {
		return nil, err
	}
	if err := b.score(); err != nil {
		return nil, err
	}
	t := tables.Compare(a.rows, b.rows)
	t.Simulated = a.Simulated() || b.Simulated()
	return t, nil
}
