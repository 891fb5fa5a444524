package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/analysis/bpe"
	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
	"github.com/bhashalab/bhasha/studies/distractors"
)

// The test binary doubles as the bhasha command when BHASHA_AS_CLI is set,
// so that tests can run (and SIGKILL) a real child process.
func TestMain(m *testing.M) {
	if os.Getenv("BHASHA_AS_CLI") == "1" {
		Main()
	}
	if s := os.Getenv("BHASHA_GRID_STEP"); s != "" { // one step of BenchmarkPapersGrid
		os.Exit(gridStep(s))
	}
	os.Exit(m.Run())
}

// dispatch runs one command line with the built-in studies.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return Run(ctx, args, stdout, stderr, nil)
}

func cli(args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), "BHASHA_AS_CLI=1")
	return c
}

type bodyLog struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (l *bodyLog) add(_ string, b []byte) {
	l.mu.Lock()
	l.bodies = append(l.bodies, append([]byte(nil), b...))
	l.mu.Unlock()
}

func (l *bodyLog) take() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.bodies
	l.bodies = nil
	return out
}

func writeExperiment(t *testing.T, dir string, n int) string {
	p := filepath.Join(dir, "exp.yaml")
	y := fmt.Sprintf(`name: killtest
synthetic: {count: %d}
models:
  - {name: tiny, served_name: sim-tiny-1b, endpoints: ["http://127.0.0.1:1/v1"], max_concurrency: 4}
decoding: {max_tokens: 8}
`, n)
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// holdAfter is a simulator's OnRequest that sees each request with also
// (when not nil) and holds every request past the first n until release
// (at the latest when the test ends): a run of more than n requests
// cannot finish before release, however fast or slow the machine.
func holdAfter(t *testing.T, n int, also func(string, []byte)) (onRequest func(string, []byte), release func()) {
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	var mu sync.Mutex
	asked := 0
	return func(path string, body []byte) {
		if also != nil {
			also(path, body)
		}
		mu.Lock()
		asked++
		held := asked > n
		mu.Unlock()
		if held {
			<-gate
		}
	}, release
}

// startRun starts `bhasha args...` as a child process and returns once
// out/records.jsonl holds at least min records (20 s at most), with the
// child's stderr.
func startRun(t *testing.T, args []string, out string, min int) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	c := cli(args...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for countLines(filepath.Join(out, records.FileName)) < min {
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("no progress; stderr: %s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return c, &stderr
}

func countLines(p string) int {
	b, _ := os.ReadFile(p)
	return bytes.Count(b, []byte("\n"))
}

// A run killed with SIGKILL mid-way and started again completes, sends no
// request whose answer was already cached, and ends with exactly one
// record per key; a third start sends nothing.
func TestKillAndResume(t *testing.T) {
	const n = 300
	log := &bodyLog{}
	hold, release := holdAfter(t, n-10, log.add) // the run is killed before it can finish
	url := simtest.Start(t, sim.Config{TTFT: 15 * time.Millisecond, OnRequest: hold})
	dir := t.TempDir()
	cfg := writeExperiment(t, dir, n)
	out, cdir := filepath.Join(dir, "run"), filepath.Join(dir, "cache")
	args := []string{"run", "--config", cfg, "--out", out, "--cache-dir", cdir, "--endpoint", url}

	child, _ := startRun(t, args, out, 40)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	release()
	firstBodies := len(log.take())
	if got := countLines(filepath.Join(out, records.FileName)); got >= n {
		t.Fatalf("the run finished (%d records) before it was killed", got)
	}

	store, _, err := cache.Open(cdir)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[[32]byte]bool{}
	for _, k := range store.Keys() {
		stored[k] = true
	}
	store.Close()

	second := cli(args...)
	msg, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, msg)
	}
	resent := 0
	id := engine.Identity{ID: "sim-tiny-1b", Root: sim.Root("sim-tiny-1b", nil)}
	bodies := log.take()
	for _, b := range bodies {
		if stored[engine.CacheKey(id, engine.Chat, b)] {
			resent++
		}
	}
	if resent > 0 {
		t.Errorf("resume re-sent %d request(s) whose answers were cached", resent)
	}
	if firstBodies+len(bodies) < n {
		t.Errorf("the two runs sent %d+%d requests for %d keys", firstBodies, len(bodies), n)
	}
	keys := map[string]bool{}
	err = records.Read(out, func(r *engine.Record) error {
		if keys[r.Key] {
			t.Errorf("two records for %s", r.Key)
		}
		keys[r.Key] = true
		if r.Status != engine.StatusOK {
			t.Errorf("%s: %s %s", r.Key, r.Status, r.Error)
		}
		return nil
	})
	if err != nil || len(keys) != n {
		t.Fatalf("%d keys, %v", len(keys), err)
	}
	var m struct {
		Status    string
		Simulated bool
		Counts    struct{ Records, OK int }
	}
	b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	json.Unmarshal(b, &m)
	if m.Status != "complete" || !m.Simulated || m.Counts.Records != n || m.Counts.OK != n {
		t.Errorf("manifest %s", b)
	}

	third := cli(args...)
	if msg, err := third.CombinedOutput(); err != nil {
		t.Fatalf("third run: %v\n%s", err, msg)
	}
	if sent := len(log.take()); sent != 0 {
		t.Errorf("re-running a finished experiment sent %d requests", sent)
	}
}

func TestHelpOnEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"run", "--help"}, {"sim", "--help"}, {"batch", "export", "--help"}, {"batch", "import", "--help"}, {"demo", "--help"}, {"--help"}} {
		var out, errb bytes.Buffer
		err := dispatch(context.Background(), args, &out, &errb)
		text := out.String() + errb.String()
		if !strings.Contains(text, "usage") && !strings.Contains(text, "Commands") {
			t.Errorf("%v: no usage text (%v): %q", args, err, text)
		}
	}
	if err := dispatch(context.Background(), []string{"frobnicate"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("unknown command: %v", err)
	}
}

