// Package run executes an experiment into a run directory:
// DIR/records.jsonl (one record per request, see engine.Record) and
// DIR/manifest.json (server provenance, inputs, decoding, counts).
// A run is resumable: started again with the same experiment and
// directory, it sends only the requests that have no ok record yet, and
// answers from the response cache whatever was answered before.
package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/progress"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// ToolVersion is written into manifests.
const ToolVersion = "bhasha 0.1.0"

// ManifestFile is the manifest's name inside a run directory.
const ManifestFile = "manifest.json"

// Options for Execute.
type Options struct {
	Out         string    // run directory
	Endpoint    string    // replaces every model's endpoints when set
	Endpoints   []string  // replicas that replace every model's endpoints (with Endpoint, if set)
	Concurrency int       // per-replica concurrency override when > 0
	NoCache     bool      // do not answer from the cache (answers are still stored)
	CacheDir    string    // "" for cache.DefaultDir()
	Log         io.Writer // messages and the progress bar (nil: discard)
	// ArchiveChanged: when recorded requests are now asked differently
	// (the experiment changed), move their records to DIR/archive/ and
	// ask them again, instead of stopping with an error.
	ArchiveChanged bool
	// Progress, if set, receives the run's state as records arrive (at
	// most every 100 ms) and at the end of each stage: for a notebook
	// display or any other view; the terminal bar on Log is separate.
	Progress func(Progress)
	// Engine, if set, adjusts engine options after the experiment's (tests).
	Engine func(*engine.Options)
}

// Progress is a run's state during one stage.
type Progress struct {
	Stage, Stages int
	Done, Total   int // records written in this stage, and requests it sends or answers from the cache
	Failed        int
	Cached        int
	Rate          float64 // records per second since the stage started
	Elapsed       time.Duration
	Final         bool // the stage has ended
}

// ExperimentFile is the copy of the experiment inside a run directory,
// with every path made absolute, so that the run can be reopened from
// anywhere (bhasha.Open) even when the experiment was built in Go.
const ExperimentFile = "experiment.yaml"

// Counts are the manifest's tallies.
type Counts struct {
	Records       int `json:"records"`         // records in records.jsonl
	OK            int `json:"ok"`              // of which ok
	Failed        int `json:"failed"`          // of which failed
	Resumed       int `json:"resumed"`         // ok records found from earlier runs
	CachedThisRun int `json:"cached_this_run"` // answered from the cache by this run
	SentThisRun   int `json:"sent_this_run"`   // sent to a server by this run
}

// DatasetInfo describes a study's data in the manifest.
type DatasetInfo struct {
	Name    string         `json:"name"`
	Items   int            `json:"items"`
	Skipped []item.Problem `json:"skipped,omitempty"` // invalid records skipped (dataset.skip_invalid)
	// Missing counts, per language/form, the items absent there (alignment gaps).
	Missing map[string]int `json:"missing,omitempty"`
	Notes   []string       `json:"notes,omitempty"`
}

// Manifest is DIR/manifest.json. It never holds API keys.
type Manifest struct {
	Tool           string            `json:"tool"`
	Experiment     string            `json:"experiment"`
	ExperimentFile string            `json:"experiment_file,omitempty"`
	ExperimentHash string            `json:"experiment_sha256,omitempty"`
	Inputs         map[string]string `json:"inputs_sha256"`
	Decoding       engine.Decoding   `json:"decoding"`
	// Decodings holds the decoding each strategy (or condition) and stage
	// was asked with, as sent; a group asked in several ways lists each.
	Decodings map[string][]engine.Decoding `json:"decodings,omitempty"`
	// Archived lists the records moved aside because the experiment
	// changed (--archive-changed).
	Archived  []string           `json:"archived,omitempty"`
	Models    []engine.ModelInfo `json:"models"`
	Simulated bool               `json:"simulated"`
	Cache     string             `json:"cache,omitempty"`
	ReadCache bool               `json:"read_cache"`
	Started   time.Time          `json:"started"`
	Ended     *time.Time         `json:"ended,omitempty"`
	Status    string             `json:"status"` // running, complete, incomplete (some failed), interrupted
	Counts    Counts             `json:"counts"`
	Templates map[string]string  `json:"templates_sha256,omitempty"`
	// InputChanges lists inputs that differ from those the kept records
	// were made from (Inputs and Templates stay the earlier ones).
	InputChanges []string     `json:"input_changes,omitempty"`
	Dataset      *DatasetInfo `json:"dataset,omitempty"`
	Blocked      int          `json:"blocked,omitempty"` // requests withheld: their first stage has no answer
	Repairs      []string     `json:"repairs,omitempty"`
	Error        string       `json:"error,omitempty"`
}

