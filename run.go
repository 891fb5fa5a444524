package bhasha

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/simulate"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/runtime/shard"
	"github.com/bhashalab/bhasha/study"
)

// Table is a typed result table: named columns of strings, ints, floats
// and bools, rendered as CSV, Markdown or a gota DataFrame.
type Table = tables.Table

// TableInfo describes one table: name, what it holds, and the paper table
// or figure it mirrors.
type TableInfo = tables.Info

// Manifest is a run's provenance: servers, model identities, inputs,
// decoding, counts and whether the models were simulated.
type Manifest = study.Manifest

// Progress is a run's state, passed to OnProgress: the stage (of
// Stages), the records it has written of its Total (requests it sends or
// answers from the cache), how many failed and how many came from the
// cache, the records per second since the stage started, the time since
// then, and Final at the stage's end.
type Progress struct {
	Stage, Stages int
	Done, Total   int
	Failed        int
	Cached        int
	Rate          float64
	Elapsed       time.Duration
	Final         bool
}

// RunOption adjusts a run's configuration: the options below, or a
// program's own func(*RunConfig).
type RunOption func(*RunConfig)

// RunConfig is how Run runs an experiment, set by the RunOption
// functions; a program's own RunOption may set its exported fields.
type RunConfig struct {
	opts         run.Options // Out defaults to runs/<experiment name>, Log to nothing
	apiKeyEnv    string      // names the variable holding every model's API key
	servedModels bool        // ask the first endpoint which models it serves (EndpointFromEnv)
	simulate     bool        // answer every model from the in-process simulator

	// JudgeOnly sends only judge requests, for the answers the run
	// already has; every other request stays unasked, and the run is
	// "partial" while any is left (bhasha report completes verdicts this
	// way, never answers).
	JudgeOnly bool
	// NewOutRemedy and ArchiveRemedy are how refusals name their
	// remedies: running into a new run directory and archiving changed
	// records (default: bhasha.Out and bhasha.ArchiveChanged).
	NewOutRemedy, ArchiveRemedy string
	// ShardK and ShardN, when ShardN > 0, run only shard ShardK of ShardN
	// of the experiment (by answering model and item, every stage of an
	// item in the same shard) into its own run directory inside Out, the
	// grid directory: Out/shard-KKK-of-NNN. A grid that holds shards of
	// another count is refused, and nothing is written.
	ShardK, ShardN int
}

// Simulator answers every model from the in-process simulator, whatever
// endpoints the experiment names (the demo's smoke experiments, a notebook
// run before the GPUs are up). Everything it answers says SIMULATED.
func Simulator() RunOption { return func(c *RunConfig) { c.simulate = true } }

// Out sets the run directory (default runs/<experiment name>).
func Out(dir string) RunOption { return func(c *RunConfig) { c.opts.Out = dir } }

// Endpoint sends every model's requests to these base URLs (…/v1),
// replicas of one server or one gateway.
func Endpoint(urls ...string) RunOption {
	return func(c *RunConfig) { c.opts.Endpoints = append(c.opts.Endpoints, urls...) }
}

// APIKeyEnv names the environment variable that holds the endpoints' API
// key (never the key itself).
func APIKeyEnv(name string) RunOption { return func(c *RunConfig) { c.apiKeyEnv = name } }

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
		c.servedModels = true
		ep := strings.TrimSpace(os.Getenv("BHASHA_ENDPOINT"))
		if ep == "" {
			return
		}
		for _, u := range strings.Split(ep, ",") {
			if u = strings.TrimSpace(u); u != "" {
				c.opts.Endpoints = append(c.opts.Endpoints, u)
			}
		}
		if os.Getenv("VLLM_API_KEY") != "" {
			c.apiKeyEnv = "VLLM_API_KEY"
		}
	}
}

// CacheDir sets the response cache directory (default $BHASHA_CACHE_DIR
// or the user cache directory).
func CacheDir(dir string) RunOption { return func(c *RunConfig) { c.opts.CacheDir = dir } }

// Concurrency sets the requests in flight per replica.
func Concurrency(n int) RunOption { return func(c *RunConfig) { c.opts.Concurrency = n } }

// NoCache sends every request even when its answer is cached.
func NoCache() RunOption { return func(c *RunConfig) { c.opts.NoCache = true } }

// ArchiveChanged moves aside the records of requests the experiment now
// asks differently, and asks them again (instead of stopping).
func ArchiveChanged() RunOption { return func(c *RunConfig) { c.opts.ArchiveChanged = true } }

// OnProgress receives the run's progress (done, total, rate, failures,
// cached), at most every 100 ms and at the end of each stage.
func OnProgress(fn func(Progress)) RunOption {
	return func(c *RunConfig) { c.opts.Progress = func(p run.Progress) { fn(Progress(p)) } }
}

// Log receives the run's messages (and a progress bar on a terminal).
func Log(w io.Writer) RunOption { return func(c *RunConfig) { c.opts.Log = w } }

