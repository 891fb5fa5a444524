package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/analysis/bpe"
	"github.com/bhashalab/bhasha/internal/simulate"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// writeTwoModels writes an experiment of n synthetic prompts asked of two
// simulated models.
func writeTwoModels(t *testing.T, dir string, n int) string {
	p := filepath.Join(dir, "two.yaml")
	y := fmt.Sprintf(`name: sharded
synthetic: {count: %d}
models:
  - {name: tiny, served_name: sim-tiny-1b, endpoints: ["http://127.0.0.1:1/v1"], max_concurrency: 4}
  - {name: base, served_name: sim-base-8b, endpoints: ["http://127.0.0.1:1/v1"], max_concurrency: 4}
decoding: {max_tokens: 8}
`, n)
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordKeys reads a run directory's record keys, failing on a duplicate.
func recordKeys(t *testing.T, dir string) []string {
	t.Helper()
	var keys []string
	err := records.Read(dir, func(r *engine.Record) error {
		if slices.Contains(keys, r.Key) {
			t.Errorf("%s: two records for %s", dir, r.Key)
		}
		if r.Status != engine.StatusOK {
			t.Errorf("%s: %s %s %s", dir, r.Key, r.Status, r.Error)
		}
		keys = append(keys, r.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// listing names every file under dir with its size ("" when dir does not
// exist).
func listing(dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %d\n", p, fi.Size())
		}
		return nil
	})
	return b.String()
}

// Each shard runs into its own directory of the grid, asks one model, and
// the shards together ask every request of the experiment once, and
// bhasha merge writes them as one run (into a new directory only); a grid
// of another count, and a count the experiment cannot be divided into, are
// refused and change nothing.
func TestRunShards(t *testing.T) {
	const n, shards = 10, 3
	url := simtest.Start(t, sim.Config{})
	dir := t.TempDir()
	cfg := writeTwoModels(t, dir, n)
	grid, cdir := filepath.Join(dir, "grid"), filepath.Join(dir, "cache")
	var all []string
	for k := range shards {
		var se bytes.Buffer
		args := []string{"run", "--config", cfg, "--out", grid, "--cache-dir", cdir, "--endpoint", url, "--shard", fmt.Sprintf("%d/%d", k, shards)}
		if err := dispatch(context.Background(), args, &bytes.Buffer{}, &se); err != nil {
			t.Fatalf("shard %d: %v\n%s", k, err, se.String())
		}
		sd := filepath.Join(grid, fmt.Sprintf("shard-%03d-of-%03d", k, shards))
		m, err := run.ReadManifest(sd)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%d/%d", k, shards); m.Shard != want || m.Status != "complete" || m.ExperimentHash == "" {
			t.Errorf("shard %d: manifest shard %q status %q digest %q, want %q complete and the experiment's digest", k, m.Shard, m.Status, m.ExperimentHash, want)
		}
		models := map[string]bool{}
		for _, key := range recordKeys(t, sd) {
			kk, err := engine.ParseKey(key)
			if err != nil {
				t.Fatal(err)
			}
			models[kk.Model] = true
		}
		if len(models) != 1 {
			t.Errorf("shard %d asks models %v, want one", k, models)
		}
		if left := scoredFiles(sd); len(left) > 0 {
			t.Errorf("shard %d was scored on its own: %v", k, left) // the grid's report scores them together
		}
		all = append(all, recordKeys(t, sd)...)
	}
	slices.Sort(all)
	whole := filepath.Join(dir, "whole")
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", whole, "--cache-dir", cdir, "--endpoint", url, "--no-tables"}, &so, &se); err != nil {
		t.Fatalf("whole run: %v\n%s", err, se.String())
	}
	if left := scoredFiles(whole); len(left) > 0 || so.Len() > 0 {
		t.Errorf("run --no-tables wrote %v and said %q", left, so.String())
	}
	if want := recordKeys(t, whole); !slices.Equal(all, want) || len(want) != 2*n {
		t.Errorf("the shards asked %d requests, the whole run %d: %v vs %v", len(all), len(want), all, want)
	}

	merged := filepath.Join(dir, "merged")
	if err := dispatch(context.Background(), []string{"merge", "--grid", grid, "--out", merged}, &bytes.Buffer{}, &se); err != nil {
		t.Fatalf("merge: %v\n%s", err, se.String())
	}
	if got := recordKeys(t, merged); !slices.Equal(got, all) {
		t.Errorf("the merged run holds %d requests, the shards %d", len(got), len(all))
	}
	before := listing(merged)
	err := dispatch(context.Background(), []string{"merge", "--grid", grid, "--out", merged}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "exists and is not empty") {
		t.Errorf("merge into the merged run again: %v, want a refusal", err)
	}
	if after := listing(merged); after != before {
		t.Errorf("the refused merge changed %s", merged)
	}

	refusals := []struct {
		name, out, spec, want string
	}{
		{"another count", grid, "0/2", "holds shards of 3 (shard-000-of-003) and this is shard 0/2 of 2"},
		{"fewer shards than models", filepath.Join(dir, "new"), "0/1", "at least 2 shards"},
		{"bad spec", filepath.Join(dir, "new"), "2/2", "0 ≤ K < N"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			before := listing(c.out)
			args := []string{"run", "--config", cfg, "--out", c.out, "--cache-dir", cdir, "--endpoint", url, "--shard", c.spec}
			err := dispatch(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if after := listing(c.out); after != before {
				t.Errorf("the refusal changed %s:\n%s\nwas\n%s", c.out, after, before)
			}
		})
	}
}