// Execute runs exp into o.Out and returns the final manifest.
func Execute(ctx context.Context, exp *experiment.Experiment, o Options) (*Manifest, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	logf := func(format string, a ...any) { fmt.Fprintf(logw, format+"\n", a...) }
	if o.Concurrency < 0 {
		return nil, fmt.Errorf("concurrency must be positive (or 0 for the experiment's), not %d", o.Concurrency)
	}
	eps := slices.Clone(o.Endpoints)
	if o.Endpoint != "" {
		eps = append([]string{o.Endpoint}, eps...)
	}
	for _, ep := range eps {
		if err := engine.CheckEndpoint(ep); err != nil {
			return nil, fmt.Errorf("--endpoint: %w", err)
		}
	}
	if err := exp.Build(ctx); err != nil {
		return nil, err
	}
	if o.Out == "" {
		return nil, errors.New("run: no output directory")
	}
	lk, err := records.LockDir(o.Out, records.Exclusive)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	// The copy keeps the experiment as its author wrote it: endpoints given
	// for this run (--endpoint, the simulator's address) are not part of it.
	portable, err := exp.Portable()
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(o.Out, ExperimentFile), portable); err != nil {
		return nil, err
	}
	exp.Override(eps, o.Concurrency)
	expFile := exp.Path
	if abs, err := filepath.Abs(exp.Path); err == nil && exp.Path != "" {
		expFile = abs
	}
	m := &Manifest{Tool: ToolVersion, Experiment: exp.Name, ExperimentFile: expFile, ExperimentHash: exp.Hash, Decoding: exp.Decoding,
		Started: time.Now().UTC(), Status: "running", ReadCache: !o.NoCache}
	prev, perr := ReadManifest(o.Out)
	if perr == nil {
		// Keep the provenance of earlier runs until this one connects.
		m.Models, m.Simulated = prev.Models, prev.Simulated
	}
	inputs, err := exp.InputHashes()
	if err != nil {
		return nil, err
	}
	m.Inputs = inputs

	done, prep, err := records.Prepare(o.Out)
	if err != nil {
		return nil, err
	}
	for _, msg := range prep.Messages() {
		logf("%s", msg)
		m.Repairs = append(m.Repairs, msg)
	}
	m.Counts.Resumed = prep.Kept

	store, crep, err := cache.Open(o.CacheDir)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	if s := crep.String(); s != "" {
		logf("%s", s)
		m.Repairs = append(m.Repairs, s)
	}
	m.Cache = crep.Path

	eo := exp.EngineOptions()
	eo.Cache = store
	eo.ReadCache = !o.NoCache
	eo.Logf = logf
	if o.Engine != nil {
		o.Engine(&eo)
	}

	m.Templates = exp.Templates()
	if perr == nil && prep.Kept > 0 && len(prev.Inputs) > 0 {
		// The kept records were made from the earlier inputs: the manifest
		// keeps naming those, and lists what differs now, so that a report
		// still says so after a resume.
		changes, err := InputChanges(prev, exp)
		if err != nil {
			return nil, err
		}
		m.Inputs, m.Templates, m.InputChanges = prev.Inputs, prev.Templates, changes
		for _, c := range changes {
			logf("%s: warning: %s; the records kept from earlier runs were made from the earlier inputs", o.Out, c)
		}
	}
	if set := exp.Items(); set != nil {
		m.Dataset = &DatasetInfo{Name: set.Dataset, Items: len(set.Items), Skipped: set.Skipped, Notes: set.Notes, Missing: map[string]int{}}
		for lf, ids := range set.Check().Missing {
			m.Dataset.Missing[lf] = len(ids)
		}
		if len(set.Skipped) > 0 {
			logf("%s: %d invalid dataset record(s) skipped (listed in the manifest)", o.Out, len(set.Skipped))
		}
	}
	served := map[string]string{}
	for _, mc := range exp.ModelConfigs() {
		served[mc.Name] = mc.ServedName
	}
	var eng *engine.Engine
	var total engine.Stats
	var runErr error
	prior := records.OK{}
	for stage := 1; stage <= exp.Stages() && runErr == nil; stage++ {
		if stage > 1 {
			if prior, err = records.LoadOK(o.Out); err != nil {
				return nil, err
			}
		}
		lookup := prior.Lookup
		// Count what is left before connecting, so a finished run sends
		// nothing, and compare what is recorded with what is asked now.
		plan, err := planStage(exp, stage, lookup, done, served)
		if err != nil {
			return nil, err
		}
		for g, ds := range plan.decodings {
			if m.Decodings == nil {
				m.Decodings = map[string][]engine.Decoding{}
			}
			m.Decodings[g] = ds
		}
		pending := plan.pending
		if n := len(plan.changed); n > 0 {
			what := describeChanges(o.Out, plan.changed, exp, stage, lookup, served)
			if !o.ArchiveChanged {
				return nil, fmt.Errorf("%s: the experiment changed since these records were written: %d of the %d recorded request(s) of stage %d are now asked differently: %s. Nothing was sent. Run into a new --out, or run again with --archive-changed to move the old records to %s and ask the changed requests",
					o.Out, n, plan.recorded, stage, what, filepath.Join(o.Out, records.ArchiveDir))
			}
			apath, moved, err := records.Archive(o.Out, plan.changed, "changed-"+time.Now().UTC().Format("20060102T150405Z"))
			if err != nil {
				return nil, err
			}
			for k := range plan.changed {
				done.Remove(k)
			}
			prep.Kept -= moved
			m.Counts.Resumed = prep.Kept
			pending += moved
			msg := fmt.Sprintf("stage %d: %d record(s) of requests now asked differently (%s) moved to %s", stage, moved, what, apath)
			logf("%s: %s", o.Out, msg)
			m.Archived = append(m.Archived, msg)
		}
		m.Blocked = plan.withheld
		if m.Blocked > 0 {
			logf("%s: stage %d: %d request(s) withheld because their first stage has no answer", o.Out, stage, m.Blocked)
		}
		if pending == 0 {
			continue
		}
		if eng == nil {
			var err error
			if eng, err = connect(ctx, exp, eo, m, o.Out); err != nil {
				return nil, err
			}
		}
		st, err := runStage(ctx, eng, exp, stage, lookup, done, pending, o, logw)
		total.Done += st.Done
		total.OK += st.OK
		total.Failed += st.Failed
		total.Cached += st.Cached
		total.Sent += st.Sent
		runErr = err
	}
	if eng == nil && runErr == nil {
		logf("%s: nothing to do, all %d requests have records", o.Out, prep.Kept)
	}
	return m, finish(o.Out, m, prep.Kept, total, runErr)
}

