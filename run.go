package bhasha

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// Table is a typed result table: named columns of strings, ints, floats
// and bools, rendered as CSV, Markdown or a gota DataFrame.
type Table = tables.Table

// TableInfo describes one table: name, what it holds, and the paper table
// or figure it mirrors.
type TableInfo = tables.Info

// Manifest is a run's provenance: servers, model identities, inputs,
// decoding, counts and whether the models were simulated.
type Manifest = run.Manifest

// Progress is a run's state, passed to OnProgress.
type Progress = run.Progress

// RunOption adjusts a run's configuration: the options below, or a
// program's own func(*RunConfig).
type RunOption func(*RunConfig)

// RunConfig is how Run runs an experiment: the runtime's options
// (run.Options: Out, Endpoints, Concurrency, NoCache, CacheDir, Log,
// Progress, ArchiveChanged, Send, Hint; Out defaults to runs/<experiment
// name>, Log to nothing) and what Run itself does before it (APIKeyEnv,
// ServedModels, Simulate). The RunOption functions set its fields.
type RunConfig struct {
	run.Options
	// APIKeyEnv names the variable holding every model's API key.
	APIKeyEnv string
	// ServedModels asks the first endpoint which models it serves when the
	// experiment still asks the simulated models (EndpointFromEnv).
	ServedModels bool
	// Simulate answers every model from the in-process simulator.
	Simulate bool
}

// JudgeOnly sends only judge requests, for the answers the run already
// has; every other request stays unasked, and the run is "partial" while
// any is left (bhasha report completes verdicts this way, never answers).
func JudgeOnly() RunOption {
	return func(c *RunConfig) { c.Send = func(r engine.Role) bool { return r.Kind == engine.RoleJudge } }
}

// RemedyNames says how refusals name their remedies: a new run directory
// and archiving changed records (the command line passes "run into a new
// --out" and "run again with --archive-changed"; the default names
// bhasha.Out and bhasha.ArchiveChanged).
func RemedyNames(newOut, archiveChanged string) RunOption {
	return func(c *RunConfig) { c.Hint = run.Hints{NewOut: newOut, ArchiveChanged: archiveChanged} }
}

// Simulator answers every model from the in-process simulator, whatever
// endpoints the experiment names (the demo's smoke experiments, a notebook
// tried before the GPUs are up). Everything it answers says SIMULATED.
func Simulator() RunOption { return func(c *RunConfig) { c.Simulate = true } }

// Out sets the run directory (default runs/<experiment name>).
func Out(dir string) RunOption { return func(c *RunConfig) { c.Out = dir } }

// Endpoint sends every model's requests to these base URLs (…/v1),
// replicas of one server or one gateway.
func Endpoint(urls ...string) RunOption {
	return func(c *RunConfig) { c.Endpoints = append(c.Endpoints, urls...) }
}

// APIKeyEnv names the environment variable that holds the endpoints' API
// key (never the key itself).
func APIKeyEnv(name string) RunOption { return func(c *RunConfig) { c.APIKeyEnv = name } }

// EndpointFromEnv is what a notebook passes so that one environment
// variable points it at real servers: $BHASHA_ENDPOINT (base URLs …/v1,
// separated by commas) as Endpoint, and $VLLM_API_KEY as the key when it
// is set (APIKeyEnv). When the experiment still asks the simulated
// models (no Models given), it asks the models the first server lists
// instead (GET /v1/models), and a simulated judge becomes the first of
// them; the first log line names them. With BHASHA_ENDPOINT unset it
// changes nothing: the experiment's endpoints, or the simulator when it
// names none.
func EndpointFromEnv() RunOption {
	return func(c *RunConfig) {
		c.ServedModels = true
		ep := strings.TrimSpace(os.Getenv("BHASHA_ENDPOINT"))
		if ep == "" {
			return
		}
		for _, u := range strings.Split(ep, ",") {
			if u = strings.TrimSpace(u); u != "" {
				c.Endpoints = append(c.Endpoints, u)
			}
		}
		if os.Getenv("VLLM_API_KEY") != "" {
			c.APIKeyEnv = "VLLM_API_KEY"
		}
	}
}