// Batch export writes exactly the request bodies the engine would send;
// feeding them to a server and importing the answers leaves nothing pending.
func TestBatchRoundTrip(t *testing.T) {
	url, dir, cfg, out, cdir, so := exportBatch(t, 20)
	var se bytes.Buffer
	if !strings.Contains(so.String(), "20 pending") {
		t.Fatalf("export said %q", so.String())
	}
	ofile := playBatch(t, filepath.Join(out, "batch", "input.jsonl"), url, 3)
	so.Reset()
	if err := dispatch(context.Background(), []string{"batch", "import", "--out", out, "--file", ofile, "--cache-dir", cdir}, so, &se); err != nil {
		t.Fatalf("%v %s", err, se.String())
	}
	if !strings.Contains(so.String(), "imported 19 ok, 1 failed") {
		t.Fatalf("import said %q", so.String())
	}
	// A run now sends only the failed request (retried), answering none from the cache.
	log := &bodyLog{}
	url2 := simtest.Start(t, sim.Config{OnRequest: log.add})
	se.Reset()
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", cdir, "--endpoint", url2}, so, &se); err != nil {
		t.Fatalf("%v %s", err, se.String())
	}
	if sent := len(log.take()); sent != 1 {
		t.Errorf("run after import sent %d requests, want 1 (the failed one)", sent)
	}
	// Unknown custom_id: an error naming the file and line.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"custom_id":"nope","response":{"status_code":200,"body":{}}}`+"\n"), 0o644)
	err := dispatch(context.Background(), []string{"batch", "import", "--out", out, "--file", bad, "--cache-dir", cdir}, so, &se)
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl line 1") {
		t.Errorf("bad custom_id: %v", err)
	}
}

// exportBatch exports a synthetic experiment of n requests as a batch
// file, against a fresh simulator; it returns the simulator's URL, the
// test directory, the experiment file, the run and cache directories and
// the export's output.
func exportBatch(t *testing.T, n int) (url, dir, cfg, out, cdir string, so *bytes.Buffer) {
	t.Helper()
	url = simtest.Start(t, sim.Config{})
	dir = t.TempDir()
	cfg = writeExperiment(t, dir, n)
	out, cdir = filepath.Join(dir, "run"), filepath.Join(dir, "cache")
	so = &bytes.Buffer{}
	var se bytes.Buffer
	if err := dispatch(context.Background(), []string{"batch", "export", "--config", cfg, "--out", out, "--cache-dir", cdir}, so, &se); err != nil {
		t.Fatalf("%v %s", err, se.String())
	}
	return url, dir, cfg, out, cdir, so
}