// connect builds the engine (reading every endpoint's provenance) and
// writes the manifest as it stands.
func connect(ctx context.Context, exp *experiment.Experiment, eo engine.Options, m *Manifest, out string) (*engine.Engine, error) {
	eng, err := engine.New(ctx, exp.ModelConfigs(), eo)
	if err != nil {
		return nil, fmt.Errorf("connecting to the experiment's endpoints: %w", err)
	}
	m.Models = eng.Models()
	m.Simulated = false
	for _, mi := range m.Models {
		for _, s := range mi.Servers {
			for _, sm := range s.Models {
				if sm.ID == mi.ServedName && sm.IsSimulated() {
					m.Simulated = true
				}
			}
		}
	}
	return eng, writeManifest(out, m)
}

// runStage sends one stage's pending requests and appends their records.
func runStage(ctx context.Context, eng *engine.Engine, exp *experiment.Experiment, stage int, lookup func(engine.Key) (*engine.Record, bool),
	done *records.KeySet, pending int, o Options, logw io.Writer) (engine.Stats, error) {
	w, err := records.Create(o.Out)
	if err != nil {
		return engine.Stats{}, err
	}
	label := exp.Name
	if exp.Stages() > 1 {
		label = fmt.Sprintf("%s stage %d", exp.Name, stage)
	}
	bar := progress.New(logw, label, pending)
	doneSoFar, failedSoFar, cachedSoFar := 0, 0, 0
	start, lastReport := time.Now(), time.Time{}
	report := func(final bool) {
		if o.Progress == nil {
			return
		}
		el := time.Since(start)
		o.Progress(Progress{Stage: stage, Stages: exp.Stages(), Done: doneSoFar, Total: pending, Failed: failedSoFar, Cached: cachedSoFar,
			Rate: float64(doneSoFar) / max(el.Seconds(), 1e-9), Elapsed: el, Final: final})
	}
	reqs := func(yield func(engine.Request, error) bool) {
		for r, err := range exp.StreamStage(stage, lookup, nil) {
			if err == nil && done.Has(r.Key.String()) {
				continue
			}
			if !yield(r, err) {
				return
			}
		}
	}
	st, runErr := eng.Run(ctx, reqs, func(rec *engine.Record) error {
		doneSoFar++
		if rec.Status == engine.StatusFailed {
			failedSoFar++
		}
		if rec.Cached {
			cachedSoFar++
		}
		bar.Update(doneSoFar, failedSoFar)
		if now := time.Now(); now.Sub(lastReport) >= 100*time.Millisecond {
			lastReport = now
			report(false)
		}
		exp.Extract(rec)
		return w.Write(rec)
	})
	bar.Finish(st.Done, failedSoFar)
	report(true)
	if err := w.Close(); err != nil && runErr == nil {
		runErr = err
	}
	// Count what reached the file, not what was handed to the writer: on
	// a full disk the difference is lost (and re-served from the cache on
	// resume).
	wr := w.Written()
	st.Done, st.OK, st.Failed = wr.Records, wr.OK, wr.Failed
	return st, runErr
}

