// Package cli is the bhasha command: it runs cross-lingual
// knowledge-consistency evaluations against vLLM (OpenAI-compatible)
// endpoints, and serves a simulated vLLM-compatible server for users
// without a GPU. The bhasha command (cmd/bhasha) is Main with the
// built-in studies; a study of one's own gets the whole command, every
// subcommand, from a main package of a few lines:
//
//	package main
//
//	import (
//		"github.com/bhashalab/bhasha/cmd/cli"
//		"example.com/mystudy"
//	)
//
//	func main() { cli.Main(mystudy.Study{}) }
//
// The commands, their flags, exit statuses and environment variables are
// described in docs/cli.md; `bhasha COMMAND --help` lists a command's
// flags.
package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bhashalab/bhasha/cmd/internal/memlimit"
	"github.com/bhashalab/bhasha/datasets/catalog"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/simulate"
	"github.com/bhashalab/bhasha/runtime/batch"
	"github.com/bhashalab/bhasha/runtime/grid"
	"github.com/bhashalab/bhasha/runtime/progress"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/runtime/shard"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/studies/experiment"

	"github.com/bhashalab/bhasha"
)

const usage = `bhasha: cross-lingual knowledge-consistency evaluation for vLLM endpoints

Commands:
  sim           serve the simulated vLLM-compatible server (SIMULATED models)
  run           run an experiment file into a run directory, then score it and write its tables (resumable; --shard K/N runs one shard)
  cluster slurm write a Slurm job array running the shards of a grid, and its report job (sbatch scripts)
  cluster k8s   write a Kubernetes Indexed Job running the shards of a grid, and its report Job
  merge         write a grid's shards as one run directory (report --run GRID opens them as one run by itself)
  plan          count an experiment's requests and tokens by model, stage and shard, and its GPU-hours (sends nothing)
  batch export  write an experiment's pending requests as an OpenAI Batch file
  batch import  read a Batch output file back into the run directory
  report        score a finished run and write its tables as CSV under RUN/tables/
  compare       set two runs of the same items side by side (an option that changes the requests)
  datasets check  read a dataset and print its languages, items, alignment gaps and every problem
  demo          run the built-in default experiment against the in-process simulator
  version       print the version

Run 'bhasha COMMAND --help' for a command's flags. A study of your own gets
this command from a main of your own: func main() { cli.Main(mystudy.Study{}) }
(package github.com/bhashalab/bhasha/cmd/cli; docs/own-study.md).
`

// Exit statuses.
const (
	exitProblems    = 1   // datasets check: the dataset has invalid records
	exitFailed      = 2   // anything that stopped a command
	exitIncomplete  = 3   // run: finished, but some requests failed (run again to retry them)
	exitInterrupted = 130 // SIGINT or SIGTERM (run again to resume)
)

// statusError carries a command's exit status with its message.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// ExitCode is the exit status Main exits with after Run returned err
// under ctx.
func ExitCode(ctx context.Context, err error) int {
	var ee *statusError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitFailed
}

// Main runs the command line os.Args[1:] (Run) with the built-in studies
// and studies, stopping it on SIGINT and SIGTERM, prints its error on
// stderr and exits: status 0 when it succeeded, 1 when `datasets check`
// found invalid records, 3 when a run finished with failed requests, 130
// when it was interrupted, and 2 otherwise (a study whose name is taken
// included). It does not return.
func Main(studies ...bhasha.Study) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reg := bhasha.BuiltinStudies()
	var err error
	for _, s := range studies {
		if err = reg.Add(s); err != nil {
			break
		}
	}
	if err == nil {
		err = Run(ctx, os.Args[1:], os.Stdout, os.Stderr, reg)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "bhasha:", err)
	}
	code := ExitCode(ctx, err)
	stop()
	os.Exit(code)
}