// simulatedOnly reports whether exp asks only the simulator's models
// (what the constructors ask without Models).
func simulatedOnly(exp *Experiment) bool {
	sims := SimulatedModels()
	return len(exp.Models) > 0 && !slices.ContainsFunc(exp.Models, func(m Model) bool {
		return len(m.Endpoints) > 0 || !slices.ContainsFunc(sims, func(s Model) bool { return s.ServedName == m.ServedName })
	})
}

// askServed replaces exp's simulated models (and a simulated judge) by
// the models the first endpoint serves.
func askServed(ctx context.Context, exp *Experiment, c *RunConfig) error {
	served, err := engine.ListServed(ctx, c.opts.Endpoints[0], os.Getenv(c.apiKeyEnv))
	if err != nil {
		return fmt.Errorf("asking %s which models it serves (BHASHA_ENDPOINT): %w", c.opts.Endpoints[0], err)
	}
	if len(served) == 0 {
		return fmt.Errorf("%s serves no model (BHASHA_ENDPOINT)", c.opts.Endpoints[0])
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
	if exp.Judge != nil && exp.Judge.ServedName == simulatedJudge().ServedName && exp.Judge.Name == simulatedJudge().Name {
		j := exp.Models[0]
		j.Name = "judge"
		exp.Judge = &j
	}
	fmt.Fprintf(c.opts.Log, "asking the models %s serves: %s\n", c.opts.Endpoints[0], strings.Join(names, ", "))
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
	c := RunConfig{NewOutRemedy: "run into another directory (bhasha.Out)", ArchiveRemedy: "run again with bhasha.ArchiveChanged()"}
	for _, o := range opts {
		o(&c)
	}
	ro := &c.opts // askServed reads its Log and Endpoints
	ro.Hint = run.Hints{NewOut: c.NewOutRemedy, ArchiveChanged: c.ArchiveRemedy}
	if c.JudgeOnly {
		ro.Send = func(r engine.Role) bool { return r.Kind == engine.RoleJudge }
	}
	ro.Log = cmp.Or(ro.Log, io.Discard)
	ro.Out = cmp.Or(ro.Out, filepath.Join("runs", exp.Name))
	grid := ""
	sh := shard.Spec{K: c.ShardK, N: c.ShardN}
	if sh.N > 0 {
		dir, err := shard.Dir(ro.Out, sh)
		if err != nil {
			return nil, err
		}
		grid, ro.Out = ro.Out, dir
	}
	if c.servedModels && len(ro.Endpoints) > 0 && simulatedOnly(exp) {
		if err := askServed(ctx, exp, &c); err != nil {
			return nil, err
		}
	}
	if c.apiKeyEnv != "" {
		for i := range exp.Models {
			exp.Models[i].APIKeyEnv = c.apiKeyEnv
		}
		if exp.Judge != nil {
			exp.Judge.APIKeyEnv = c.apiKeyEnv
		}
	}
	if probs := exp.Validate(); len(probs) > 0 {
		return nil, fmt.Errorf("experiment %s: %w", exp.Name, probs)
	}
	if c.simulate || (len(ro.Endpoints) == 0 && needsEndpoints(exp)) {
		// The simulator knows the experiment's items: build first.
		if err := exp.Build(ctx); err != nil {
			return nil, err
		}
		url, stop, err := simulate.Start(ctx, exp)
		if err != nil {
			return nil, err
		}
		defer stop()
		why := "no endpoint given"
		if c.simulate {
			why = "as asked"
		}
		fmt.Fprintf(ro.Log, "SIMULATED (%s): %s is answered by the built-in simulator at %s\n", why, exp.Name, url)
		ro.Endpoints = []string{url}
	}
	job, err := exp.Job(ctx)
	if err != nil {
		return nil, err
	}
	if grid != "" {
		l, err := shard.Plan(job, sh.N)
		if err != nil {
			return nil, err
		}
		if job, err = l.Job(job, sh); err != nil {
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
	m, err := run.Execute(ctx, job, *ro)
	if m == nil {
		return nil, err
	}
	r := &Results{dir: ro.Out, exp: exp, manifest: m}
	r.answers(context.Background(), nil, readConfig{})
	if err == nil && m.Counts.Failed > 0 {
		err = fmt.Errorf("%s: %d request(s) failed (run again to retry them): %w", ro.Out, m.Counts.Failed, ErrIncomplete)
	}
	return r, err
}

// ErrIncomplete is wrapped by Run's error when the run finished but some
// requests failed: the results hold everything answered, and running again
// retries the failed requests only.
var ErrIncomplete = errors.New("the run is incomplete")

// clone copies e deeply enough that a run sets its models' endpoints and
// keys without touching the caller's value.
func clone(e *Experiment) *Experiment {
	c := *e
	c.Models = slices.Clone(e.Models)
	if e.Judge != nil {
		c.Judge = new(*e.Judge)
	}
	return &c
}

// needsEndpoints reports whether a model (or the judge) names no endpoint.
func needsEndpoints(exp *Experiment) bool {
	return slices.ContainsFunc(exp.Models, func(m Model) bool { return len(m.Endpoints) == 0 }) || (exp.Judge != nil && len(exp.Judge.Endpoints) == 0)
}
