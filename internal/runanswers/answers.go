// Package runanswers holds a run directory's scored answers and the
// tables built from them: scored once from the records, kept in the
// directory (scored.parquet, scored-tables/) keyed by what they were made
// from, read back while they are current and made again when not.
package runanswers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// Answers are a run's scored answers and tables, scored or read on
// demand. Its methods may be called from several goroutines, except
// Forget.
type Answers struct {
	dir      string
	exp      *experiment.Experiment
	manifest *run.Manifest

	ctx       context.Context // scoring and table building stop when it is cancelled
	cfg       Config
	once      sync.Once
	buildMu   sync.Mutex  // guards building exp (Experiment)
	scored    atomic.Bool // score has run (rows, set and scorErr are its)
	rows      []score.Row
	schema    *score.Schema // the study's answer schema
	notes     []string
	set       *experiment.TableSet // the tables, built on demand
	scorErr   error
	storeKey  scored.Key                        // the key of DIR/scored.parquet when rows are its rows, else nil
	keptNames sync.Map                          // the names of the tables kept from these rows
	keptMu    sync.Mutex                        // guards notes and keptNotes
	keptNotes []string                          // the kept tables that could not be read and were built again
	openNotes int                               // len(notes) before scoring added its own
	planNotes []string                          // the study's method notes (experiment.Noter)
	inputs    func() (map[string]string, error) // Experiment.ScoringInputs, hashed once
	allOnce   sync.Once
	tables    []*tables.Table // every table, in report order (allTables)
}

// Config is how Answers reads and keeps a run's answers.
type Config struct {
	// Progress, when set, is told of the long steps, from the goroutine
	// that asked for them.
	Progress func(Step)
	// NoStore neither reads nor writes the scored answers and kept
	// tables: the records are scored in memory.
	NoStore bool
	// Inputs are the experiment's input hashes (Experiment.InputHashes),
	// or nil to hash the files when the scoring key is first needed.
	Inputs map[string]string
}

// Step is how far reading a run's answers has got: Step is "scoring"
// (Done and Total are bytes of the records read), "reading scored
// answers", "tables" or "table <name>" (no counts); Final is the step's
// last call.
type Step struct {
	Step        string
	Done, Total int64
	Elapsed     time.Duration
	Final       bool
}

// New is the answers of the run in dir, of experiment exp and manifest
// m, with notes first among its notes. It reads nothing until asked;
// cancelling ctx stops scoring and table building.
func New(ctx context.Context, dir string, exp *experiment.Experiment, m *run.Manifest, notes []string, cfg Config) *Answers {
	inputs := sync.OnceValues(func() (map[string]string, error) { return exp.ScoringInputs(cfg.Inputs) })
	return &Answers{dir: dir, exp: exp, manifest: m, ctx: ctx, cfg: cfg, notes: notes, inputs: inputs}
}

// Experiment is the run's experiment, built (its plan made, its dataset
// read: Experiment.Build) when it was loaded lazily. Safe for concurrent
// use with the Answers' other methods.
func (r *Answers) Experiment() (*experiment.Experiment, error) {
	r.buildMu.Lock()
	defer r.buildMu.Unlock()
	return r.exp, r.exp.Build(r.ctx)
}

// Rows are the scored answers, in the tables' order (Score first; nil
// after Forget).
func (r *Answers) Rows() []score.Row { return r.rows }

// Schema is the study's answer schema (Score first).
func (r *Answers) Schema() *score.Schema { return r.schema }

// StoreKey is the key of the store on disk when Rows are its rows, nil
// when they are not (Score first).
func (r *Answers) StoreKey() scored.Key { return r.storeKey }

// Built reports whether every table has been built (AllTables).
func (r *Answers) Built() bool { return r.tables != nil }

// AnswersTable is the answers table, made row by row (Score first).
func (r *Answers) AnswersTable() (*tables.Table, bool) { return r.set.Table("answers") }

// PlanNotes are the study's method notes (experiment.Noter), set by Score.
func (r *Answers) PlanNotes() []string { return slices.Clone(r.planNotes) }

// AddNote adds a note (Notes) that a writer of the run's files made.
func (r *Answers) AddNote(note string) {
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	r.notes = append(r.notes, note)
}