// Run runs one command line of the bhasha command (args without the
// program's name: "run", "--config", "x.yaml", ...), reading experiment
// files and runs with the studies of reg (nil: the built-in studies);
// output goes to stdout and stderr, and cancelling ctx interrupts it
// (a run then resumes when run again). Its error is what Main prints;
// ExitCode maps it to an exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, reg *bhasha.Registry) error {
	if reg == nil {
		reg = bhasha.BuiltinStudies()
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmds := map[string]func(context.Context, *bhasha.Registry, []string, io.Writer, io.Writer) error{
		"sim": cmdSim, "run": cmdRun, "batch export": cmdBatchExport, "batch import": cmdBatchImport, "report": cmdReport,
		"plan": cmdPlan, "merge": cmdMerge, "cluster": cmdCluster, "compare": cmdCompare, "datasets check": cmdDatasetsCheck, "demo": cmdDemo,
		"version": func(context.Context, *bhasha.Registry, []string, io.Writer, io.Writer) error {
			fmt.Fprintln(stdout, run.ToolVersion)
			return nil
		},
	}
	if cmd, ok := cmds[args[0]]; ok && !strings.Contains(args[0], " ") {
		return cmd(ctx, reg, args[1:], stdout, stderr)
	}
	if cmd, ok := cmds[strings.Join(args[:min(2, len(args))], " ")]; ok {
		return cmd(ctx, reg, args[2:], stdout, stderr)
	}
	switch {
	case args[0] == "batch" && len(args) < 2:
		return fmt.Errorf("batch needs export or import\n%s", usage)
	case args[0] == "batch":
		return fmt.Errorf("batch: unknown subcommand %q (want export or import)", args[1])
	case args[0] == "datasets":
		return fmt.Errorf("datasets: want 'datasets check PATH'")
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bhasha %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// urlsFlag defines a repeatable flag of URLs on fs; each value may list
// several, separated by commas.
func urlsFlag(fs *flag.FlagSet, name, usage string) *[]string {
	var urls []string
	fs.Func(name, usage, func(v string) error {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				urls = append(urls, p)
			}
		}
		return nil
	})
	return &urls
}

// parseFlags parses args into fs, refusing a value that looks like a flag;
// an empty required prints the usage and returns missing as the error.
func parseFlags(fs *flag.FlagSet, args []string, missing string, required ...*string) error {
	for i := 0; i+1 < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
			continue
		}
		f := fs.Lookup(strings.TrimLeft(a, "-"))
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		next := args[i+1]
		if _, err := strconv.ParseFloat(next, 64); len(next) > 1 && strings.HasPrefix(next, "-") && err != nil { // a negative number is a value
			return fmt.Errorf("%s %s: the value of %s looks like a flag; give %s a value (or write %s=%s if that is the value)", fs.Name(), a, a, a, a, next)
		}
		i++ // skip the value
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if slices.ContainsFunc(required, func(v *string) bool { return *v == "" }) {
		fs.Usage()
		return errors.New(missing)
	}
	return nil
}

