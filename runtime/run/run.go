// Package run executes a job (an experiment as the runtime sees it: Job)
// into a run directory:
// DIR/records.jsonl (one record per request, see engine.Record) and
// DIR/manifest.json (server provenance, inputs, decoding, counts).
// A run is resumable: started again with the same experiment and
// directory, it sends only the requests that have no ok record yet, and
// answers from the response cache whatever was answered before.
//
// Memory does not follow the records: each stage's requests are streamed
// to the engine, what a later stage reads of an earlier one is looked up
// in a scratch file (buildPrior: 16 bytes a record it reads), and the keys
// already answered are a records.KeySet (about 80 bytes a key).
package run

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/progress"
	"github.com/bhashalab/bhasha/runtime/records"
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
	// Send, if set, limits what is sent to the requests whose role it
	// accepts (bhasha report: judge verdicts on the answers the run has).
	// The others stay pending: the manifest counts them (Pending) and the
	// run's status is "partial".
	Send func(engine.Role) bool
	// Hint names the remedies in refusals: the flags of the command line
	// by default, the Go options from the bhasha package.
	Hint Hints
}

// Hints are how a refusal names its remedies.
type Hints struct {
	NewOut         string // default "run into a new --out"
	ArchiveChanged string // default "run again with --archive-changed"
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
	CachedThisRun int `json:"cached_this_run"` // answered from the cache by this run, from earlier runs' answers
	// DuplicatesThisRun counts the requests asked twice in this run with
	// the same body: sent once, the second answered from the first.
	DuplicatesThisRun int `json:"duplicates_this_run,omitempty"`
	SentThisRun       int `json:"sent_this_run"` // sent to a server by this run
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
	Tool           string `json:"tool"`
	Experiment     string `json:"experiment"`
	ExperimentFile string `json:"experiment_file,omitempty"`
	ExperimentHash string `json:"experiment_sha256,omitempty"`
	// Shard is "K/N" when the run holds shard K of N of the experiment
	// (package shard), and "" when it holds the whole experiment.
	Shard string `json:"shard,omitempty"`
	// CopyHash is the SHA-256 of DIR/experiment.yaml as the run wrote it:
	// a copy edited since is named when the run is opened.
	CopyHash string            `json:"experiment_copy_sha256,omitempty"`
	Inputs   map[string]string `json:"inputs_sha256"`
	Decoding engine.Decoding   `json:"decoding"`
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
	Status    string             `json:"status"` // running, complete, incomplete (some failed), partial (requests left unasked), interrupted
	Counts    Counts             `json:"counts"`
	// Requests counts the requests the experiment asks, as known when the
	// run started (those withheld for a first stage without an answer
	// included): a run killed part-way still says how much it had to do.
	Requests int `json:"requests,omitempty"`
	// Pending counts the requests the run had yet to ask when it stopped
	// (those withheld for a first stage without an answer included).
	Pending   int               `json:"pending,omitempty"`
	Templates map[string]string `json:"templates_sha256,omitempty"`
	// InputChanges lists inputs that differ from those the kept records
	// were made from (Inputs and Templates stay the earlier ones).
	InputChanges []string     `json:"input_changes,omitempty"`
	Dataset      *DatasetInfo `json:"dataset,omitempty"`
	Blocked      int          `json:"blocked,omitempty"` // requests withheld: their first stage has no answer
	Repairs      []string     `json:"repairs,omitempty"`
	Warnings     []string     `json:"warnings,omitempty"` // what the run noticed about its answers (a simulator that did not know the items)
	Error        string       `json:"error,omitempty"`
	// RecordsSealed says every record of the run was sealed when written
	// (its record_sha256): a reader then flags an unsealed line wherever
	// it is (records.ScanDir). False for a run that kept records written
	// before records were sealed, and in a manifest from before the field.
	RecordsSealed bool `json:"records_sealed,omitempty"`
}