func httpPost(url string, body []byte) ([]byte, error) {
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// The API key reaches the server but never a record, manifest, cache entry or log line.
func TestAPIKeyNeverWritten(t *testing.T) {
	const secret = "sk-bhasha-test-5ecret"
	t.Setenv("BHASHA_TEST_KEY", secret)
	url := simtest.Start(t, sim.Config{APIKey: secret})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte(`name: keytest
synthetic: {count: 5}
models:
  - {name: tiny, served_name: sim-tiny-1b, endpoints: ["http://127.0.0.1:1/v1"], api_key_env: BHASHA_TEST_KEY}
decoding: {max_tokens: 8}
`), 0o644)
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", filepath.Join(dir, "run"), "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}, &so, &se); err != nil {
		t.Fatalf("%v %s", err, se.String())
	}
	if !strings.Contains(se.String(), "5 ok") {
		t.Fatalf("run: %s", se.String())
	}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if info.Mode().IsRegular() && p != cfg {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s contains the API key", p)
			}
		}
		return nil
	})
	if strings.Contains(so.String()+se.String(), secret) {
		t.Error("the log contains the API key")
	}
	// Without the key the server refuses, and the error says so.
	t.Setenv("BHASHA_TEST_KEY", "wrong")
	err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", filepath.Join(dir, "run2"), "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}, &so, &se)
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "$BHASHA_TEST_KEY was refused") ||
		strings.Contains(err.Error(), "wrong") || strings.Contains(err.Error(), "reachable") {
		t.Errorf("wrong key: %v", err)
	}
}

func TestDatasetsCheck(t *testing.T) {
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"datasets", "check", "../../testdata/indicklar/project_page_demo_hin_excerpt.json"}, &so, &se); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"format indicklar-page", "24 items", "hin/code-mixed", "hin/native", "eng/english"} {
		if !strings.Contains(so.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, so.String())
		}
	}
	// Every problem is reported, and the command fails.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "english.csv"), []byte("question,answer\nq1,a1\nq2,\nq3,a3\n,a4\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "hindi.csv"), []byte("question,answer\nप्र1,उ1\n"), 0o644)
	so.Reset()
	err := dispatch(context.Background(), []string{"datasets", "check", "--json", dir}, &so, &se)
	if err == nil || !strings.Contains(err.Error(), "2 invalid record(s)") {
		t.Fatalf("error %v", err)
	}
	var rep struct {
		Format  string
		Items   int
		Missing map[string][]string
		Skipped []struct {
			Line  int
			Field string
		}
	}
	if err := json.Unmarshal(so.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, so.String())
	}
	if rep.Format != "indicquest" || rep.Items != 2 || len(rep.Skipped) != 2 || rep.Skipped[0].Line != 3 || rep.Skipped[1].Field != "Question" ||
		len(rep.Missing["hin/native"]) != 1 {
		t.Errorf("report %+v", rep)
	}
	// A row shifted by an unquoted comma is invalid, not read shifted.
	os.WriteFile(filepath.Join(dir, "english.csv"), []byte("question,answer\nq1,a1\nWho was born, in 1920?,Raj Kapoor\n"), 0o644)
	so.Reset()
	err = dispatch(context.Background(), []string{"datasets", "check", "--json", dir}, &so, &se)
	rep.Skipped = nil
	json.Unmarshal(so.Bytes(), &rep)
	if err == nil || len(rep.Skipped) != 1 || rep.Skipped[0].Line != 3 || rep.Skipped[0].Field != "column 3" {
		t.Errorf("shifted row: %v %+v", err, rep.Skipped)
	}
}