func cmdSim(ctx context.Context, reg *bhasha.Registry, args []string, _, stderr io.Writer) error {
	fs := newFlags("sim", "sim --addr HOST:PORT [flags]", stderr)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address (keep it on loopback)")
	latency := fs.Duration("latency", 0, "time to first token of every request")
	perToken := fs.Duration("per-token", 0, "extra latency per generated token")
	maxConc := fs.Int("max-concurrency", 0, "requests running at once; the rest wait in a queue (0: unbounded)")
	failRate := fs.Float64("fail-rate", 0, "probability that a generation attempt gets an injected fault")
	failTypes := fs.String("fail-types", strings.Join(sim.AllFaults, ","), "faults to draw from: 429,500,timeout,reset,garbage")
	retryAfter := fs.Duration("retry-after", time.Second, "Retry-After sent with injected 429s")
	facts := fs.String("facts", "", "JSON Lines of facts the simulated models know (default: the bundled IndicKLAR demo facts)")
	bundle := fs.String("bundle", "", "IndicKLAR demo bundle used when none of --config, --dataset and --facts is given (default: the built-in excerpt)")
	dataset := fs.String("dataset", "", "a dataset (any format 'datasets check' reads) whose items the simulated models know")
	config := fs.String("config", "", "an experiment file whose items the simulated models know, and whose served model names they answer to (as bhasha run's built-in simulator)")
	keyEnv := fs.String("api-key-env", "", "require the API key held in this environment variable (as vLLM --api-key)")
	maxBody := fs.Int64("max-body", 8<<20, "largest request body in bytes (larger: 413)")
	readTimeout := fs.Duration("read-timeout", 10*time.Second, "time allowed to read a whole request")
	if err := parseFlags(fs, args, ""); err != nil {
		return err
	}
	// Log: the server says when it is asked about items it does not know.
	cfg := sim.Config{TTFT: *latency, PerToken: *perToken, MaxConcurrency: *maxConc, FailRate: *failRate, RetryAfter: *retryAfter,
		MaxBodyBytes: *maxBody, ReadTimeout: *readTimeout, Log: stderr}
	if *keyEnv != "" {
		if cfg.APIKey = os.Getenv(*keyEnv); cfg.APIKey == "" {
			return fmt.Errorf("sim: environment variable %s is empty", *keyEnv)
		}
	}
	if *failTypes != "" {
		cfg.FailTypes = strings.Split(*failTypes, ",")
	}
	of := "" // whose facts, for the first line
	switch {
	case *config != "" && (*dataset != "" || *facts != ""):
		return errors.New("sim: --config knows the experiment's items: give it without --dataset and --facts")
	case *config != "":
		exp, err := bhasha.Load(ctx, *config, bhasha.WithStudies(reg))
		if err != nil {
			return ownStudy(fmt.Errorf("sim: loading the experiment to know its items: %w", err))
		}
		if set := exp.Items(); set != nil {
			cfg.Facts = sim.FactsOf(set)
		} else {
			fmt.Fprintf(stderr, "sim: experiment %s reads no dataset: the simulator knows none of its items, and its models answer \"I don't know\"\n", exp.Name)
		}
		cfg.Models = simulate.ModelsOf(exp)
		of = " of experiment " + exp.Name
	case *dataset != "":
		set, _, err := catalog.Load(ctx, *dataset, "", lang.New(), nil, item.Options{})
		if err != nil {
			return err
		}
		cfg.Facts = sim.FactsOf(set)
	case *facts != "":
		f, err := os.Open(*facts)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		cfg.Facts, err = sim.ReadFacts(f, *facts)
		f.Close()
		if err != nil {
			return err
		}
	default:
		path := *bundle
		if path == "" { // the built-in excerpt, written where the loader can read it
			dir, err := os.MkdirTemp("", "bhasha-sim-")
			if err != nil {
				return fmt.Errorf("sim: %w", err)
			}
			defer os.RemoveAll(dir)
			b, err := iofs.ReadFile(bhasha.DefaultInputs(), defaultBundle)
			if err == nil {
				path = filepath.Join(dir, filepath.Base(defaultBundle))
				err = os.WriteFile(path, b, 0o644)
			}
			if err != nil {
				return fmt.Errorf("sim: writing the built-in bundle: %w", err)
			}
		}
		if qs, err := sim.LoadBundle(ctx, path); err == nil {
			cfg.Facts = sim.FactsOf(qs)
		} else {
			fmt.Fprintf(stderr, "sim: no facts loaded (%v); models answer \"I don't know\"\n", err)
		}
	}
	srv, err := sim.New(cfg)
	if err != nil {
		return err
	}
	url, err := srv.Start(ctx, *addr)
	if err != nil {
		return err
	}
	models := cfg.Models
	if len(models) == 0 {
		models = sim.DefaultModels()
	}
	var names []string
	for _, m := range models {
		names = append(names, m.ID)
	}
	fmt.Fprintf(stderr, "bhasha sim: serving SIMULATED models at %s (%d facts%s; models %s); Ctrl-C stops\n", url, len(cfg.Facts), of, strings.Join(names, ", "))
	<-ctx.Done()
	return nil
}

// progressEveryEnv names the environment variable that sets how often
// plain progress lines are printed (a Go duration; 0 prints none).
const progressEveryEnv = "BHASHA_PROGRESS_EVERY"

// progressEvery reads BHASHA_PROGRESS_EVERY: a duration (0: no progress
// lines), progress.DefaultEvery when unset; anything else is an error.
func progressEvery() (time.Duration, error) {
	v := os.Getenv(progressEveryEnv)
	if v == "" {
		return progress.DefaultEvery, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 5s, or 0 for no progress lines", progressEveryEnv, v)
	}
	return d, nil
}