// CacheDir sets the response cache directory (default $BHASHA_CACHE_DIR
// or the user cache directory).
func CacheDir(dir string) RunOption { return func(c *RunConfig) { c.CacheDir = dir } }

// Concurrency sets the requests in flight per replica.
func Concurrency(n int) RunOption { return func(c *RunConfig) { c.Concurrency = n } }

// NoCache sends every request even when its answer is cached.
func NoCache() RunOption { return func(c *RunConfig) { c.NoCache = true } }

// ArchiveChanged moves aside the records of requests the experiment now
// asks differently, and asks them again (instead of stopping).
func ArchiveChanged() RunOption { return func(c *RunConfig) { c.ArchiveChanged = true } }

// OnProgress receives the run's progress (done, total, rate, failures,
// cached), at most every 100 ms and at the end of each stage.
func OnProgress(fn func(Progress)) RunOption { return func(c *RunConfig) { c.Progress = fn } }

// Log receives the run's messages (and a progress bar on a terminal).
func Log(w io.Writer) RunOption { return func(c *RunConfig) { c.Log = w } }

// simulatedOnly reports whether exp asks only the simulator's models
// (what the constructors ask without Models).
func simulatedOnly(exp *Experiment) bool {
	sim := map[string]bool{}
	for _, m := range SimulatedModels() {
		sim[m.ServedName] = true
	}
	for _, m := range exp.Models {
		if !sim[m.ServedName] || len(m.Endpoints) > 0 {
			return false
		}
	}
	return len(exp.Models) > 0
}

// askServed replaces exp's simulated models (and a simulated judge) by
// the models the first endpoint serves.
func askServed(ctx context.Context, exp *Experiment, c *RunConfig) error {
	key := ""
	if c.APIKeyEnv != "" {
		key = os.Getenv(c.APIKeyEnv)
	}
	served, err := engine.ListServed(ctx, c.Endpoints[0], key)
	if err != nil {
		return fmt.Errorf("asking %s which models it serves (BHASHA_ENDPOINT): %w", c.Endpoints[0], err)
	}
	if len(served) == 0 {
		return fmt.Errorf("%s serves no model (BHASHA_ENDPOINT)", c.Endpoints[0])
	}
	exp.Models = nil
	var names []string
	for _, m := range served {
		name := m.ID
		if i := strings.LastIndex(name, "/"); i >= 0 && i < len(name)-1 {
			name = name[i+1:]
		}
		exp.Models = append(exp.Models, Model{Name: name, ServedName: m.ID})
		names = append(names, m.ID)
	}
	if exp.Judge != nil && exp.Judge.ServedName == SimulatedJudge().ServedName && exp.Judge.Name == SimulatedJudge().Name {
		j := exp.Models[0]
		j.Name = "judge"
		exp.Judge = &j
	}
	fmt.Fprintf(c.Log, "asking the models %s serves: %s\n", c.Endpoints[0], strings.Join(names, ", "))
	return nil
}

