package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// Asked languages and forms a dataset lacks are refused at their YAML
// lines, naming what the dataset has; decoding.max_tokens, which IndicKLAR
// would ignore, is refused naming each strategy's limit. Nothing is sent.
func TestAskedWhatTheDatasetLacks(t *testing.T) {
	bmlama, _ := filepath.Abs("../../testdata/bmlama/BMLAMA53")
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"a language the dataset lacks", "languages: [hi, mr, en]\nforms: [native, english]\n",
			[]string{"line 5", "mr (Marathi, mar) is not in dataset", "which has ben, eng, hin, tam, urd"}},
		{"a form no asked language has", "languages: [hi, bn, en]\nforms: [native, code-mixed, english]\n",
			[]string{"line 6", "has the code-mixed form for none of the asked languages", "it has english, native for them"}},
		{"decoding.max_tokens for IndicKLAR", "languages: [hi, en]\nforms: [native, english]\nstrategies: [baseline, tint-cm]\ndecoding: {max_tokens: 64}\n",
			[]string{"line 8", "decoding.max_tokens (64) does not apply to study indicklar", "baseline 10", "tint-cm 80", "prompt.max_tokens"}},
	}
	url := simtest.Start(t, sim.Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "exp.yaml")
			os.WriteFile(cfg, []byte("name: lacks\nstudy: indicklar\ndataset: {path: "+bmlama+", format: bmlama}\nmodels: [{name: tiny, served_name: sim-tiny-1b}]\n"+c.yaml), 0o644)
			out := filepath.Join(dir, "run")
			code, msg := runCLI(t, cli("run", "--config", cfg, "--out", out, "--endpoint", url))
			if code == 0 {
				t.Fatalf("exit 0: %s", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the error does not say %q: %s", w, msg)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("the refused run left %s", out)
			}
		})
	}
}

// The asked (language, form) pairs a dataset has no items for by design
// are listed in the log, the manifest and the report, and the run goes on.
func TestDatasetGapsListed(t *testing.T) {
	b, err := os.ReadFile("../../testdata/indicklar/project_page_demo_hin_excerpt.json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	json.Unmarshal(b, &d)
	langs := d["langs"].(map[string]any)
	hin := langs["hin"].(map[string]any)
	var facts []any
	for _, f := range hin["facts"].([]any)[:6] {
		g := map[string]any{}
		for k, v := range f.(map[string]any) {
			if k != "cm" {
				g[k] = v
			}
		}
		facts = append(facts, g)
	}
	langs["mar"] = map[string]any{"name": "Marathi", "native": "मराठी", "bcp": "mr", "facts": facts}
	dir := t.TempDir()
	data := filepath.Join(dir, "demo.json")
	nb, _ := json.Marshal(d)
	os.WriteFile(data, nb, 0o644)
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte("name: gaps\nstudy: indicklar\ndataset: {path: "+data+"}\nlanguages: [hi, mr, en]\nforms: [native, code-mixed, english]\nmodels: [{name: tiny, served_name: sim-tiny-1b}]\n"), 0o644)
	url := simtest.Start(t, sim.Config{})
	out := filepath.Join(dir, "run")
	code, msg := runCLI(t, cli("run", "--config", cfg, "--out", out, "--endpoint", url))
	const want = "have no items in"
	if code != 0 || !strings.Contains(msg, want) || !strings.Contains(msg, "mar/code-mixed") {
		t.Fatalf("run: exit %d: %s", code, msg)
	}
	m, _ := run.ReadManifest(out)
	if m == nil || m.Dataset == nil || !strings.Contains(strings.Join(m.Dataset.Notes, "\n"), "mar/code-mixed") {
		t.Errorf("the manifest does not list the gap: %+v", m.Dataset)
	}
	code, msg = runCLI(t, cli("report", "--run", out))
	if code != 0 || !strings.Contains(msg, "mar/code-mixed") {
		t.Errorf("report: exit %d: %s", code, msg)
	}
}