func cmdRun(ctx context.Context, reg *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "run --config FILE --out DIR [flags]", stderr)
	cfg := fs.String("config", "", "experiment file (YAML)")
	out := fs.String("out", "", "run directory (records.jsonl, manifest.json)")
	endpoint := urlsFlag(fs, "endpoint", "base URL (…/v1) that replaces every endpoint of the experiment; repeat it (or separate URLs by commas) for replicas of the same model, which share the load")
	conc := fs.Int("concurrency", 0, "per-replica concurrency, overriding the experiment")
	noCache := fs.Bool("no-cache", false, "send every request even if its answer is cached (answers are still stored)")
	cacheDir := fs.String("cache-dir", "", "response cache directory (default $BHASHA_CACHE_DIR or ~/.cache/bhasha)")
	skip := fs.Bool("skip-invalid", false, "skip invalid dataset records (listed in the manifest) instead of stopping")
	archive := fs.Bool("archive-changed", false, "when the experiment changed since DIR's records were written, move the changed requests' records to DIR/archive/ and ask them again")
	noTables := fs.Bool("no-tables", false, "end when the answers are in, without scoring them and writing the tables (bhasha report does both later)")
	shardSpec := fs.String("shard", "", "run only shard K of N (K/N, K from 0), into DIR/shard-KKK-of-NNN; auto reads both from BHASHA_SHARD or a Slurm array task, auto/N reads K from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)")
	if err := parseFlags(fs, args, "run: --config and --out are required", cfg, out); err != nil {
		return err
	}
	exp, err := experiment.Load(ctx, *cfg, experiment.LoadOptions{SkipInvalid: *skip, Studies: reg})
	if err != nil {
		return ownStudy(err)
	}
	dir := *out
	var sh shard.Spec
	if *shardSpec != "" {
		if sh, err = shard.ParseSpec(*shardSpec, os.Getenv); err != nil {
			return fmt.Errorf("run: %w", err)
		}
		dir = filepath.Join(*out, sh.Dir())
	}
	if *conc < 0 {
		return fmt.Errorf("run: --concurrency must be positive (or 0 for the experiment's), not %d", *conc)
	}
	opts, err := runOptions(exp.Name, *out, *cacheDir, *endpoint, stderr)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	opts = append(opts, bhasha.Concurrency(*conc), func(c *bhasha.RunConfig) { c.ShardK, c.ShardN = sh.K, sh.N })
	if *noCache {
		opts = append(opts, bhasha.NoCache())
	}
	if *archive {
		opts = append(opts, bhasha.ArchiveChanged())
	}
	defer holdRunHeap()()
	r, err := bhasha.Run(ctx, exp, opts...)
	if r != nil {
		printCounts(stderr, dir, r.Manifest())
	}
	again := "run the same command again to resume: answered requests are kept and never sent again"
	switch {
	case errors.Is(err, bhasha.ErrIncomplete):
		return &statusError{exitIncomplete, fmt.Errorf("%s: incomplete: %d request(s) failed (status \"failed\" in %s, with the error); %s, and the failed ones are retried",
			dir, r.Manifest().Counts.Failed, filepath.Join(dir, records.FileName), again)}
	case err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled):
		return &statusError{exitInterrupted, fmt.Errorf("%s: interrupted; %s", dir, again)}
	case err != nil || sh.N > 0 || *noTables:
		return err // a shard's answers are scored with the grid's (report --run GRID)
	}
	return runTables(ctx, reg, dir, stdout, stderr)
}

// runTables ends a complete run in dir as report's tables step does: it
// scores the answers, keeps them and every table in dir (scored.parquet,
// scored-tables/) for the notebooks and reports that read them next,
// writes the tables as CSV under dir/tables, and lists them. The records
// are left as they are whatever it returns.
func runTables(ctx context.Context, reg *bhasha.Registry, dir string, stdout, stderr io.Writer) error {
	r, err := bhasha.Open(ctx, dir, scoringProgress(stderr), bhasha.WithStudies(reg))
	if err == nil {
		var ts []*bhasha.Table
		if ts, err = r.WriteTables(); err == nil {
			listTables("run", r, ts, stdout, stderr)
			return nil
		}
	}
	return fmt.Errorf("%s: the run is complete, but its tables could not be written (bhasha report --run %s writes them): %w", dir, dir, err)
}

// defaultBundle is the built-in IndicKLAR excerpt sim knows by default.
const defaultBundle = "indicklar/project_page_demo_hin_excerpt.json"

