package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// plainLineRE matches a plain progress line: label, done, total, failed, cached, and
// the time left or taken.
var plainLineRE = regexp.MustCompile(`^(.+): (\d+)/(\d+) \(\d+\.\d %\), (\d+) failed, (\d+) cached, \d+\.\d/s, (about .+ left|time left unknown|done in .+)$`)

// progressLines runs bhasha args with stderr in a file and
// BHASHA_PROGRESS_EVERY=200ms, and returns its exit status, the progress
// lines labelled label, and the whole stderr.
func progressLines(t *testing.T, args []string, label string) (int, []progressLine, string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := cli(args...)
	c.Env = append(c.Env, progressEveryEnv+"=200ms")
	c.Stderr = f
	var stdout bytes.Buffer
	c.Stdout = &stdout
	code := 0
	if err := c.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if strings.ContainsAny(text, "\r\x1b") {
		t.Errorf("stderr in a file holds carriage returns or escapes: %q", text)
	}
	var out []progressLine
	for i, l := range strings.Split(text, "\n") {
		m := plainLineRE.FindStringSubmatch(l)
		if m == nil || m[1] != label {
			continue
		}
		p := progressLine{line: i, text: l, final: strings.HasPrefix(m[6], "done in")}
		p.done, _ = strconv.Atoi(m[2])
		p.total, _ = strconv.Atoi(m[3])
		p.failed, _ = strconv.Atoi(m[4])
		p.cached, _ = strconv.Atoi(m[5])
		out = append(out, p)
	}
	return code, out, text
}

type progressLine struct {
	line                        int // in stderr
	text                        string
	done, total, failed, cached int
	final                       bool
}

// checkProgress checks lines: at least ticks lines before the stage's end,
// never going back, then one final line with total records, none failed
// and cached from the cache, before stderr's line holding end (when not "").
func checkProgress(t *testing.T, lines []progressLine, stderr string, total, ticks, cached int, end string) {
	t.Helper()
	n, last := 0, 0
	for i, l := range lines {
		switch {
		case l.total != total || l.done < last || l.failed != 0:
			t.Errorf("line %q: want %d in all, done never going back (%d before), none failed", l.text, total, last)
		case !l.final && l.done < total:
			n++
		case l.final && (i != len(lines)-1 || l.done != total || l.cached != cached):
			t.Errorf("final line %q: want the last, %d/%d, %d cached", l.text, total, total, cached)
		}
		last = l.done
	}
	if n < ticks || len(lines) == 0 || !lines[len(lines)-1].final {
		t.Fatalf("%d progress lines before the end (want %d or more) and no final line:\n%s", n, ticks, stderr)
	}
	if end == "" {
		return
	}
	endAt := -1
	for i, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, end) {
			endAt = i
			break
		}
	}
	if endAt < 0 || lines[len(lines)-1].line > endAt {
		t.Errorf("the progress lines do not come before %q:\n%s", end, stderr)
	}
}

// With stderr in a file (nohup, a batch job, CI), bhasha run prints plain
// progress lines every BHASHA_PROGRESS_EVERY while it runs and one at the
// end, "killtest: 80/80 (100.0 %), 0 failed, 0 cached, …, done in 2.1 s";
// a run answered from the cache says how much was.
func TestPlainProgressOfRun(t *testing.T) {
	const n = 80 // 4 at a time, 100 ms each: about 2 s
	url := simtest.Start(t, sim.Config{TTFT: 100 * time.Millisecond})
	dir := t.TempDir()
	cfg := writeExperiment(t, dir, n)
	cases := []struct {
		name          string
		ticks, cached int
	}{
		{"sent", 4, 0},
		{"from the cache", 0, n}, // the same requests into a new directory
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("run%d", i))
			args := []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}
			code, lines, stderr := progressLines(t, args, "killtest")
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			checkProgress(t, lines, stderr, n, c.ticks, c.cached, out+": complete")
		})
	}
}

// bhasha report asking a judge for a run's verdicts prints plain progress
// lines of that stage when its stderr is a file.
func TestPlainProgressOfReport(t *testing.T) {
	path := "../../testdata/experiments/smoke-indicquest.yaml"
	exp, err := bhasha.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	// One request at a time, 100 ms each: the 15 verdicts take 1.5 s.
	url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items()), TTFT: 100 * time.Millisecond, MaxConcurrency: 1})
	out := t.TempDir()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(out, "experiment.yaml")
	y := strings.Replace(string(b), "dataset: {path: ../indicquest-v1}", "dataset: {path: "+filepath.Join(mustAbs(t, "../../testdata"), "indicquest-v1")+"}", 1)
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(out, "cache"), "--endpoint", url}, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	// Remove the judge's records, as if the judge had not been run.
	verdicts, _ := dropJudgeRecords(t, out)
	if verdicts == 0 {
		t.Fatal("no verdicts")
	}
	args := []string{"report", "--run", out, "--cache-dir", t.TempDir(), "--endpoint", url}
	code, lines, stderr := progressLines(t, args, exp.Name+" stage 2")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	checkProgress(t, lines, stderr, verdicts, 3, 0, "")
}