// The smoke experiments run end to end against the simulator (loaded with
// each experiment's own items), both stages of the two-step strategies
// included, and a second run sends nothing.
func TestSmokeExperiments(t *testing.T) {
	cases := []struct {
		file    string
		records int
	}{
		// 8 items × 2 models × (2 baselines × 3 forms + 5 one-stage + 3 two-stage × 2 stages)
		{"smoke-indicklar.yaml", 8 * 2 * (6 + 5 + 6)},
		// 6 items × (2 baselines × 2 languages + tint-en + 2 × 2step-en + 3 ablations on Japanese)
		{"smoke-klar.yaml", 6 * (4 + 1 + 2 + 3)},
		// 5 items × 3 languages: an answer and a verdict each
		{"smoke-indicquest.yaml", 5 * 3 * 2},
		// 10 questions × 8 conditions × 2 models, plus one verdict per switched answer (counted below)
		{"smoke-mdi.yaml", 10 * 8 * 2},
		// the 4 sampled items have 4+5+4+5 choices (counted below) × 2 conditions
		{"smoke-mdi-truthfulqa.yaml", -2},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("../../testdata/experiments", c.file)
			exp, err := bhasha.Load(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if c.records < 0 { // per choice × conditions
				n := 0
				for _, it := range exp.Items().Items {
					n += len(it.Choices)
				}
				c.records = n * -c.records
			}
			log := &bodyLog{}
			url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items()), OnRequest: log.add})
			out := t.TempDir()
			args := []string{"run", "--config", path, "--out", out, "--cache-dir", filepath.Join(out, "cache"), "--endpoint", url}
			var so, se bytes.Buffer
			if err := dispatch(context.Background(), args, &so, &se); err != nil {
				t.Fatalf("%v\n%s", err, se.String())
			}
			if !strings.Contains(so.String(), out+"/tables/accuracy.csv") || !strings.Contains(so.String(), "[SIMULATED models]") {
				t.Errorf("run said %q", so.String())
			}
			// The run kept its scored answers and tables: a notebook's
			// first cell reads them and scores nothing.
			var steps []string
			r, err := bhasha.Open(context.Background(), out, bhasha.OnScoring(func(p bhasha.ScoringProgress) { steps = append(steps, p.Step) }))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Table("accuracy"); err != nil || slices.Contains(steps, "scoring") {
				t.Errorf("the first open after the run: %v, steps %q", err, steps)
			}
			m, err := run.ReadManifest(out)
			if err != nil {
				t.Fatal(err)
			}
			if m.Dataset == nil || m.Dataset.Items == 0 {
				t.Errorf("manifest has no dataset: %+v", m.Dataset)
			}
			switched, verdicts := 0, 0
			records.Read(out, func(r *engine.Record) error {
				if r.Fields.Strategy == "qa" && r.Fields.Role.IsZero() && distractors.NeedsJudge(r.Response) {
					switched++
				}
				if r.Fields.Strategy == "qa" && r.Fields.Role.Kind == engine.RoleJudge {
					verdicts++
				}
				return nil
			})
			if switched != verdicts {
				t.Errorf("%d switched answers, %d semantic verdicts", switched, verdicts)
			}
			c.records += verdicts
			if m.Status != "complete" || m.Counts.Records != c.records || m.Counts.OK != c.records || !m.Simulated || len(m.Templates) == 0 || m.Blocked != 0 {
				t.Errorf("manifest %+v\n%s", m, se.String())
			}
			stages := map[string]int{}
			methods := map[string]int{}
			records.Read(out, func(r *engine.Record) error {
				switch {
				case r.Fields.Role.Kind == engine.RoleTranslation:
					stages["translation"]++
				case r.Fields.Role.Kind == engine.RoleJudge:
					stages["judge"]++
				case r.Fields.Role.IsZero() && strings.HasPrefix(r.Fields.Strategy, "2step"):
					stages["two-step answer"]++
				case r.Fields.Role.IsZero():
					stages["answer"]++
				}
				switch {
				case r.Fields.Strategy == "mc1":
					if r.Extracted != nil || len(r.Logprobs) == 0 {
						t.Errorf("%s: mc1 records carry log-probabilities, not an extraction", r.Key)
					}
				case r.Extracted == nil || r.Extracted.Method == "":
					t.Errorf("%s: no extraction", r.Key)
				default:
					methods[string(r.Extracted.Method)]++
				}
				return nil
			})
			t.Logf("extraction methods: %v", methods)
			// Every first stage has its second: a translation its answer, an answer its verdict.
			switch exp.Study {
			case "indicklar":
				if exp.Stages() == 2 && (stages["translation"] == 0 || stages["translation"] != stages["two-step answer"]) {
					t.Errorf("stages %v", stages)
				}
			case "indicquest":
				if stages["answer"] == 0 || stages["answer"] != stages["judge"] {
					t.Errorf("stages %v", stages)
				}
			}
			so.Reset()
			if err := dispatch(context.Background(), []string{"report", "--run", out}, &so, &se); err != nil {
				t.Fatalf("report: %v", err)
			}
			if !strings.Contains(so.String(), "accuracy.csv") || !strings.Contains(so.String(), "[SIMULATED models]") {
				t.Errorf("report said %q", so.String())
			}
			acc, err := os.ReadFile(filepath.Join(out, "tables", "accuracy.csv"))
			if err != nil || !strings.HasPrefix(string(acc), "simulated,study,model,") || strings.Count(string(acc), "\ntrue,") < 2 {
				t.Errorf("accuracy.csv: %v\n%s", err, acc)
			}
			log.take()
			if err := dispatch(context.Background(), args, &so, &se); err != nil {
				t.Fatal(err)
			}
			if n := len(log.take()); n != 0 {
				t.Errorf("second run sent %d requests", n)
			}
		})
	}
}