// runOptions are the options run and report share: directory, cache, log,
// endpoints, remedies naming the flags, and plain progress lines labelled name.
func runOptions(name, out, cacheDir string, endpoint []string, stderr io.Writer) ([]bhasha.RunOption, error) {
	every, err := progressEvery()
	if err != nil {
		return nil, err
	}
	if progress.IsTerminal(stderr) {
		every = 0
	}
	pl := progress.NewPlain(stderr, every)
	return []bhasha.RunOption{bhasha.Out(out), bhasha.CacheDir(cacheDir), bhasha.Log(stderr), bhasha.Endpoint(endpoint...),
		bhasha.OnProgress(func(p bhasha.Progress) {
			label := name
			if p.Stages > 1 {
				label = fmt.Sprintf("%s stage %d", name, p.Stage)
			}
			pl.Update(progress.State{Label: label, Done: p.Done, Total: p.Total, Failed: p.Failed, Cached: p.Cached, Elapsed: p.Elapsed, Final: p.Final})
		}),
		func(c *bhasha.RunConfig) {
			c.NewOutRemedy, c.ArchiveRemedy = "run into a new --out", "run again with --archive-changed"
		}}, nil
}

// ownStudyHow is how a study of one's own gets the command.
const ownStudyHow = `a study of your own runs under a command of your own: a main package that registers it and runs every subcommand of this one (run, report, batch, sim, compare, datasets):

	package main

	import (
		"github.com/bhashalab/bhasha/cmd/cli"
		"example.com/mystudy" // your study's package
	)

	func main() { cli.Main(mystudy.Study{}) }

then "go run . run --config FILE --out DIR" and "go run . report --run DIR" in its folder (docs/own-study.md)`

// ownStudy adds how to run one's own study to an experiment.ErrUnknownStudy.
func ownStudy(err error) error {
	if !errors.Is(err, experiment.ErrUnknownStudy) {
		return err
	}
	return fmt.Errorf("%w\n%s", err, ownStudyHow)
}

// simLabel marks a run a simulator answered.
func simLabel(m *run.Manifest) string {
	if m.Simulated {
		return " [SIMULATED models]"
	}
	return ""
}

// printCounts writes a run's summary line: its status, its counts and
// what the manifest warns of.
func printCounts(w io.Writer, dir string, m *run.Manifest) {
	c := m.Counts
	dups := ""
	if c.DuplicatesThisRun > 0 {
		dups = fmt.Sprintf(", %d duplicate request(s) answered once", c.DuplicatesThisRun)
	}
	warn := ""
	for _, msg := range m.Warnings {
		warn += "; warning: " + msg
	}
	fmt.Fprintf(w, "%s: %s%s: %d records (%d ok, %d failed); this run sent %d, answered %d from cache%s, resumed %d%s\n",
		dir, m.Status, simLabel(m), c.Records, c.OK, c.Failed, c.SentThisRun, c.CachedThisRun, dups, c.Resumed, warn)
}

func cmdBatchExport(ctx context.Context, reg *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("batch export", "batch export --config FILE --out DIR [--live]", stderr)
	cfg := fs.String("config", "", "experiment file (YAML)")
	out := fs.String("out", "", "run directory")
	live := fs.Bool("live", false, "read model identities from the endpoints (as a run would)")
	cacheDir := fs.String("cache-dir", "", "response cache directory")
	skip := fs.Bool("skip-invalid", false, "skip invalid dataset records instead of stopping")
	if err := parseFlags(fs, args, "batch export: --config and --out are required", cfg, out); err != nil {
		return err
	}
	exp, err := experiment.Load(ctx, *cfg, experiment.LoadOptions{SkipInvalid: *skip, Studies: reg})
	if err != nil {
		return ownStudy(err)
	}
	job, err := exp.Job(ctx)
	if err != nil {
		return err
	}
	rep, err := batch.Export(ctx, job, *out, *cacheDir, *live)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d pending request(s) (skipped %d recorded, %d cached; %d wait for their first stage); index %s\n",
		rep.Input, rep.Pending, rep.AlreadyRecorded, rep.AlreadyCached, rep.Blocked, rep.Index)
	return nil
}

