package bhasha

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/runtime/shard"
	"github.com/bhashalab/bhasha/sim"
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
	// Shard, when N > 0, runs only shard K of N of the experiment
	// (package shard) into its own directory inside Out, the grid
	// directory: Out/shard-KKK-of-NNN.
	Shard shard.Spec
}

// Shard runs only shard s of the experiment (package shard: by answering
// model and item, every stage of an item in the same shard) into its own
// run directory inside the Out directory, the grid (s.Dir()). A grid that
// holds shards of another count is refused, and nothing is written.
func Shard(s shard.Spec) RunOption { return func(c *RunConfig) { c.Shard = s } }

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
// run before the GPUs are up). Everything it answers says SIMULATED.
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
	grid := ""
	if c.Shard.N > 0 {
		dir, err := shard.Dir(c.Out, c.Shard)
		if err != nil {
			return nil, err
		}
		grid, c.Out = c.Out, dir
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
	if grid != "" {
		l, err := shard.Plan(job, c.Shard.N)
		if err != nil {
			return nil, err
		}
		if job, err = l.Job(job, c.Shard); err != nil {
			return nil, err
		}
		if _, err := os.Stat(grid); errors.Is(err, os.ErrNotExist) {
			// A refused shard leaves no grid behind (its own directory
			// is removed by the run).
			defer func() {
				if m, _ := run.ReadManifest(ro.Out); m == nil {
					os.Remove(grid) // only when empty
				}
			}()
		}
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