// A bad dataset row stops a run with file, line and field; --skip-invalid
// runs the rest and lists the row in the manifest.
func TestRunSkipInvalid(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "iq")
	os.MkdirAll(data, 0o755)
	os.WriteFile(filepath.Join(data, "english.csv"), []byte("question,answer\nCapital of India?,New Delhi\nBroken?,\nCapital of France?,Paris\n"), 0o644)
	cfg := filepath.Join(dir, "e.yaml")
	os.WriteFile(cfg, []byte(`name: skip
study: indicquest
dataset: {path: iq}
models: [{name: m, served_name: sim-tiny-1b, endpoints: ["http://127.0.0.1:1/v1"]}]
judge: {name: j, served_name: sim-base-8b, endpoints: ["http://127.0.0.1:1/v1"]}
`), 0o644)
	url := simtest.Start(t, sim.Config{})
	args := []string{"run", "--config", cfg, "--out", filepath.Join(dir, "run"), "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}
	var so, se bytes.Buffer
	err := dispatch(context.Background(), args, &so, &se)
	if err == nil || !strings.Contains(err.Error(), "english.csv line 3 field \"Answer\": empty") {
		t.Fatalf("without --skip-invalid: %v", err)
	}
	if err := dispatch(context.Background(), append(args, "--skip-invalid"), &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	m, err := run.ReadManifest(filepath.Join(dir, "run"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Counts.Records != 4 || m.Dataset == nil || len(m.Dataset.Skipped) != 1 || m.Dataset.Skipped[0].Line != 3 {
		t.Errorf("manifest counts %+v dataset %+v", m.Counts, m.Dataset)
	}
}

// A run finished without its judge gets the verdicts from report, which
// sends only the judge's requests.
func TestReportCompletesJudgeStage(t *testing.T) {
	path := "../../testdata/experiments/smoke-indicquest.yaml"
	exp, err := bhasha.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	log := &bodyLog{}
	url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items()), OnRequest: log.add})
	out := t.TempDir()
	// A copy of the experiment next to the run (the manifest names it).
	b, _ := os.ReadFile(path)
	cfg := filepath.Join(out, "experiment.yaml")
	os.WriteFile(cfg, []byte(strings.Replace(string(b), "dataset: {path: ../indicquest-v1}", "dataset: {path: "+filepath.Join(mustAbs(t, "../../testdata"), "indicquest-v1")+"}", 1)), 0o644)
	var so, se bytes.Buffer
	args := []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(out, "cache"), "--endpoint", url}
	if err := dispatch(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	// Remove the judge's records, as if the judge had not been run.
	_, answers := dropJudgeRecords(t, out)
	log.take()
	so.Reset()
	if err := dispatch(context.Background(), []string{"report", "--run", out, "--cache-dir", t.TempDir(), "--endpoint", url}, &so, &se); err != nil {
		t.Fatalf("report: %v\n%s", err, se.String())
	}
	sent := log.take()
	if len(sent) != answers {
		t.Errorf("report sent %d requests for %d answers", len(sent), answers)
	}
	for _, body := range sent {
		if !bytes.Contains(body, []byte("is_correct")) {
			t.Errorf("report sent a non-judge request: %.80s", body)
		}
	}
	// A second report sends nothing.
	if err := dispatch(context.Background(), []string{"report", "--run", out, "--endpoint", url}, &so, &se); err != nil {
		t.Fatal(err)
	}
	if n := len(log.take()); n != 0 {
		t.Errorf("second report sent %d requests", n)
	}
}