func cmdBatchImport(ctx context.Context, reg *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("batch import", "batch import --out DIR --file OUTPUT.jsonl [--config FILE]", stderr)
	out := fs.String("out", "", "run directory the batch was exported from")
	cfg := fs.String("config", "", "experiment file, recorded in the run's manifest for bhasha report")
	file := fs.String("file", "", "batch output file (JSON Lines)")
	cacheDir := fs.String("cache-dir", "", "response cache directory")
	if err := parseFlags(fs, args, "batch import: --out and --file are required", out, file); err != nil {
		return err
	}
	rep, err := batch.Import(ctx, *out, *cacheDir, *file)
	if err != nil {
		return err
	}
	// The import in the run's manifest, created when missing.
	m, err := run.ReadManifest(*out)
	if err != nil {
		m = &run.Manifest{Tool: run.ToolVersion, Started: time.Now().UTC(), Status: "imported", Inputs: map[string]string{}}
	}
	if *cfg != "" {
		exp, err := bhasha.Load(ctx, *cfg, bhasha.WithStudies(reg))
		if err != nil {
			return ownStudy(err)
		}
		abs, _ := filepath.Abs(*cfg)
		m.Experiment, m.ExperimentFile = exp.Name, abs
	}
	m.Simulated = m.Simulated || rep.Simulated
	m.Repairs = append(m.Repairs, fmt.Sprintf("batch import: %d ok, %d failed, %d skipped", rep.OK, rep.Failed, rep.Skipped))
	if err := run.WriteManifest(*out, m); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: imported %d ok, %d failed, skipped %d already recorded\n", *file, rep.OK, rep.Failed, rep.Skipped)
	return nil
}

func cmdDemo(ctx context.Context, _ *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "demo [--out DIR]", stderr)
	out := fs.String("out", "out/demo", "output directory")
	dir := fs.String("experiments", "", "directory of the experiment files to run (default: the built-in smoke experiments, written to OUT/inputs)")
	cacheDir := fs.String("cache-dir", "", "response cache directory (default: OUT/cache)")
	figures := fs.Bool("figures", true, "also write paper-ready exports under OUT/figures/<experiment> (SVG and PNG need chromium)")
	if err := parseFlags(fs, args, ""); err != nil {
		return err
	}
	cd := cmp.Or(*cacheDir, filepath.Join(*out, "cache"))
	res, err := bhasha.Demo(ctx, *dir, *out, bhasha.CacheDir(cd), bhasha.Log(stderr))
	for _, r := range res {
		printCounts(stdout, r.Dir(), r.Manifest())
		fmt.Fprintf(stdout, "  report: %s, %s\n", filepath.Join(r.Dir(), "report.html"), filepath.Join(r.Dir(), "report.xlsx"))
		if err != nil || !*figures {
			continue
		}
		dir := filepath.Join(*out, "figures", filepath.Base(r.Dir()))
		drawn, ferr := r.WriteExports(ctx, dir)
		if ferr != nil {
			return ferr
		}
		what := "figures as SVG, PNG and JSON, tables as CSV and LaTeX"
		if !drawn {
			what = "figures as ECharts JSON (install chromium for SVG and PNG), tables as CSV and LaTeX"
		}
		fmt.Fprintf(stdout, "  exports: %s/ (%s)\n", dir, what)
	}
	if len(res) > 0 {
		fmt.Fprintf(stdout, "every report: %s (open it in a browser; it works offline) and %s\n", filepath.Join(*out, "report.html"), filepath.Join(*out, "report.xlsx"))
		if *figures {
			fmt.Fprintf(stdout, "figures and tables for papers: %s/\n", filepath.Join(*out, "figures"))
		}
	}
	return err
}

func cmdDatasetsCheck(ctx context.Context, _ *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("datasets check", "datasets check PATH [flags]", stderr)
	var formats []string
	for _, f := range catalog.Formats {
		formats = append(formats, string(f))
	}
	format := fs.String("format", "", "dataset format (default: detected): "+strings.Join(formats, ", "))
	langs := fs.String("lang", "", "comma-separated languages to read (KLAR layouts)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args, ""); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("datasets check: one PATH is required")
	}
	var f catalog.Format
	if *format != "" {
		var err error
		if f, err = catalog.ParseFormat(*format); err != nil {
			return err
		}
	}
	var codes []string
	if *langs != "" {
		codes = strings.Split(*langs, ",")
	}
	// Collect every problem rather than stop at the first.
	s, f, err := catalog.Load(ctx, fs.Arg(0), f, lang.New(), codes, item.Options{SkipInvalid: true})
	if err != nil {
		return err
	}
	rep := s.Check()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(struct {
			Format catalog.Format `json:"format"`
			item.Report
		}{f, rep}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%s (format %s)\n%s", fs.Arg(0), f, rep)
	}
	if len(rep.Skipped) > 0 {
		return &statusError{exitProblems, fmt.Errorf("%s: %d invalid record(s)", fs.Arg(0), len(rep.Skipped))}
	}
	return nil
}