// A flag's value that looks like a flag is an error, and writes nothing.
func TestFlagValueLooksLikeAFlag(t *testing.T) {
	dir := t.TempDir()
	code, msg := runCLI(t, cliIn(dir, "report", "--run", dir, "--html", "--xlsx"))
	if code == 0 || !strings.Contains(msg, "the value of --html looks like a flag") {
		t.Errorf("exit %d: %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "--xlsx")); err == nil {
		t.Error("a file named --xlsx was written")
	}
}

// cliIn is cli run in directory dir.
func cliIn(dir string, args ...string) *exec.Cmd {
	c := cli(args...)
	c.Dir = dir
	return c
}

// Adding a strategy to a finished run asks only the new strategy's
// requests, and says nothing untrue about the records kept: its template
// is new, and made none of them.
func TestAddedStrategyIsNotAChange(t *testing.T) {
	bmlama, _ := filepath.Abs("../../testdata/bmlama/BMLAMA53")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	head := "name: grow\nstudy: indicklar\ndataset: {path: " + bmlama + ", format: bmlama}\nmodels: [{name: tiny, served_name: sim-tiny-1b}]\nlanguages: [hi, en]\nforms: [native, english]\nsample: 4\n"
	os.WriteFile(cfg, []byte(head+"strategies: [baseline]\n"), 0o644)
	url := simtest.Start(t, sim.Config{})
	out := filepath.Join(dir, "run")
	args := []string{"run", "--config", cfg, "--out", out, "--endpoint", url, "--cache-dir", filepath.Join(dir, "cache")}
	if code, msg := runCLI(t, cli(args...)); code != 0 {
		t.Fatalf("first run: %s", msg)
	}
	os.WriteFile(cfg, []byte(head+"strategies: [baseline, tint-en]\n"), 0o644)
	code, msg := runCLI(t, cli(args...))
	if code != 0 || strings.Contains(msg, "new since the run") || strings.Contains(msg, "made from the earlier inputs") {
		t.Errorf("second run: exit %d: %s", code, msg)
	}
	code, msg = runCLI(t, cli("report", "--run", out))
	if code != 0 || strings.Contains(msg, "new since the run") {
		t.Errorf("report: exit %d: %s", code, msg)
	}
}

// Requests asked twice with the same body in one run are sent once and
// said to be duplicates, not "answered from cache"; a later run's answers
// from the cache are counted as such.
func TestDuplicateRequestsAnsweredOnce(t *testing.T) {
	dir := t.TempDir()
	var lines strings.Builder
	for i := range 6 {
		lines.WriteString(`{"item": "` + string(rune('a'+i)) + `", "kind": "chat", "messages": [{"role": "user", "content": "Capital of France?"}]}` + "\n")
	}
	os.WriteFile(filepath.Join(dir, "r.jsonl"), []byte(lines.String()), 0o644)
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte("name: dups\nrequests: r.jsonl\nmodels: [{name: tiny, served_name: sim-tiny-1b, max_concurrency: 1}]\ndecoding: {max_tokens: 8}\n"), 0o644)
	url := simtest.Start(t, sim.Config{})
	cache := filepath.Join(dir, "cache")
	code, msg := runCLI(t, cli("run", "--config", cfg, "--out", filepath.Join(dir, "a"), "--endpoint", url, "--cache-dir", cache))
	if code != 0 || !strings.Contains(msg, "this run sent 1, answered 0 from cache, 5 duplicate request(s) answered once") {
		t.Errorf("first run: exit %d: %s", code, msg)
	}
	m, _ := run.ReadManifest(filepath.Join(dir, "a"))
	if m == nil || m.Counts.DuplicatesThisRun != 5 || m.Counts.CachedThisRun != 0 {
		t.Errorf("manifest counts %+v", m)
	}
	code, msg = runCLI(t, cli("run", "--config", cfg, "--out", filepath.Join(dir, "b"), "--endpoint", url, "--cache-dir", cache))
	if code != 0 || !strings.Contains(msg, "this run sent 0, answered 6 from cache, resumed 0") {
		t.Errorf("second run: exit %d: %s", code, msg)
	}
}

// A batch output whose response names another model than the one its
// request was exported for is imported as failed, never as an answer.
func TestBatchImportChecksTheModel(t *testing.T) {
	url, _, _, out, cdir, _ := exportBatch(t, 4)
	ofile := playBatch(t, filepath.Join(out, "batch", "input.jsonl"), url, -1)
	b, _ := os.ReadFile(ofile)
	ls := strings.SplitAfter(string(b), "\n")
	ls[1] = strings.Replace(ls[1], `"model":"sim-tiny-1b"`, `"model":"evil-other-model"`, 1)
	os.WriteFile(ofile, []byte(strings.Join(ls, "")), 0o644)
	code, msg := runCLI(t, cli("batch", "import", "--out", out, "--file", ofile, "--cache-dir", cdir))
	if code != 0 || !strings.Contains(msg, "imported 3 ok, 1 failed") {
		t.Fatalf("import: exit %d: %s", code, msg)
	}
	found := false
	records.Read(out, func(r *engine.Record) error {
		if strings.Contains(r.Error, "asked sim-tiny-1b, the batch answered as evil-other-model") && r.Status == engine.StatusFailed {
			found = true
		}
		return nil
	})
	if !found {
		t.Error("no failed record names the other model")
	}
}