// dropJudgeRecords removes the judge's records from out/records.jsonl,
// as if the judge had not been run, keeping the other lines as written
// (sealed), and returns how many it removed and kept.
func dropJudgeRecords(t *testing.T, out string) (dropped, kept int) {
	t.Helper()
	p := filepath.Join(out, records.FileName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		var r engine.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Fields.Role.Kind == engine.RoleJudge {
			dropped++
			continue
		}
		keep = append(keep, line)
	}
	if err := os.WriteFile(p, []byte(strings.Join(keep, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dropped, len(keep)
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// With a tokenizer.json named in the experiment, the tokenization table
// counts the baseline prompts offline.
func TestOfflineTokenization(t *testing.T) {
	tokPath := mustAbs(t, "../../testdata/tokenizers/cache/llama3_1/tokenizer.json")
	if _, err := os.Stat(tokPath); err != nil {
		if os.Getenv("BHASHA_REQUIRE_TOKENIZERS") != "" {
			t.Fatalf("%s missing: run make tokenizers", tokPath)
		}
		t.Skip("run make tokenizers")
	}
	out := t.TempDir()
	cfg := filepath.Join(out, "e.yaml")
	os.WriteFile(cfg, []byte(`name: tok
study: indicklar
dataset: {path: `+mustAbs(t, "../../testdata/klar")+`, format: klar}
languages: [ja, en]
forms: [native, english]
strategies: [baseline-cands]
sample: 5
models:
  - {name: m, served_name: sim-base-8b, endpoints: ["http://127.0.0.1:1/v1"], tokenizer: `+tokPath+`}
`), 0o644)
	exp, err := bhasha.Load(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items())})
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(out, "cache"), "--endpoint", url}, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	if err := dispatch(context.Background(), []string{"report", "--run", out}, &so, &se); err != nil {
		t.Fatalf("report: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "tables", "tokenization.csv"))
	if !strings.Contains(string(b), ",tokenizer.json,") {
		t.Fatalf("tokenization.csv does not use the tokenizer:\n%s", b)
	}
	// The Japanese mean equals the offline counts of the rebuilt prompts.
	tok, _ := bpe.Load(tokPath)
	sum, n := 0, 0
	for r, err := range exp.StreamStage(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Key.Language == "jpn" {
			c, _ := tok.Count(r.Prompt)
			sum, n = sum+c, n+1
		}
	}
	want := strconv.FormatFloat(float64(sum)/float64(n), 'g', -1, 64) // the CSV's exact form
	if !strings.Contains(string(b), "true,m,jpn,5,"+want+",tokenizer.json,") {
		t.Errorf("want a jpn row with mean %s:\n%s", want, b)
	}
}

// playBatch acts as the batch runner: it POSTs every body of the input
// file to the server and writes an OpenAI batch output file next to it;
// the request at index fail (if ≥ 0) is reported as failed.
func playBatch(t *testing.T, input, url string, fail int) string {
	t.Helper()
	in, err := os.Open(input)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var outLines bytes.Buffer
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for i := 0; sc.Scan(); i++ {
		var l struct {
			CustomID string          `json:"custom_id"`
			URL      string          `json:"url"`
			Body     json.RawMessage `json:"body"`
		}
		json.Unmarshal(sc.Bytes(), &l)
		resp, err := httpPost(strings.TrimSuffix(url, "/v1")+l.URL, l.Body)
		if err != nil {
			t.Fatal(err)
		}
		line := map[string]any{"id": fmt.Sprint("batch_req_", i), "custom_id": l.CustomID,
			"response": map[string]any{"status_code": 200, "body": json.RawMessage(resp)}, "error": nil}
		if i == fail {
			line = map[string]any{"id": "x", "custom_id": l.CustomID, "response": nil, "error": map[string]string{"message": "engine died"}}
		}
		b, _ := json.Marshal(line)
		outLines.Write(append(b, '\n'))
	}
	ofile := filepath.Join(filepath.Dir(input), "output.jsonl")
	os.WriteFile(ofile, outLines.Bytes(), 0o644)
	return ofile
}

// A two-stage study goes through the batch path stage by stage, and the
// imported answers are scored with the study's extraction.
func TestBatchTwoStageStudy(t *testing.T) {
	path := mustAbs(t, "../../testdata/experiments/smoke-klar.yaml")
	exp, err := bhasha.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items())})
	out, cdir := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	var so, se bytes.Buffer
	export := func() string {
		so.Reset()
		if err := dispatch(context.Background(), []string{"batch", "export", "--config", path, "--out", out, "--cache-dir", cdir}, &so, &se); err != nil {
			t.Fatalf("%v %s", err, se.String())
		}
		return so.String()
	}
	imp := func() {
		file := playBatch(t, filepath.Join(out, "batch", "input.jsonl"), url, -1)
		if err := dispatch(context.Background(), []string{"batch", "import", "--out", out, "--file", file, "--cache-dir", cdir, "--config", path}, &so, &se); err != nil {
			t.Fatalf("%v %s", err, se.String())
		}
	}
	// 6 items: 4 baseline + tint-en + 3 ablations + 2step-en stage 1 = 9 per item; stage 2 waits.
	if msg := export(); !strings.Contains(msg, "54 pending") || !strings.Contains(msg, "6 wait for their first stage") {
		t.Fatalf("first export: %s", msg)
	}
	imp()
	if msg := export(); !strings.Contains(msg, "6 pending") || !strings.Contains(msg, "0 wait") {
		t.Fatalf("second export: %s", msg)
	}
	imp()
	if msg := export(); !strings.Contains(msg, "0 pending") {
		t.Fatalf("third export: %s", msg)
	}
	// Scoring reads the imported answers with the study's extraction.
	if err := dispatch(context.Background(), []string{"report", "--run", out, "--cache-dir", cdir, "--endpoint", url}, &so, &se); err != nil {
		t.Fatalf("report: %v %s", err, se.String())
	}
	if !strings.Contains(so.String(), "[SIMULATED models]") {
		t.Errorf("imported simulator answers not labelled simulated: %s", so.String())
	}
	b, _ := os.ReadFile(filepath.Join(out, "tables", "answers.csv"))
	if !strings.Contains(string(b), ",tint-en,,,") || !strings.Contains(string(b), ",json,") {
		t.Errorf("answers.csv lacks extracted JSON answers:\n%.600s", b)
	}
}