func cmdReport(ctx context.Context, reg *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	// The report's progress lines come from its own goroutines, beside
	// the command's notes.
	stderr = &lockedWriter{w: stderr}
	fs := newFlags("report", "report --run DIR [--config FILE] [--endpoint URL] [--html FILE] [--xlsx FILE] [--figures DIR]", stderr)
	dir := fs.String("run", "", "run directory (records.jsonl, manifest.json)")
	cfg := fs.String("config", "", "experiment file (default: the one named in the manifest)")
	endpoint := urlsFlag(fs, "endpoint", "where to send judge requests whose verdicts are not in the run yet (default: the experiment's endpoints); repeatable, or comma-separated, for replicas")
	cacheDir := fs.String("cache-dir", "", "response cache directory")
	html := fs.String("html", "", "also write the report as one self-contained HTML file (figures, tables, provenance; opens offline)")
	xlsx := fs.String("xlsx", "", "also write the report as an XLSX workbook (a sheet per table, provenance, a sample of the answers)")
	figures := fs.String("figures", "", "also write paper-ready exports to this directory: tables as CSV and LaTeX, figures as ECharts JSON and (with chromium installed) SVG and PNG")
	if err := parseFlags(fs, args, "report: --run is required", dir); err != nil {
		return err
	}
	oo := []bhasha.ReadOption{scoringProgress(stderr), bhasha.WithStudies(reg), bhasha.ExperimentFile(*cfg)} // "": the run's own
	isGrid := grid.IsGrid(*dir)
	r, err := bhasha.Open(ctx, *dir, oo...)
	if errors.Is(err, experiment.ErrUnknownStudy) {
		return ownStudy(fmt.Errorf("report: %w", err))
	}
	if err != nil {
		return fmt.Errorf("report: %w (use --config if the experiment moved)", err)
	}
	// A grid is opened as its merged run: the report is of that directory.
	*dir = r.Dir()
	// A grid's verdicts are its shards' own: its report asks for none.
	if r.Experiment().HasJudge() && !isGrid {
		// Ask for the verdicts missing on the answers the run has (never
		// for answers); a run with every verdict connects to nothing.
		opts, err := runOptions(r.Experiment().Name, *dir, *cacheDir, *endpoint, stderr)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		opts = append(opts, func(c *bhasha.RunConfig) { c.JudgeOnly = true })
		if _, err := bhasha.Run(ctx, r.Experiment(), opts...); err != nil && !errors.Is(err, bhasha.ErrIncomplete) {
			return fmt.Errorf("report: asking the judge for the run's answers: %w", err)
		}
		if r, err = bhasha.Open(ctx, *dir, oo...); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	every, err := progressEvery()
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// step prints progress.StepLine at each step's end, and every
	// BHASHA_PROGRESS_EVERY while it runs (next: when its next line is due).
	next := map[string]time.Duration{}
	step := func(st bhasha.ReportStep) {
		switch {
		case every <= 0:
			return
		case st.Final:
			delete(next, st.What)
		case st.Elapsed < cmp.Or(next[st.What], every):
			return
		default:
			next[st.What] = st.Elapsed + every
		}
		fmt.Fprintln(stderr, progress.StepLine("report: "+st.What, st.Done, st.Total, st.Elapsed, st.Final))
	}
	start := time.Now()
	step(bhasha.ReportStep{What: "scoring"})
	if _, err := r.Scored(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	step(bhasha.ReportStep{What: "scoring", Elapsed: time.Since(start), Final: true})
	list := func(ts []*bhasha.Table) { listTables("report", r, ts, stdout, stderr) }
	files := *html != "" || *xlsx != ""
	if files {
		defer memlimit.Hold(memlimit.Floor, reportHeapHeadroom, tableShare)()
	}
	drawn, opts := false, bhasha.ReportOptions{Progress: step, ReleaseRows: true}
	if *figures == "" && files {
		opts.Tables = list // the report writes the tables as it reads the records
	} else {
		start = time.Now() // the tables: the scored answers read back from the store when they were counted from it
		step(bhasha.ReportStep{What: "tables"})
		release := memlimit.Hold(memlimit.Floor, memlimit.Headroom, tableShare)
		ts, err := r.WriteTables()
		release()
		switch {
		case records.IsReadOnly(err) && *figures != "":
			fmt.Fprintf(stderr, "report: note: %s is read-only: its tables were not written under %s (the exports hold them)\n", *dir, filepath.Join(*dir, "tables"))
			ts = nil
		case records.IsReadOnly(err):
			return fmt.Errorf("report: %s is read-only, so its tables cannot be written under it: write the report elsewhere (--html FILE, --xlsx FILE or --figures DIR), or copy the run directory to a place that can be written: %w", *dir, err)
		case err != nil:
			return err
		}
		step(bhasha.ReportStep{What: "tables", Elapsed: time.Since(start), Final: true})
		list(ts)
		// The exports first: the report lets go of the scored answers (ReleaseRows).
		if *figures != "" {
			if drawn, err = r.WriteExports(ctx, *figures); err != nil {
				return err
			}
		}
	}
	if files {
		if err := r.WriteReport(ctx, *html, *xlsx, opts); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	for _, f := range [][2]string{{*html, "HTML report"}, {*xlsx, "workbook"}} {
		if f[0] != "" {
			fmt.Fprintf(stdout, "  %s  (%s)\n", f[0], f[1])
		}
	}
	if *figures != "" {
		what := "tables as CSV and LaTeX, figures as SVG, PNG and ECharts JSON"
		if !drawn {
			what = "tables as CSV and LaTeX, figures as ECharts JSON (install chromium for SVG and PNG)"
		}
		fmt.Fprintf(stdout, "  %s/  (%s)\n", *figures, what)
	}
	return nil
}

// listTables prints what scoring r noticed on stderr (labelled cmd), then
// its count of scored answers and the CSV file of each table of ts on
// stdout.
func listTables(cmd string, r *bhasha.Results, ts []*bhasha.Table, stdout, stderr io.Writer) {
	for _, n := range r.Notes() {
		fmt.Fprintf(stderr, "%s: note: %s: %s\n", cmd, r.Dir(), n)
	}
	scored, _ := r.Scored()
	fmt.Fprintf(stdout, "%s: %d scored answers%s\n", r.Dir(), scored, simLabel(r.Manifest()))
	out := filepath.Join(r.Dir(), "tables")
	for _, t := range ts {
		fmt.Fprintf(stdout, "  %s/%s.csv  %d rows\n", out, t.Name, t.Len())
	}
}

// cmdCompare sets two runs of the same items side by side: the
// comparison table as Markdown on stdout, and as CSV with --out.
func cmdCompare(ctx context.Context, reg *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", "compare --a DIR --b DIR [--out FILE.csv]", stderr)
	a := fs.String("a", "", "the first run directory (e.g. the authors' defaults)")
	b := fs.String("b", "", "the second run directory (the option changed)")
	out := fs.String("out", "", "also write the comparison table as CSV to this file")
	if err := parseFlags(fs, args, "compare: --a and --b are required", a, b); err != nil {
		return err
	}
	ra, err := bhasha.Open(ctx, *a, bhasha.WithStudies(reg))
	if err != nil {
		return ownStudy(fmt.Errorf("compare: %w", err))
	}
	rb, err := bhasha.Open(ctx, *b, bhasha.WithStudies(reg))
	if err != nil {
		return ownStudy(fmt.Errorf("compare: %w", err))
	}
	t, err := bhasha.Compare(ra, rb)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	fmt.Fprintf(stdout, "a = %s, b = %s\n\n%s", *a, *b, t.Markdown())
	if *out != "" {
		var buf bytes.Buffer
		if err := t.WriteCSV(&buf); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(*out, buf.Bytes()); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	return nil
}

// The pacing of the long commands' heap (memlimit.Hold): the floor and
// headroom of a run (its files, response cache and binary are beside the
// heap), the headroom of a report's HTML and workbook, and tableShare: a
// report (or its tables alone) lets its heap grow beyond what is live by
// the larger of its headroom and 1/tableShare of the live heap.
const (
	runHeapFloor       = 192 << 20
	runHeapHeadroom    = 64 << 20
	reportHeapHeadroom = 256 << 20
	tableShare         = 8
)

// holdRunHeap paces the heap of a run and of the scoring it ends with by
// the memory limit alone (memlimit.Hold), where Go's default pacing would
// collect each time the heap doubles (often, while little is live) and let
// it reach twice what is live; it returns the release.
func holdRunHeap() (release func()) { return memlimit.Hold(runHeapFloor, runHeapHeadroom, 4) }

// lockedWriter serializes the writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