// Execute runs the job j into o.Out and returns the final manifest.
//
// A run directory holds one experiment answered by the model identities
// its records name. Before anything is written or sent, Execute reads the
// directory and refuses, naming what it found, when: a run file is a
// symbolic link; the manifest, the run's copy of the experiment or the
// records name another experiment; records were edited after they were
// written (their seal, see records.ScanDir), disagree for one key, answer
// requests the experiment does not ask, or are asked differently now; or
// (once the servers were asked who they are, which sends no model request)
// a model's identity (served id, root, revision) differs from the one that
// answered its records. With ArchiveChanged, every such record except
// those of another experiment is moved to DIR/archive/ and asked again. A
// refusal leaves every file as it was (a directory that did not exist is
// removed again).
//
// A run with nothing left to send (Send nil) still asks the servers who
// they are: records answered by another identity than the one now served
// are then a warning (logged and in the manifest's Warnings), not a
// refusal, since no answer of the new identity joins them; servers that
// cannot be asked are logged, and the run completes without them. A pass
// that sends only some roles (Send set) and has nothing to send contacts
// no server, and keeps the earlier manifest's warnings.
//
// A run directory whose manifest is lost is resumed with the provenance
// its records carry (each names the identity that answered it and whether
// a simulator did); records too old to say are refused.
func Execute(ctx context.Context, j *Job, o Options) (*Manifest, error) {
	logw := cmp.Or(o.Log, io.Discard)
	o.Hint.NewOut = cmp.Or(o.Hint.NewOut, "run into a new --out")
	o.Hint.ArchiveChanged = cmp.Or(o.Hint.ArchiveChanged, "run again with --archive-changed")
	// A log.Logger writes one message at a time (the engine logs from its workers).
	logf := log.New(logw, "", 0).Printf
	if o.Concurrency < 0 {
		return nil, fmt.Errorf("concurrency must be positive (or 0 for the experiment's), not %d", o.Concurrency)
	}
	eps := slices.Clone(o.Endpoints)
	if o.Endpoint != "" {
		eps = append([]string{o.Endpoint}, eps...)
	}
	for _, ep := range eps {
		if err := engine.CheckEndpoint(ep); err != nil {
			return nil, fmt.Errorf("endpoint: %w", err)
		}
	}
	if err := j.check(); err != nil {
		return nil, err
	}
	if o.Out == "" {
		return nil, errors.New("run: no output directory")
	}
	_, statErr := os.Stat(o.Out)
	created := errors.Is(statErr, os.ErrNotExist)
	lk, err := records.LockDir(o.Out, records.Exclusive)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	refuse := func(err error) (*Manifest, error) {
		if created {
			lk.Unlock()
			removeEmptyRun(o.Out)
		}
		return nil, err
	}
	models := j.models(eps, o.Concurrency)

	// Read the directory as it is; nothing is written before the checks.
	prev, copied, scan, err := readDir(o.Out, j.Name, o.Hint)
	if err != nil {
		return refuse(err)
	}
	m := &Manifest{Tool: ToolVersion, Experiment: j.Name, ExperimentFile: absOf(j.Path), ExperimentHash: j.Hash,
		CopyHash: engine.RequestDigest(j.Copy), Shard: j.Shard, Decoding: j.Decoding, Started: time.Now().UTC(), Status: "running", ReadCache: !o.NoCache,
		Decodings: map[string][]engine.Decoding{}}
	repaired := func(msg string) {
		logf("%s", msg)
		m.Repairs = append(m.Repairs, msg)
	}
	// The Writer seals every record; the kept ones are all sealed unless
	// some were written before records were (and are accepted as such).
	m.RecordsSealed = scan.Unsealed == 0
	if prev != nil && bytes.Equal(copied, j.Copy) {
		// Run again from its own copy (bhasha report completing a stage):
		// the manifest keeps naming the file the run was made from.
		m.ExperimentFile, m.ExperimentHash = prev.ExperimentFile, prev.ExperimentHash
	}
	if prev == nil && scan.Report.Kept > 0 {
		rebuilt, err := provenanceFromRecords(scan, o.Out, o.Hint)
		if err != nil {
			return refuse(err)
		}
		prev = rebuilt
		for _, msg := range rebuilt.Repairs {
			repaired(msg)
		}
	}
	if prev != nil {
		// Keep the provenance of earlier runs until this one connects.
		m.Models, m.Simulated = prev.Models, prev.Simulated
		if !m.Simulated && scan.Simulated > 0 {
			msg := fmt.Sprintf("%s: %d record(s) say a simulator answered them while the manifest said it was not simulated: the run is labelled SIMULATED", o.Out, scan.Simulated)
			m.Simulated = true
			m.Repairs = append(m.Repairs, msg)
		}
	}
	m.Inputs = map[string]string{}
	maps.Copy(m.Inputs, j.Inputs)
	m.Templates = maps.Clone(j.Templates)

	// Records that cannot be trusted as they stand.
	archive := map[int]string{} // line -> why, moved aside with --archive-changed
	var problems []string
	if len(scan.Foreign) > 0 {
		problems = append(problems, fmt.Sprintf("%s: %d record(s) belong to another experiment than %q: %s", scan.Path, len(scan.Foreign), j.Name, scan.Others(j.Name)))
		for _, fl := range scan.Foreign {
			archive[fl.Line] = "another experiment's"
		}
	}
	if err := scan.EditedError(); err != nil {
		problems = append(problems, err.Error())
		for _, f := range scan.Edited {
			archive[f.Line] = "edited"
		}
	}
	if err := scan.ConflictError(); err != nil {
		problems = append(problems, err.Error())
		for _, c := range scan.Conflicts {
			for _, l := range c.Lines {
				archive[l] = "conflicting"
			}
		}
	}

	served := map[string]string{}
	for _, mc := range models {
		served[mc.Name] = mc.ServedName
	}
	// Plan every stage against the records: changed requests, and records
	// of requests not asked; later stages look up earlier ones (buildPrior).
	priors := make([]*scratch, j.Stages+1) // by stage
	plans := make([]stagePlan, j.Stages+1)
	defer func() {
		for _, p := range priors {
			p.Close()
		}
	}()
	// replan indexes the records stage looks up (none when withRecords is
	// false) and plans the stage against them.
	replan := func(stage int, withRecords bool) (err error) {
		priors[stage].Close()
		priors[stage] = nil
		if withRecords {
			if priors[stage], err = buildPrior(o.Out, j, stage); err != nil {
				return err
			}
		}
		if plans[stage], err = planStage(ctx, j, stage, priors[stage].Lookup, scan.Done, served, o.Send, planProgress(logf, j.Name, stage, j.Stages)); err != nil {
			return err
		}
		return priors[stage].Err()
	}
	// The recorded keys asked differently now, by stage (a key is of one stage).
	var changedBy []*records.KeySet
	nChanged := 0
	changed := func(key string) bool {
		return slices.ContainsFunc(changedBy, func(s *records.KeySet) bool { return s.Has(key) })
	}
	asked, pendingAll, held := 0, 0, 0
	var changeNotes []string
	for stage := 1; stage <= j.Stages; stage++ {
		if err := replan(stage, scan.Report.Kept > 0); err != nil {
			return refuse(err)
		}
		plan := plans[stage]
		asked += plan.recorded
		pendingAll += plan.pending
		held += plan.held + plan.withheld
		if n := plan.changed.Len(); n > 0 {
			changeNotes = append(changeNotes, fmt.Sprintf("%d of the %d recorded request(s) of stage %d are now asked differently: %s",
				n, plan.recorded, stage, describeChanges(o.Out, plan.changed, j, stage, priors[stage].Lookup, served)))
			changedBy = append(changedBy, plan.changed)
			nChanged += n
		}
	}
	if len(changeNotes) > 0 {
		problems = append(problems, fmt.Sprintf("%s: the experiment changed since these records were written: %s", o.Out, strings.Join(changeNotes, "; ")))
	}
	if extra := scan.Done.Unvisited(); len(extra) > 0 {
		problems = append(problems, fmt.Sprintf("%s: %d record(s) answer requests this experiment does not ask (lines %s)", scan.Path, len(extra), lineList(scan, extra)))
		for _, l := range extra {
			archive[l] = "not asked"
		}
	}
	if len(problems) > 0 && !o.ArchiveChanged {
		return refuse(fmt.Errorf("%s. Nothing was sent and no file was changed. %s, or %s to move these records to %s and ask again what the experiment asks",
			strings.Join(problems, ". "), capitalize(o.Hint.NewOut), o.Hint.ArchiveChanged, filepath.Join(o.Out, records.ArchiveDir)))
	}

	// Connect (asking the servers who they are) and compare the identities
	// with the records'; a run with nothing to send (Send nil) asks too.
	eo := j.Engine
	eo.Logf = logf
	archivedAny := false
	willSend := pendingAll > 0 || (o.Send == nil && (nChanged > 0 || len(archive) > 0))
	var eng *engine.Engine
	var store *cache.Store
	checked := false   // the servers said which identities they serve
	identityWarn := "" // the records were answered by other identities, and stay
	if willSend || o.Send == nil {
		var crep cache.OpenReport
		if willSend || o.ArchiveChanged { // asking again what another identity answered sends
			if store, crep, err = cache.Open(o.CacheDir); err != nil {
				return refuse(err)
			}
			defer store.Close()
			if s := crep.Converted; s != "" {
				repaired(s)
			}
			eo.Cache = store
			eo.ReadCache = !o.NoCache
		}
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if !willSend {
			// Only a check: servers that do not answer do not hold up a
			// run that has nothing to send.
			cctx, cancel = context.WithTimeout(ctx, 20*time.Second)
		}
		conn, err := engine.New(cctx, models, eo)
		cancel()
		switch {
		case err != nil && willSend:
			return refuse(fmt.Errorf("connecting to the experiment's endpoints: %w", err))
		case err != nil:
			logf("%s: the servers could not be asked which model identities they serve, so whether the records' identities are still served was not checked (nothing was to be sent): %v", o.Out, err)
		default:
			checked = true
			pick, msgs := identityChanges(scan, prev, conn.Models())
			var pickModel func(key string, id *engine.Identity) bool
			switch {
			case msgs == nil:
			case o.ArchiveChanged:
				pickModel = pick
			case willSend:
				return refuse(fmt.Errorf("%s: the models changed since these records were written: %s. Nothing was sent and no file was changed. %s, or %s to move the old identity's records to %s and ask them again",
					o.Out, strings.Join(msgs, "; "), capitalize(o.Hint.NewOut), o.Hint.ArchiveChanged, filepath.Join(o.Out, records.ArchiveDir)))
			default:
				identityWarn = identityWarning(o.Out, msgs, o.Hint)
				logf("%s: warning: %s", o.Out, identityWarn)
			}
			if len(archive) > 0 || nChanged > 0 || pickModel != nil {
				// Everything checked: move aside what will be asked again.
				name := "changed-" + time.Now().UTC().Format("20060102T150405Z")
				apath, n, err := scan.Commit(func(line int, key string, id *engine.Identity) bool {
					return archive[line] != "" || changed(key) || (pickModel != nil && pickModel(key, id))
				}, name)
				if err != nil {
					return nil, err
				}
				archivedAny = true
				msg := fmt.Sprintf("%d record(s) moved to %s (%s)", n, apath, archiveWhy(archive, nChanged, pickModel != nil))
				logf("%s: %s", o.Out, msg)
				m.Archived = append(m.Archived, msg)
			}
			if willSend || archivedAny {
				eng, m.Cache = conn, crep.Path
			}
		}
	}
	if eng == nil && prev != nil {
		// Nothing is asked: keep the earlier warnings, but for identities asked again.
		for _, w := range prev.Warnings {
			if !checked || !strings.HasPrefix(w, identityWarningLead) {
				m.Warnings = append(m.Warnings, w)
			}
		}
	}
	if identityWarn != "" {
		m.Warnings = append(m.Warnings, identityWarn)
	}
	// The checks passed: from here the directory is this run's.
	if err := atomicfile.WriteFile(filepath.Join(o.Out, ExperimentFile), j.Copy); err != nil {
		return nil, err
	}
	if eng == nil {
		// Nothing is asked again: a damaged segment stays, read for what it holds.
		scan.LeaveDamaged()
	}
	if _, _, err := scan.Commit(nil, ""); err != nil {
		return nil, err
	}
	for _, msg := range scan.Report.Messages() {
		repaired(msg)
	}
	done := scan.Done
	m.Counts.Resumed = done.Len()
	if prev != nil && done.Len() > 0 && len(prev.Inputs) > 0 {
		// The manifest keeps the inputs the kept records were made from,
		// adds the new ones, and lists what changed or is gone.
		delete(m.Inputs, prev.ExperimentFile)
		maps.Copy(m.Inputs, prev.Inputs)
		if m.Templates == nil {
			m.Templates = maps.Clone(prev.Templates)
		} else {
			maps.Copy(m.Templates, prev.Templates)
		}
		m.InputChanges = slices.DeleteFunc(InputChanges(prev, j.Inputs, j.Templates), func(c string) bool { return strings.HasSuffix(c, newSinceRun) })
		for _, c := range m.InputChanges {
			logf("%s: warning: %s; the records kept from earlier runs were made from the earlier inputs", o.Out, c)
		}
	}
	if d := j.Dataset; d != nil {
		m.Dataset = &DatasetInfo{Name: d.Name, Items: d.Items, Skipped: d.Skipped, Notes: d.Notes, Missing: maps.Clone(d.Missing)}
		if len(d.Skipped) > 0 {
			logf("%s: %d invalid dataset record(s) skipped (listed in the manifest)", o.Out, len(d.Skipped))
		}
		for _, n := range d.Notes {
			logf("%s: dataset: %s", o.Out, n)
		}
	}
	m.Requests = asked + pendingAll + held
	if eng != nil { // the engine's models, and whether a simulator answers them or answered kept records
		m.Models, m.Simulated = eng.Models(), scan.Simulated > 0
		for _, mi := range m.Models {
			for _, s := range mi.Servers {
				m.Simulated = m.Simulated || slices.ContainsFunc(s.Models, func(sm engine.ServedModel) bool { return sm.ID == mi.ServedName && sm.IsSimulated() })
			}
		}
	}
	if err := WriteManifest(o.Out, m); err != nil {
		return nil, err
	}
	var total engine.Stats
	var runErr error
	wrote := archivedAny
	for stage := 1; stage <= j.Stages && runErr == nil && eng != nil; stage++ {
		// The planning pass's plan stands until a record is written or moved.
		if wrote {
			if err := replan(stage, true); err != nil {
				return nil, err
			}
		}
		prior, plan := priors[stage], plans[stage]
		lookup := prior.Lookup
		m.Pending += plan.held + plan.withheld
		maps.Copy(m.Decodings, plan.decodings)
		pending := plan.pending
		if n := plan.changed.Len(); n > 0 {
			// Stage 1 was asked again (--archive-changed), so this stage's
			// prompts, built from its answers, changed too.
			what := describeChanges(o.Out, plan.changed, j, stage, lookup, served)
			if !o.ArchiveChanged {
				return nil, fmt.Errorf("%s: stage %d: %d of the %d recorded request(s) are now asked differently: %s. %s to move the old records to %s and ask them again",
					o.Out, stage, n, plan.recorded, what, capitalize(o.Hint.ArchiveChanged), filepath.Join(o.Out, records.ArchiveDir))
			}
			now, err := records.ScanDir(o.Out, j.Name)
			if err != nil {
				return nil, err
			}
			apath, moved, err := now.Commit(func(_ int, key string, _ *engine.Identity) bool {
				if !plan.changed.Has(key) {
					return false
				}
				done.Remove(key)
				return true
			}, "changed-"+time.Now().UTC().Format("20060102T150405Z"))
			if err != nil {
				return nil, err
			}
			wrote = true
			m.Counts.Resumed = done.Len()
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
		st, err := runStage(ctx, eng, j, stage, lookup, done, pending, o, logw, lk)
		if err == nil {
			err = prior.Err() // a request that could not read its earlier stage was not sent
		}
		wrote = wrote || st.Done > 0
		m.Pending += max(0, pending-st.OK) // asked and not answered (failed, or interrupted)
		total.Done += st.Done
		total.OK += st.OK
		total.Failed += st.Failed
		total.Cached += st.Cached
		total.Duplicates += st.Duplicates
		total.Sent += st.Sent
		runErr = err
	}
	if eng != nil {
		if n := eng.UnknownItems(); n > 0 {
			msg := fmt.Sprintf("%d answer(s) came from Bhasha's simulator without it knowing their item (it answers \"I don't know\"): start it with `bhasha sim --config %s` (or --dataset) to know the experiment's items", n, absOf(j.Path))
			logf("%s: warning: %s", o.Out, msg)
			m.Warnings = append(m.Warnings, msg)
		}
	} else {
		m.Pending = pendingAll + held
		if m.Pending == 0 {
			logf("%s: nothing to do, all %d requests have records", o.Out, asked)
		} else {
			logf("%s: %d of %d requests have records; %d are left to ask and were not sent", o.Out, asked, asked+m.Pending, m.Pending)
		}
	}
	if runErr == nil {
		// Seal a live file over the seal size; convert older segments.
		said := func(s string) { logf("%s: %s", o.Out, s) }
		if seg, err := records.Seal(lk, o.Out, records.DefaultCloseSealBytes, said); err != nil {
			logf("%s: warning: %v (the records stay as they are, readable)", o.Out, err)
		} else if seg != "" {
			logf("%s: %s sealed into %s (Parquet; every reader reads it)", o.Out, records.FileName, seg)
		}
	}
	return m, finish(o.Out, m, m.Counts.Resumed, total, runErr)
}

// runStage sends one stage's pending requests and appends their records.
func runStage(ctx context.Context, eng *engine.Engine, j *Job, stage int, lookup func(engine.Key) (*engine.Record, bool),
	done *records.KeySet, pending int, o Options, logw io.Writer, lk *records.Lock) (engine.Stats, error) {
	w, err := records.CreateWith(o.Out, records.Options{Lock: lk, Log: func(s string) { fmt.Fprintf(logw, "%s: %s\n", o.Out, s) }})
	if err != nil {
		return engine.Stats{}, err
	}
	label := j.Name
	if j.Stages > 1 {
		label = fmt.Sprintf("%s stage %d", j.Name, stage)
	}
	bar := progress.New(logw, label, pending)
	p := Progress{Stage: stage, Stages: j.Stages, Total: pending}
	start, lastReport := time.Now(), time.Time{}
	report := func(final bool) {
		if o.Progress != nil {
			p.Elapsed, p.Final = time.Since(start), final
			p.Rate = float64(p.Done) / max(p.Elapsed.Seconds(), 1e-9)
			o.Progress(p)
		}
	}
	reqs := func(yield func(engine.Request, error) bool) {
		for r, err := range j.Requests(stage, lookup, nil) {
			if err == nil && (done.Has(r.Key.String()) || (o.Send != nil && !o.Send(r.Key.Role))) {
				continue
			}
			if !yield(r, err) {
				return
			}
		}
	}
	st, runErr := eng.Run(ctx, reqs, func(rec *engine.Record) error {
		p.Done++
		if rec.Status == engine.StatusFailed {
			p.Failed++
		}
		if rec.Cached {
			p.Cached++
		}
		bar.Update(p.Done, p.Failed)
		if now := time.Now(); now.Sub(lastReport) >= 100*time.Millisecond {
			lastReport = now
			report(false)
		}
		if j.Extract != nil && rec.Status == engine.StatusOK {
			j.Extract(rec)
		}
		return w.Write(rec)
	})
	bar.Finish(st.Done, p.Failed)
	report(true)
	if err := w.Close(); err != nil && runErr == nil {
		runErr = err
	}
	// Count what reached the file, not what was handed to the writer.
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
	m.Counts.CachedThisRun = st.Cached - st.Duplicates
	m.Counts.DuplicatesThisRun = st.Duplicates
	m.Counts.SentThisRun = st.Sent
	switch {
	case runErr != nil:
		m.Status = "interrupted"
		if !errors.Is(runErr, context.Canceled) {
			m.Error = runErr.Error()
		}
	case st.Failed > 0:
		m.Status = "incomplete"
	case m.Pending > 0:
		m.Status = "partial"
	default:
		m.Status = "complete"
	}
	if err := WriteManifest(dir, m); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// newSinceRun ends InputChanges' line for an input the run did not have.
const newSinceRun = "is new since the run"

// InputChanges compares the inputs a run recorded (inputs_sha256 and
// templates_sha256 of its manifest) with the experiment's as they are now
// (inputs and templates, as in Job), and says which changed, appeared or
// disappeared since the run: a report over such a run scores old answers
// against new data or prompts.
func InputChanges(m *Manifest, inputs, templates map[string]string) []string {
	var out []string
	compare := func(what string, then, now map[string]string) {
		for _, k := range unionKeys(then, now) {
			a, b := then[k], now[k]
			switch {
			case a == b:
			case a == "":
				out = append(out, fmt.Sprintf("%s %s %s", what, k, newSinceRun))
			case b == "":
				out = append(out, fmt.Sprintf("%s %s was part of the run and is gone", what, k))
			default:
				out = append(out, fmt.Sprintf("%s %s changed since the run (sha256 %.12s… → %.12s…)", what, k, a, b))
			}
		}
	}
	// The experiment file is not an input here (its hash is experiment_sha256).
	then := maps.Clone(m.Inputs)
	delete(then, m.ExperimentFile) // manifests written before experiment_sha256
	compare("input", then, inputs)
	compare("template", m.Templates, templates)
	return out
}

// WriteManifest writes DIR/manifest.json atomically.
func WriteManifest(dir string, m *Manifest) error {
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

// capitalize upper-cases the first letter of a sentence.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Lookup finds the record of an earlier stage by its key (a run's ok
// records). Execute's lookups return records holding Key, Fields, Status
// and Response: what the studies' request builders read (see buildPrior).
type Lookup = func(engine.Key) (*engine.Record, bool)

// Job is what a run needs of an experiment, built once by its caller
// (experiment.Experiment.Job) before Execute or batch.Export: its
// provenance, its models and engine limits, and its requests stage by
// stage. Execute and batch.Export read a Job and never change it; the
// runtime knows no experiment and no study beyond it.
type Job struct {
	// Name is the experiment's name: every record's key names it, and a
	// run directory holds the records of one name.
	Name string
	// Path is the experiment file ("" when the experiment was built in
	// Go), and Hash the SHA-256 of its bytes.
	Path, Hash string
	// Copy is the run's copy of the experiment (DIR/experiment.yaml), as
	// its author wrote it with every path made absolute: endpoints given
	// for one run (Options.Endpoint) are not part of it.
	Copy []byte
	// Decoding is the experiment's decoding, for the manifest.
	Decoding engine.Decoding
	// Inputs are the SHA-256 of each input file (dataset, requests), keyed
	// by absolute path; Templates those of the prompt templates, by name.
	Inputs, Templates map[string]string
	// Models are the engine's models, the judge included, with the
	// endpoints and concurrency the experiment names (Options.Endpoint and
	// Options.Concurrency replace them for one run).
	Models []engine.ModelConfig
	// Engine holds the experiment's engine limits.
	Engine engine.Options
	// Stages is the number of request stages (at least 1).
	Stages int
	// Requests yields the requests of stage (1-based) for every model;
	// prior finds the records of earlier stages. Requests that cannot be
	// built yet (their first stage has no answer) are not yielded: when
	// withheld is not nil it is called with each one's key as the stream
	// is read. The stream is the same each time it is read with the same
	// records.
	Requests func(stage int, prior Lookup, withheld func(engine.Key)) iter.Seq2[engine.Request, error]
	// Extract, when set, fills an ok record's Extracted the way the study
	// scores it, before the record is written.
	Extract func(rec *engine.Record)
	// Dataset describes the study's data for the manifest (nil when the
	// study reads no dataset).
	Dataset *DatasetInfo
	// Shard is "K/N" when the job is shard K of N of the experiment (its
	// requests are that shard's: package shard), for the manifest; "" for
	// the whole experiment.
	Shard string
}

// check reports a job that cannot be run: one without a name, stages or
// requests.
func (j *Job) check() error {
	switch {
	case j == nil:
		return errors.New("run: no job")
	case j.Name == "":
		return errors.New("run: the job has no experiment name")
	case j.Stages < 1:
		return errors.New("run: job " + j.Name + " has no stage")
	case j.Requests == nil:
		return errors.New("run: job " + j.Name + " has no requests")
	}
	return nil
}

// models are copies of the job's models with endpoints (when not empty)
// and per-replica concurrency n (when n > 0).
func (j *Job) models(endpoints []string, n int) []engine.ModelConfig {
	out := slices.Clone(j.Models)
	for i := range out {
		if len(endpoints) > 0 {
			out[i].Endpoints = slices.Clone(endpoints)
		}
		if n > 0 {
			out[i].MaxConcurrency = n
		}
	}
	return out
}