// compare sets two runs side by side (Markdown, and CSV with --out).
func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "exp.yaml") // no endpoint: the in-process simulator
	os.WriteFile(path, []byte("name: cmp\nstudy: indicklar\ndataset: {path: "+mustAbs(t, "../../testdata/klar")+", format: klar}\nlanguages: [ja]\n"+
		"strategies: [baseline, tint-en]\nsample: 4\nmodels: [{name: base-8b, served_name: sim-base-8b}]\n"), 0o644)
	var so, se bytes.Buffer
	for _, out := range []string{"a", "b"} {
		args := []string{"run", "--config", path, "--out", filepath.Join(dir, out), "--cache-dir", filepath.Join(dir, "cache")}
		if err := dispatch(context.Background(), args, &so, &se); err != nil {
			t.Fatalf("%v\n%s", err, se.String())
		}
	}
	so.Reset()
	csv := filepath.Join(dir, "cmp.csv")
	if err := dispatch(context.Background(), []string{"compare", "--a", filepath.Join(dir, "a"), "--b", filepath.Join(dir, "b"), "--out", csv}, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	b, err := os.ReadFile(csv)
	if err != nil || !strings.Contains(so.String(), "**comparison**") || !strings.HasPrefix(string(b), "simulated,model,strategy,") {
		t.Errorf("compare said %q, wrote %q (%v)", so.String(), b, err)
	}
	// The same answers both times: every difference is 0.
	if strings.Count(so.String(), "| 0 | 0 | 0 | 1.000000 |") != 4 { // diff, lo, hi, McNemar p of 2 strategies × (ja, *)
		t.Errorf("identical runs differ: %s", so.String())
	}
}