// simChildProcess is `bhasha sim` running in a child process.
type simChildProcess struct {
	url string
	mu  sync.Mutex
	log strings.Builder // its stderr so far
}

func (s *simChildProcess) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// startSimCLI starts `bhasha sim --addr 127.0.0.1:0 args...`, reads its base
// URL from its first line, and stops it with SIGINT when the test ends.
func startSimCLI(t *testing.T, args ...string) *simChildProcess {
	t.Helper()
	c := cli(append([]string{"sim", "--addr", "127.0.0.1:0"}, args...)...)
	pipe, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	s := &simChildProcess{}
	urls, read := make(chan string, 1), make(chan struct{})
	serving := regexp.MustCompile(`serving SIMULATED models at (\S+) `)
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		c.Process.Signal(syscall.SIGINT)
		select {
		case <-read:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-read
		}
		c.Wait()
	})
	select {
	case s.url = <-urls:
	case <-read:
		t.Fatalf("bhasha sim ended: %s", s.stderr())
	case <-time.After(20 * time.Second):
		t.Fatalf("bhasha sim said no URL: %s", s.stderr())
	}
	return s
}

// correctByModel sums the accuracy table's correct answers per model.
func correctByModel(t *testing.T, dir string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "tables", "accuracy.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("accuracy.csv: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[string]int{}
	for _, r := range rows[1:] {
		if r[col["metric"]] != "correct" {
			continue
		}
		k, err := strconv.Atoi(r[col["k"]])
		if err != nil {
			t.Fatalf("accuracy.csv: k %q", r[col["k"]])
		}
		out[r[col["model"]]] += k
	}
	return out
}

// A standalone `bhasha sim` started with --config knows the experiment's
// items and serves its models (here one that is not among the simulator's
// own), so a run against it scores above 0; started without, it knows only
// its bundled facts: every answer is "I don't know", its stderr says it
// does not know the items and how to fix that, and its responses carry
// X-Bhasha-Sim: unknown-item.
func TestSimConfigKnowsTheExperiment(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "klar.yaml")
	y := fmt.Sprintf(`name: sim-config
study: indicklar
dataset: {path: %s, format: klar}
languages: [ja, en]
forms: [native, english]
strategies: [baseline, baseline-cands]
sample: 6
models:
  - {name: base-8b, served_name: sim-base-8b, endpoints: [http://127.0.0.1:8000/v1]}
  - {name: custom-7b, served_name: acme/Custom-7B-Instruct, endpoints: [http://127.0.0.1:8000/v1], size_b: 70}
`, filepath.Join(mustAbs(t, "../../testdata"), "klar"))
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, err := bhasha.Load(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		simArgs []string
		config  string // the experiment run
		models  []string
		knows   bool
	}{
		{"with --config", []string{"--config", cfg}, cfg, []string{"base-8b", "custom-7b"}, true},
		// The simulator's own models only: acme/Custom-7B-Instruct is not served.
		{"without", nil, "../../testdata/experiments/smoke-klar.yaml", []string{"base-8b"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startSimCLI(t, c.simArgs...)
			out := filepath.Join(t.TempDir(), "run")
			code, msg := runCLI(t, cli("run", "--config", c.config, "--endpoint", s.url, "--out", out, "--cache-dir", filepath.Join(out, "cache")))
			if code != 0 {
				t.Fatalf("run: exit %d: %s", code, msg)
			}
			// The run's log and manifest say so too, not only the sim's stderr.
			m, _ := run.ReadManifest(out)
			if warned := strings.Contains(msg, "without it knowing their item") && m != nil && len(m.Warnings) == 1; warned == c.knows {
				t.Errorf("run (knows the items: %v) warned %v: %s", c.knows, warned, msg)
			}
			if code, msg := runCLI(t, cli("report", "--run", out)); code != 0 {
				t.Fatalf("report: exit %d: %s", code, msg)
			}
			correct := correctByModel(t, out)
			for _, m := range c.models {
				if got := correct[m] > 0; got != c.knows {
					t.Errorf("model %s: %d correct answers (knows the items: %v)", m, correct[m], c.knows)
				}
			}
			said := strings.Contains(s.stderr(), "the simulator does not know this item") && strings.Contains(s.stderr(), "start it with --config EXP (or --dataset)")
			if said == c.knows {
				t.Errorf("sim's stderr (knows the items: %v):\n%s", c.knows, s.stderr())
			}
			// A client sees it on one of the experiment's own requests.
			for r, err := range exp.StreamStage(1, nil, nil) {
				if err != nil {
					t.Fatal(err)
				}
				body, err := r.Body("sim-base-8b")
				if err != nil {
					t.Fatal(err)
				}
				path := "/chat/completions"
				if r.Kind != engine.Chat {
					path = "/completions"
				}
				resp, err := http.Post(s.url+path, "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if got := resp.Header.Get(engine.SimHeader) == engine.SimUnknownItem; resp.StatusCode != 200 || got == c.knows {
					t.Errorf("%d, %s: %q (knows the items: %v)", resp.StatusCode, engine.SimHeader, resp.Header.Get(engine.SimHeader), c.knows)
				}
				break
			}
		})
	}
}