// scoredFiles are the files of dir that scoring a run writes.
func scoredFiles(dir string) []string {
	var out []string
	for _, name := range []string{"tables", "scored.parquet", "scored-tables"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// A shard stopped by SIGTERM (as Slurm and Kubernetes stop a task) exits
// as interrupted, and run again ends with the records of an uninterrupted
// run of the same shard: the same keys, each once.
func TestShardTermAndResume(t *testing.T) {
	const n = 200
	// The shard cannot finish before it is stopped: past the first n/2
	// requests the simulator holds each until release.
	held := make(chan struct{})
	var once sync.Once
	hold, release := holdAfter(t, n/2, nil)
	asked := atomic.Int64{}
	url := simtest.Start(t, sim.Config{OnRequest: func(path string, body []byte) {
		if asked.Add(1) > n/2 {
			once.Do(func() { close(held) })
		}
		hold(path, body)
	}})
	dir := t.TempDir()
	cfg := writeTwoModels(t, dir, n)
	grid, cdir := filepath.Join(dir, "grid"), filepath.Join(dir, "cache")
	args := []string{"run", "--config", cfg, "--out", grid, "--cache-dir", filepath.Join(dir, "cache-t"), "--endpoint", url, "--shard", "auto"}
	sd := filepath.Join(grid, "shard-001-of-002")

	child, stderr := startShard(t, args, held, "BHASHA_SHARD=1/2")
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := child.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("stopped shard: %v, want exit status %d\n%s", err, exitInterrupted, stderr.String())
	}
	if m, err := run.ReadManifest(sd); err != nil || m.Status != "interrupted" || m.Counts.Records == 0 {
		t.Fatalf("manifest after SIGTERM: %+v, %v; want an interrupted run with records", m, err)
	}
	release()
	again := cli(args...)
	again.Env = append(again.Env, "BHASHA_SHARD=1/2")
	if msg, err := again.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, msg)
	}
	other := filepath.Join(dir, "other")
	var se bytes.Buffer
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", other, "--cache-dir", cdir, "--endpoint", url, "--shard", "1/2"}, &bytes.Buffer{}, &se); err != nil {
		t.Fatalf("uninterrupted shard: %v\n%s", err, se.String())
	}
	got, want := recordKeys(t, sd), recordKeys(t, filepath.Join(other, "shard-001-of-002"))
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("resumed shard has %d keys, an uninterrupted one %d", len(got), len(want))
	}
}

// startShard starts `bhasha args...` with env added and returns once the
// simulator has held a request (held is closed; 20 s at most).
func startShard(t *testing.T, args []string, held <-chan struct{}, env ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	c := cli(args...)
	c.Env = append(c.Env, env...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		c.Process.Kill()
		c.Wait()
		t.Fatalf("no progress; stderr: %s", stderr.String())
	}
	return c, &stderr
}

