package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/internal/simulate"
	"github.com/bhashalab/bhasha/runtime/grid"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// slurm runs a Slurm command and returns its trimmed output.
func slurm(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	c := exec.Command(name, args...)
	c.Env = env
	out, err := c.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// The job files `bhasha cluster slurm` writes, submitted to a real Slurm
// (.ci/slurm-up starts a single-node one), run the shards beside servers
// of their own, resume the array task requeued while it runs, and their
// report job's tables are a single-process run's, timings aside. Without
// a Slurm that answers sinfo the test is skipped, unless
// BHASHA_REQUIRE_SLURM=1 (make test sets it when sinfo answers).
func TestSlurmGrid(t *testing.T) {
	if out, err := exec.Command("sinfo", "-h", "-o", "%T").CombinedOutput(); err != nil || !strings.Contains(string(out), "idle") && !strings.Contains(string(out), "mix") {
		msg := fmt.Sprintf("no Slurm node answers sinfo (%v: %s): start one with .ci/slurm-up (as root)", err, bytes.TrimSpace(out))
		if os.Getenv("BHASHA_REQUIRE_SLURM") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	const shards = 4
	dir := t.TempDir()
	if err := os.CopyFS(dir, bhasha.DefaultInputs()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f := filepath.Join(dir, "experiments", "smoke-indicklar.yaml")
	exp, err := bhasha.Load(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	whole, g, jobs := filepath.Join(dir, "whole"), filepath.Join(dir, "grid"), filepath.Join(dir, "jobs")
	url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items()), Models: simulate.ModelsOf(exp)})
	var se bytes.Buffer
	if err := dispatch(ctx, []string{"run", "--config", f, "--out", whole, "--cache-dir", filepath.Join(dir, "cache-whole"), "--endpoint", url}, &bytes.Buffer{}, &se); err != nil {
		t.Fatalf("single run: %v\n%s", err, se.String())
	}
	// Each answer takes a second, so that a task is still running when it
	// is requeued.
	args := []string{"cluster", "slurm", "--config", f, "--shards", fmt.Sprint(shards), "--parallel", "2", "--out", g, "--jobs", jobs,
		"--server-cmd", "bhasha sim --addr 127.0.0.1:{port} --config " + f + " --latency 1s", "--wait", "60"}
	if err := dispatch(ctx, args, &bytes.Buffer{}, &se); err != nil {
		t.Fatalf("cluster slurm: %v\n%s", err, se.String())
	}
	env := append(os.Environ(), "PATH="+fakeBin(t, map[string]string{}), "BHASHA_CACHE_DIR="+filepath.Join(dir, "cache-grid"))
	sub := exec.Command("sh", filepath.Join(jobs, "submit.sh"))
	sub.Env = env
	out, err := sub.CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, out)
	}
	report, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "Submitted batch job ")
	if !ok {
		t.Fatalf("submit.sh printed %q, want the report's job id", out)
	}
	info, err := slurm(t, env, "scontrol", "show", "job", report)
	_, dep, _ := strings.Cut(info, "Dependency=afterok:")
	array, _, _ := strings.Cut(dep, "_")
	if err != nil || array == "" {
		t.Fatalf("the report job names no array it waits for: %v\n%s", err, info)
	}
	t.Cleanup(func() { slurm(t, env, "scancel", array, report) })
	deadline := time.Now().Add(5 * time.Minute)
	logs := func() string {
		files, _ := filepath.Glob(filepath.Join(jobs, "*.log"))
		var b strings.Builder
		for _, l := range files {
			c, _ := os.ReadFile(l)
			fmt.Fprintf(&b, "== %s\n%s\n", filepath.Base(l), c)
		}
		return b.String()
	}

	// Requeue task 1 once it runs, and let it start again at once.
	task := array + "_1"
	for {
		state, _ := slurm(t, env, "squeue", "-h", "-j", task, "-o", "%T")
		if state == "RUNNING" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never ran (state %q)\n%s", task, state, logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The shard is answering once it has written its manifest.
	for {
		if _, err := os.Stat(filepath.Join(g, "shard-001-of-004", "manifest.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s's shard never started\n%s", task, logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if msg, err := slurm(t, env, "scontrol", "requeue", task); err != nil {
		t.Fatalf("scontrol requeue %s: %v: %s", task, err, msg)
	}
	t.Logf("%s requeued", task)
	// A requeued task waits before it runs again; it is told to start now
	// once it is pending.
	for {
		state, _ := slurm(t, env, "squeue", "-h", "-j", task, "-o", "%T")
		if state == "PENDING" {
			if msg, err := slurm(t, env, "scontrol", "update", "JobId="+task, "StartTime=now"); err != nil {
				t.Fatalf("scontrol update JobId=%s StartTime=now: %v: %s", task, err, msg)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s was not pending after its requeue (state %q)\n%s", task, state, logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		state, _ := slurm(t, env, "squeue", "-h", "-j", array+","+report, "-o", "%i %T %r")
		if state == "" {
			break
		}
		if time.Now().After(deadline) || strings.Contains(state, "DependencyNeverSatisfied") {
			t.Fatalf("the jobs did not finish: %s\n%s", state, logs())
		}
		time.Sleep(time.Second)
	}
	if info, _ := slurm(t, env, "scontrol", "show", "job", task); !strings.Contains(info, "Restarts=") || strings.Contains(info, "Restarts=0 ") {
		t.Errorf("task %s was not requeued:\n%s", task, info)
	}
	if _, err := os.Stat(filepath.Join(g, "report.html")); err != nil {
		t.Fatalf("the report job wrote no report: %v\n%s", err, logs())
	}
	got, want := reportTables(t, g), reportTables(t, whole)
	if len(got) != len(want) {
		t.Errorf("the grid has %d tables, the single run %d", len(got), len(want))
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s differs between the grid and the single run:\n%s", n, lineDiff(got[n], w))
		}
	}
	if _, err := os.Stat(filepath.Join(g, grid.MergedDir, "manifest.json")); err != nil {
		t.Error(err)
	}
}