func finish(dir string, m *Manifest, kept int, st engine.Stats, runErr error) error {
	end := time.Now().UTC()
	m.Ended = &end
	m.Counts.Records = kept + st.Done
	m.Counts.OK = kept + st.OK
	m.Counts.Failed = st.Failed
	m.Counts.CachedThisRun = st.Cached
	m.Counts.SentThisRun = st.Sent
	switch {
	case runErr != nil && errors.Is(runErr, context.Canceled):
		m.Status = "interrupted"
	case runErr != nil:
		m.Status = "interrupted"
		m.Error = runErr.Error()
	case st.Failed > 0:
		m.Status = "incomplete"
	default:
		m.Status = "complete"
	}
	if err := writeManifest(dir, m); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// InputChanges compares the inputs a run recorded (inputs_sha256 and
// templates_sha256 of its manifest) with exp's as they are now, and says
// which changed, appeared or disappeared since the run: a report over such
// a run scores old answers against new data or prompts.
func InputChanges(m *Manifest, exp *experiment.Experiment) ([]string, error) {
	now, err := exp.InputHashes()
	if err != nil {
		return nil, err
	}
	var out []string
	compare := func(what string, then, now map[string]string) {
		for _, k := range unionKeys(then, now) {
			a, b := then[k], now[k]
			switch {
			case a == b:
			case a == "":
				out = append(out, fmt.Sprintf("%s %s is new since the run", what, k))
			case b == "":
				out = append(out, fmt.Sprintf("%s %s was part of the run and is gone", what, k))
			default:
				out = append(out, fmt.Sprintf("%s %s changed since the run (sha256 %.12s… → %.12s…)", what, k, a, b))
			}
		}
	}
	// The experiment file is not an input here (its hash is
	// experiment_sha256): a changed request shows up where it matters (a
	// resumed run stops), and a copy of the same experiment elsewhere
	// (DIR/experiment.yaml) is not a change.
	then := maps.Clone(m.Inputs)
	delete(then, m.ExperimentFile) // manifests written before experiment_sha256
	compare("input", then, now)
	compare("template", m.Templates, exp.Templates())
	return out, nil
}

// WriteManifest writes DIR/manifest.json atomically.
func WriteManifest(dir string, m *Manifest) error { return writeManifest(dir, m) }

func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'))
}

// ReadManifest reads DIR/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}