// Score scores the run once (or reads the scored answers the run keeps,
// when current) and prepares its tables, built when asked for.
func (r *Answers) Score() error {
	r.once.Do(func() {
		r.scored.Store(true)
		if _, err := r.Experiment(); err != nil {
			r.scorErr = fmt.Errorf("scoring run %s: %w", r.dir, err)
			return
		}
		rows, notes, err := r.scoredRows(r.ctx)
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

// Forget lets go of the scored rows and all that was built from them
// (the tables): the Answers are again as New left them,
// and the next call that needs them scores again, which reads them back
// from the store. Only when rows are the store's (storeKey), and not
// while another goroutine uses the Answers.
func (r *Answers) Forget() {
	r.rows, r.set, r.tables, r.scorErr, r.storeKey = nil, nil, nil, nil, nil
	r.keptNames.Clear()
	r.scored.Store(false)
	r.notes = r.notes[:r.openNotes:r.openNotes]
	r.planNotes = nil
	r.once, r.allOnce = sync.Once{}, sync.Once{}
}

// AllTables scores the run and builds every table (once), in report
// order; when the run keeps them all (keptAll), they are read instead.
func (r *Answers) AllTables() ([]*tables.Table, error) {
	if err := r.Score(); err != nil {
		return nil, err
	}
	r.allOnce.Do(func() {
		done := r.progress("tables")
		defer done()
		if ts, ok := r.keptAll(); ok {
			r.tables = ts
			return
		}
		r.tables = r.set.All()
		for _, t := range r.tables {
			t.Simulated = r.manifest.Simulated
		}
		if r.keep(r.tables...) {
			r.keepIndex(r.tables)
		}
	})
	return r.tables, nil
}

// Tables lists the run's tables, in report order (AllTables).
func (r *Answers) Tables() ([]tables.Info, error) {
	ts, err := r.AllTables()
	if err != nil {
		return nil, err
	}
	out := make([]tables.Info, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Info())
	}
	return out, nil
}

// Table returns one table by name, building only it and what it needs.
func (r *Answers) Table(name string) (*tables.Table, error) {
	// With the rows in memory, a table already built from them is the
	// one: its kept file is not read.
	if r.scored.Load() && r.Score() == nil {
		if t, ok := r.set.Built(name); ok {
			r.keep(t) // built beside another: kept once
			return r.served(t), nil
		}
	}
	if t, ok := r.keptTable(name); ok {
		return t, nil
	}
	if err := r.Score(); err != nil {
		return nil, err
	}
	if err := r.ctx.Err(); err != nil {
		return nil, fmt.Errorf("building table %s of run %s: %w", name, r.dir, err)
	}
	done := r.progress("table " + name)
	t, ok := r.set.Table(name)
	done()
	if ok {
		r.keep(t)
		return r.served(t), nil
	}
	ts, err := r.AllTables()
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("run %s has no table %q (it has %s)", r.dir, name, strings.Join(tableNames(ts), ", "))
}

// served is a table as a caller gets it: held, and simulated when the run is.
func (r *Answers) served(t *tables.Table) *tables.Table {
	t = t.Held()
	t.Simulated = r.manifest.Simulated
	return t
}

// Notes are what opening and scoring noticed, then the plan's method notes.
func (r *Answers) Notes() []string {
	r.Score()
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	return slices.Concat(r.notes, r.planNotes, r.keptNotes)
}

// RunNotes is a copy of the notes a reader needs before any number:
// opening's and scoring's, then the kept tables' (Notes without the
// plan's method notes).
func (r *Answers) RunNotes() []string {
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	return slices.Concat(r.notes, r.keptNotes)
}

// Scored is the number of scored answers: a current store's count, else scored.
func (r *Answers) Scored() (int, error) {
	if !r.scored.Load() && !r.cfg.NoStore {
		if k, err := r.scoringKey(); err == nil {
			if m, err := scored.ReadMeta(filepath.Join(r.dir, scored.FileName)); err == nil && len(k.Changed(m.Key)) == 0 {
				return m.Rows, nil
			}
		}
	}
	if err := r.Score(); err != nil {
		return 0, err
	}
	return len(r.rows), nil
}

// WriteTables writes every table as CSV under DIR/tables under the
// directory's shared lock, and returns them.
func (r *Answers) WriteTables() ([]*tables.Table, error) {
	lk, err := records.LockDir(r.dir, records.Shared)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	ts, err := r.AllTables()
	if err != nil {
		return nil, err
	}
	if ts == nil {
		return nil, errors.New("no tables")
	}
	return ts, tables.Write(filepath.Join(r.dir, "tables"), ts)
}