// For every built-in smoke experiment, plan counts, by the model each
// request goes to, what bhasha run then asks of the simulator, and its
// shards together count the same; a stage whose requests depend on what
// the answers say (the distractor study's judge) is named as not counted,
// and its requests left out of the comparison.
func TestPlanMatchesRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, bhasha.DefaultInputs()); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "experiments", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no smoke experiments: %v", err)
	}
	ctx := context.Background()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			exp, err := bhasha.Load(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := planOf(ctx, exp, 0)
			if err != nil {
				t.Fatal(err)
			}
			url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items()), Models: simulate.ModelsOf(exp)})
			out := filepath.Join(dir, "runs", filepath.Base(f))
			var se bytes.Buffer
			if err := dispatch(ctx, []string{"run", "--config", f, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}, &bytes.Buffer{}, &se); err != nil {
				t.Fatalf("run: %v\n%s", err, se.String())
			}
			counted := map[string]bool{} // models the plan counts a request of
			for c := range p.tally {
				counted[c.Model] = true
			}
			sent, uncounted := map[string]int{}, 0
			for _, key := range recordKeys(t, out) {
				k, err := engine.ParseKey(key)
				if err != nil {
					t.Fatal(err)
				}
				if !counted[k.Model] && len(p.unknownStages()) > 0 {
					uncounted++
					continue
				}
				sent[k.Model]++
			}
			if uncounted > 0 && exp.Judge == nil {
				t.Errorf("%d records of a stage the plan did not count, and no judge", uncounted)
			}
			if got := p.byModel(); fmt.Sprint(got) != fmt.Sprint(sent) {
				t.Errorf("plan counts %v, the run asked %v", got, sent)
			}
			n := len(exp.Models) + 1
			sp, err := planOf(ctx, exp, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := sp.byModel(); fmt.Sprint(got) != fmt.Sprint(sent) {
				t.Errorf("%d shards count %v, the run asked %v", n, got, sent)
			}
			var text bytes.Buffer
			if err := dispatch(ctx, []string{"plan", "--config", f, "--shards", fmt.Sprint(n), "--rate", "2"}, &text, &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			wants := []string{fmt.Sprintf("%d request(s)", len(recordKeys(t, out))-uncounted), sp.layout.Shards[0].Model, shardDir(n), "GPU-hours at 2 requests a second"}
			for _, s := range p.unknownStages() {
				wants = append(wants, fmt.Sprintf("stage %d: not counted", s))
			}
			for _, want := range wants {
				if !strings.Contains(text.String(), want) {
					t.Errorf("plan printed no %q:\n%s", want, text.String())
				}
			}
		})
	}
}

// shardDir is the directory of the last of n shards.
func shardDir(n int) string { return fmt.Sprintf("shard-%03d-of-%03d", n-1, n) }

// plan counts the prompt tokens of a model that names a tokenizer, each
// prompt's text as the tokenization tables count it, and says which
// tokenizer; another model's are not counted.
func TestPlanTokens(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, bhasha.DefaultInputs()); err != nil {
		t.Fatal(err)
	}
	tok, err := filepath.Abs("../../testdata/tokenizers/cache/qwen3/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "experiments", "smoke-indicklar.yaml")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "served_name: sim-tiny-1b,", "served_name: sim-tiny-1b, tokenizer: "+tok+",", 1)
	if y == string(b) {
		t.Fatal("the smoke experiment's tiny-1b entry moved")
	}
	if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	exp, err := bhasha.Load(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := planOf(ctx, exp, 0)
	if err != nil {
		t.Fatal(err)
	}
	bt, err := bpe.Load(tok)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for r, err := range exp.StreamStage(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		text := r.Prompt
		for _, m := range r.Messages {
			text += m.Content
		}
		n, err := bt.Count(text)
		if err != nil {
			t.Fatal(err)
		}
		if r.Key.Model == "tiny-1b" {
			want[r.Key.Model] += n
		}
	}
	got := map[string]int{}
	for c, k := range p.tally {
		if c.Stage == 1 {
			got[c.Model] += k.PromptTokens
			if c.Model == "tiny-1b" && k.Counted != k.Built || c.Model != "tiny-1b" && k.Counted != 0 {
				t.Errorf("%+v: counted %d of %d built prompts", c, k.Counted, k.Built)
			}
		}
	}
	if want["tiny-1b"] == 0 || got["tiny-1b"] != want["tiny-1b"] || got["large-70b"] != 0 {
		t.Errorf("prompt tokens %v, want %v", got, want)
	}
	var text bytes.Buffer
	if err := dispatch(ctx, []string{"plan", "--config", f}, &text, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "tiny-1b: "+tok) || !strings.Contains(text.String(), fmt.Sprint(want["tiny-1b"])) {
		t.Errorf("plan printed:\n%s", text.String())
	}
}

// byModel sums the plan's requests by the model they are sent to.
func (p *plan) byModel() map[string]int {
	out := map[string]int{}
	for c, n := range p.tally {
		out[c.Model] += n.Requests
	}
	return out
}