// Run runs exp into its run directory and returns its results, also when
// some requests failed (the error says so; the results hold what was
// answered).
// Without Endpoint, models that name no endpoints are answered by the
// in-process simulator, which the first log line, the manifest and every
// table say (SIMULATED). A run is resumable: running the same experiment
// into the same directory sends only what is missing.
func Run(ctx context.Context, exp *Experiment, opts ...RunOption) (*Results, error) {
	exp = clone(exp) // endpoints and keys set for this run stay out of the caller's value
	if exp.Studies == nil {
		exp.Studies = BuiltinStudies()
	}
	c := RunConfig{Options: run.Options{Log: io.Discard, Hint: run.Hints{NewOut: "run into another directory (bhasha.Out)", ArchiveChanged: "run again with bhasha.ArchiveChanged()"}}}
	for _, o := range opts {
		o(&c)
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Endpoint != "" { // the runtime's single endpoint is the first of them
		c.Endpoints, c.Endpoint = append([]string{c.Endpoint}, c.Endpoints...), ""
	}
	if c.Out == "" {
		c.Out = filepath.Join("runs", exp.Name)
	}
	if c.ServedModels && len(c.Endpoints) > 0 && simulatedOnly(exp) {
		if err := askServed(ctx, exp, &c); err != nil {
			return nil, err
		}
	}
	if c.APIKeyEnv != "" {
		for i := range exp.Models {
			exp.Models[i].APIKeyEnv = c.APIKeyEnv
		}
		if exp.Judge != nil {
			exp.Judge.APIKeyEnv = c.APIKeyEnv
		}
	}
	if probs := exp.Validate(); len(probs) > 0 {
		return nil, fmt.Errorf("experiment %s: %w", exp.Name, probs)
	}
	eps := c.Endpoints
	if c.Simulate || (len(eps) == 0 && needsEndpoints(exp)) {
		// The simulator knows the experiment's items: build first.
		if err := exp.Build(ctx); err != nil {
			return nil, err
		}
		url, stop, err := startSimulator(ctx, exp)
		if err != nil {
			return nil, err
		}
		defer stop()
		why := "no endpoint given"
		if c.Simulate {
			why = "as asked"
		}
		fmt.Fprintf(c.Log, "SIMULATED (%s): %s is answered by the built-in simulator at %s\n", why, exp.Name, url)
		eps = []string{url}
	}
	ro := c.Options
	ro.Endpoints = eps
	job, err := exp.Job(ctx)
	if err != nil {
		return nil, err
	}
	m, err := run.Execute(ctx, job, ro)
	if m == nil {
		return nil, err
	}
	r := &Results{dir: c.Out, exp: exp, manifest: m}
	if err == nil && m.Counts.Failed > 0 {
		err = fmt.Errorf("%s: %d request(s) failed (run again to retry them): %w", c.Out, m.Counts.Failed, ErrIncomplete)
	}
	return r, err
}

// ErrIncomplete is wrapped by Run's error when the run finished but some
// requests failed: the results hold everything answered, and running again
// retries the failed requests only.
var ErrIncomplete = errors.New("the run is incomplete")

// clone copies an experiment deeply enough that a run can set its models'
// endpoints and key variables (fields of Models and Judge, replaced, never
// edited in place) without touching the original: a notebook cell run
// twice must not find the first run's simulator address in it.
func clone(e *Experiment) *Experiment {
	c := *e
	c.Models = slices.Clone(e.Models)
	if e.Judge != nil {
		j := *e.Judge
		c.Judge = &j
	}
	return &c
}

// needsEndpoints reports whether a model (or the judge) names no endpoint.
func needsEndpoints(exp *Experiment) bool {
	for _, m := range exp.Models {
		if len(m.Endpoints) == 0 {
			return true
		}
	}
	return exp.Judge != nil && len(exp.Judge.Endpoints) == 0
}

// startSimulator serves the simulator, knowing the experiment's items, on
// a loopback port until stop, and returns its base URL.
func startSimulator(ctx context.Context, exp *Experiment) (string, func(), error) {
	var facts []sim.Fact
	if set := exp.Items(); set != nil {
		facts = sim.FactsOf(set)
	}
	srv, err := sim.New(sim.Config{Facts: facts, Models: SimulatedModelsOf(exp)})
	if err != nil {
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	url, err := srv.Start(sctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		return "", nil, err
	}
	return url, cancel, nil
}

// SimulatedModelsOf are the simulator's own models plus one simulated
// model per other served name of the experiment and its judge (a paper's
// Hugging Face names), of its size_b (8 when unknown): any experiment runs
// on the simulator, labelled SIMULATED, before it is pointed at real
// servers (the in-process simulator of Run, and `bhasha sim --config`).
func SimulatedModelsOf(exp *Experiment) []sim.ModelSpec {
	out := sim.DefaultModels()
	seen := map[string]bool{}
	for _, m := range out {
		seen[m.ID] = true
	}
	all := slices.Clone(exp.Models)
	if exp.Judge != nil {
		all = append(all, *exp.Judge)
	}
	for _, m := range all {
		if seen[m.ServedName] {
			continue
		}
		seen[m.ServedName] = true
		size := m.SizeB
		if size <= 0 {
			size = 8
		}
		out = append(out, sim.ModelSpec{ID: m.ServedName, ParamsB: size, MaxModelLen: 8192})
	}
	return out
}

// Results is a run directory, finished or partial, from Run or Open: its
// manifest, tables and samples.
type Results struct {
	dir      string
	exp      *Experiment
	manifest *Manifest

	once    sync.Once
	rows    []score.Row
	schema  *score.Schema // the study's answer schema
	notes   []string
	tables  []*Table
	scorErr error

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
// a dataset or template changed since the run, Notes says so.
func Open(ctx context.Context, dir string, opts ...ReadOption) (*Results, error) {
	m, err := run.ReadManifest(dir)
	if _, rerr := os.Stat(filepath.Join(dir, records.FileName)); errors.Is(err, os.ErrNotExist) && errors.Is(rerr, os.ErrNotExist) {
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
	r := &Results{dir: dir, exp: exp, manifest: m}
	if p := r.Partial(); p != "" {
		r.notes = append(r.notes, p)
	}
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
	return fmt.Sprintf("the run is partial (status %s): %d%s requests have answers, and the tables cover only those; running the experiment into this directory again resumes it (bhasha run --config %s --out %s; from Go, bhasha.Run with bhasha.Out(%q))",
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

// score scores the run once and computes every table of its study.
func (r *Results) score() error {
	r.once.Do(func() {
		rows, dups, err := r.exp.Score(r.dir)
		if err != nil {
			r.scorErr = err
			return
		}
		r.notes = append(r.notes, dups.Notes()...)
		r.notes = append(r.notes, r.exp.PlanNotes()...)
		ts, err := r.exp.Tables(rows)
		if err != nil {
			r.scorErr = err
			return
		}
		r.rows, r.schema = rows, r.exp.AnswerSchema()
		r.tables = append(ts, tables.Answers(rows, r.schema))
		for _, t := range r.tables {
			t.Simulated = r.manifest.Simulated
		}
	})
	return r.scorErr
}

// Tables lists the run's tables, in report order.
func (r *Results) Tables() ([]TableInfo, error) {
	if err := r.score(); err != nil {
		return nil, err
	}
	out := make([]TableInfo, 0, len(r.tables))
	for _, t := range r.tables {
		out = append(out, t.Info())
	}
	return out, nil
}

// Table returns one table by name (see Tables).
func (r *Results) Table(name string) (*Table, error) {
	if err := r.score(); err != nil {
		return nil, err
	}
	for _, t := range r.tables {
		if t.Name == name {
			return t, nil
		}
	}
	names := make([]string, len(r.tables))
	for i, t := range r.tables {
		names[i] = t.Name
	}
	return nil, fmt.Errorf("run %s has no table %q (it has %s)", r.dir, name, strings.Join(names, ", "))
}

// Notes are what opening and scoring noticed: inputs changed since the
// run, duplicate records ignored.
func (r *Results) Notes() []string {
	r.score()
	return slices.Clone(r.notes)
}

// Scored is the number of scored answers.
func (r *Results) Scored() (int, error) {
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
	if err := r.score(); err != nil {
		return nil, err
	}
	if r.tables == nil {
		return nil, errors.New("no tables")
	}
	return r.tables, tables.Write(filepath.Join(r.dir, "tables"), r.tables)
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

// page gathers what the HTML report and the workbook show, once.
func (r *Results) page() (report.Page, error) {
	r.pageOnce.Do(func() { r.pg, r.pageErr = r.buildPage() })
	return r.pg, r.pageErr
}

func (r *Results) buildPage() (report.Page, error) {
	if err := r.score(); err != nil {
		return report.Page{}, err
	}
	figs, err := r.exp.Figures(r.tables)
	if err != nil {
		return report.Page{}, err
	}
	infos := make([]TableInfo, len(r.tables))
	for i, t := range r.tables {
		infos[i] = t.Info()
	}
	m := r.manifest
	prov := [][2]string{{"experiment", m.Experiment + " (study " + r.exp.Study + ")"}, {"experiment file", m.ExperimentFile},
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
		prov = append(prov, [2]string{"model " + mi.Name, fmt.Sprintf("%s (root %s%s) at %s", mi.ServedName, mi.Identity.Root, revision(mi.Identity.Revision), strings.Join(servers, ", "))})
	}
	for _, g := range sortedKeys(m.Decodings) {
		b, _ := json.Marshal(m.Decodings[g])
		prov = append(prov, [2]string{"decoding " + g, string(b)})
	}
	for _, k := range sortedKeys(m.Inputs) {
		prov = append(prov, [2]string{"input " + k, m.Inputs[k]})
	}
	for _, k := range sortedKeys(m.Templates) {
		prov = append(prov, [2]string{"template " + k, m.Templates[k]})
	}
	b, _ := json.Marshal(r.exp.Scoring)
	prov = append(prov, [2]string{"scoring options", string(b)})
	b, _ = json.Marshal(r.exp.Prompt)
	prov = append(prov, [2]string{"prompt options", string(b)})
	ts := r.tables
	// The papers' published numbers beside the run's, first, when the run
	// measured any of them.
	if v, err := r.exp.VersusPaper(r.tables); err != nil {
		return report.Page{}, err
	} else if v != nil && len(v.Rows) > 0 {
		ts = append([]*Table{v}, ts...)
		infos = append([]TableInfo{{Name: v.Name, Description: v.Description, Mirrors: "the papers' published numbers"}}, infos...)
	}
	return report.Page{Title: "Bhasha report: " + m.Experiment, Simulated: m.Simulated, Notes: r.notes,
		Tables: ts, Infos: infos, Figures: figs, Provenance: prov, MaxRows: 500}, nil
}

// HTML writes the run's report as one self-contained HTML file (ECharts
// inlined, no network): a SIMULATED banner when it applies, the notes,
// the figures, every table (the first 500 rows of long ones; the CSV
// files hold them all), a sample explorer (filters, search, each
// answer's prompt, response and verdicts) and the run's provenance.
// Model output and dataset text are escaped everywhere.
func (r *Results) HTML(w io.Writer) error {
	p, err := r.pageWithSamples(ExplorerSamples, true)
	if err != nil {
		return err
	}
	return report.WriteHTML(w, p)
}

// ExplorerSamples bounds the samples the HTML report's explorer draws
// from: a run with more scored answers offers every k-th one
// (k = ⌈n / ExplorerSamples⌉, so every model, language and strategy
// appears), and the page says so; the explorer then keeps what fits in
// report.MaxExplorerBytes.
const ExplorerSamples = 20_000

// pageWithSamples is the report page with at most limit samples: all of
// them when the run has no more, else every k-th (spread) or the first
// limit, read in one pass over the records.
func (r *Results) pageWithSamples(limit int, spread bool) (report.Page, error) {
	p, err := r.page()
	if err != nil {
		return p, err
	}
	var ss []Sample
	if n := len(r.rows); n <= limit {
		ss, err = r.Samples()
	} else {
		step := 1
		if spread {
			step = (n + limit - 1) / limit
		}
		sel := make([]int, 0, limit)
		for i := 0; i < n && len(sel) < limit; i += step {
			sel = append(sel, i)
		}
		ss, err = r.samplesOf(sel)
		p.SamplesTotal, p.SamplesEvery = n, step
	}
	if err != nil {
		return p, err
	}
	p.Samples = samplesTable(ss)
	return p, nil
}

// XLSX writes the run's workbook: a README sheet, one sheet per table
// (frozen header, autofilter, number formats, colour scales, column
// descriptions), the figures with native charts, the provenance and the
// samples (every one, or the first report.MaxSampleRows with a note;
// report.WriteXLSX).
func (r *Results) XLSX(w io.Writer) error {
	p, err := r.pageWithSamples(report.MaxSampleRows, false)
	if err != nil {
		return err
	}
	return report.WriteXLSX(w, p)
}

// Figures are the run's figures, in report order (the study's plan
// draws them from its tables, experiment.Figurer: the paper's figures its
// tables allow, each with its caption, n, and SIMULATED when it is).
func (r *Results) Figures() ([]report.Figure, error) {
	p, err := r.page()
	return p.Figures, err
}

// SamplesTable lays samples out as a typed table, one row per sample (the
// workbook's samples sheet, the explorer's data): the columns of the
// study's answer schema, as answers.csv has them, then each sample's
// prompt, response, error and whether it was simulated.
func SamplesTable(ss []Sample) *Table { return samplesTable(ss) }

// samplesTable lays the samples out as a typed table, the cells of every
// block of rows in one backing array and each repeated string (a
// category's, a gold's) boxed once.
func samplesTable(ss []Sample) *Table {
	schema := score.NewSchema() // samples built by hand: the common fields
	for i := range ss {
		if ss[i].schema != nil {
			schema = ss[i].schema
			break
		}
	}
	fields, extra := schema.Fields(), sampleExtras()
	cols := make([]tables.Column, 0, len(fields)+len(extra))
	read := make([]cellReader, 0, len(fields)+len(extra))
	repeats := make([]bool, 0, len(fields)+len(extra))
	first := len(score.Head()) // the study's own fields start here
	for c, f := range fields {
		of, ok := sampleReader(f.Name)
		if c >= first && c < first+len(schema.Study()) {
			of, ok = studyReader(c-first), true
		}
		if !ok {
			panic(fmt.Sprintf("bhasha: the samples table has no reader for the common field %q", f.Name))
		}
		cols, read, repeats = append(cols, tables.AnswerColumn(f)), append(read, of), append(repeats, f.Repeats)
	}
	for _, x := range extra {
		cols, read, repeats = append(cols, x.col), append(read, x.of), append(repeats, false)
	}
	t := tables.New("samples", "one row per scored answer with its prompt and response: the study's answer schema", cols...)
	boxed := map[string]any{}
	box := func(s string) any {
		if v, ok := boxed[s]; ok {
			return v
		}
		var v any = s
		boxed[s] = v
		return v
	}
	width := len(cols)
	t.Rows = make([][]any, len(ss))
	var block []any
	for i := range ss {
		if len(block) < width {
			block = make([]any, width*min(4096, len(ss)-i))
		}
		row := block[:width:width]
		block = block[width:]
		s := &ss[i]
		for c, of := range read {
			switch {
			case of.text == nil:
				v := of.value(s)
				if str, ok := v.(string); ok && repeats[c] {
					v = box(str)
				}
				row[c] = v
			case repeats[c]:
				row[c] = box(of.text(s))
			default:
				row[c] = of.text(s)
			}
		}
		t.Rows[i] = row
	}
	return t
}

func revision(r string) string {
	if r == "" {
		return ""
	}
	return ", revision " + r
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// WriteHTML writes the HTML report to path atomically (a temporary file
// renamed into place).
func (r *Results) WriteHTML(path string) error { return r.writeFile(path, "HTML report", r.HTML) }

// WriteXLSX writes the workbook to path atomically.
func (r *Results) WriteXLSX(path string) error { return r.writeFile(path, "workbook", r.XLSX) }

func (r *Results) writeFile(path, what string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return fmt.Errorf("%s of %s: %w", what, r.dir, err)
	}
	if err := atomicfile.WriteFile(path, b.Bytes()); err != nil {
		return fmt.Errorf("%s of %s: %w", what, r.dir, err)
	}
	return nil
}

// WriteExports writes paper-ready files under dir: every table as CSV and
// as a LaTeX booktabs table, every figure's ECharts option and, when
// headless Chromium is installed, every figure as SVG and PNG. It returns
// whether the figures were drawn.
func (r *Results) WriteExports(ctx context.Context, dir string) (drawn bool, err error) {
	p, err := r.page()
	if err != nil {
		return false, err
	}
	browser, _ := exec.LookPath("chromium")
	if err := report.WriteExports(ctx, dir, p, browser); err != nil {
		return false, fmt.Errorf("exports of %s: %w", r.dir, err)
	}
	return browser != "", nil
}
