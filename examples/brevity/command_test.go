package brevity_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goBlocks are the ```go blocks of the Markdown file path, in order.
func goBlocks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, part := range strings.Split(string(b), "```go\n")[1:] {
		code, _, ok := strings.Cut(part, "```")
		if !ok {
			t.Fatalf("%s: a go block is not closed", path)
		}
		out = append(out, code)
	}
	return out
}

// The code of docs/own-study.md, run. A study author's five-line main,
// built in a go.work workspace beside this checkout, is the bhasha
// command knowing the study: it runs the study's experiment file on the
// simulator and reports on the run, with the study's own table and
// criterion; the page's notebook cells, as one program, reopen that run;
// the plain bhasha command refuses both and says how to write that main.
func TestOwnStudyCommand(t *testing.T) {
	work, mod, build := studyWorkspace(t)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(t, filepath.Join(repo, "docs", "own-study.md"))
	if len(blocks) != 3 || !strings.HasPrefix(blocks[0], "package main\n") || !strings.HasPrefix(blocks[1], "import (") || !strings.HasPrefix(blocks[2], "%%\n") {
		t.Fatalf("docs/own-study.md: want three go blocks (the main, a notebook's declarations and a %%%% cell), got %q", blocks)
	}
	commandMain := blocks[0]
	cellsMain := "package main\n\n" + blocks[1] + "\nfunc main() {\n" + strings.TrimPrefix(blocks[2], "%%\n") + "}\n"
	if err := os.MkdirAll(filepath.Join(mod, "cells"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		filepath.Join(mod, "main.go"):          commandMain,
		filepath.Join(mod, "cells", "main.go"): cellsMain,
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mine, cells, plain := build("mystudy-command", "."), build("cells", "./cells"), build("bhasha", "github.com/bhashalab/bhasha/cmd/bhasha")
	// run runs a command in work, returning its exit status and output.
	run := func(exe string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "BHASHA_PROGRESS_EVERY=0")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, stdout.String(), stderr.String()
		case errors.As(err, &ee):
			return ee.ExitCode(), stdout.String(), stderr.String()
		}
		t.Fatalf("%s %q: %v", exe, args, err)
		return 0, "", ""
	}
	config, _ := filepath.Abs(filepath.FromSlash("testdata/brevity.yaml"))
	runDir, cache := filepath.Join(work, "runs", "brevity"), filepath.Join(work, "cache") // the cells' out, from work

	if code, stdout, stderr := run(mine, "run", "--config", config, "--out", runDir, "--cache-dir", cache); code != 0 || !strings.Contains(stderr, "complete [SIMULATED models]: 24 records (24 ok, 0 failed)") {
		t.Fatalf("run: exit status %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := run(mine, "report", "--run", runDir)
	if code != 0 || !strings.Contains(stdout, "24 scored answers [SIMULATED models]") || !strings.Contains(stdout, "answer_lengths.csv") {
		t.Fatalf("report: exit status %d\n%s%s", code, stdout, stderr)
	}
	f, err := os.Open(filepath.Join(runDir, "tables", "accuracy.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) == 0 {
		t.Fatalf("accuracy.csv: %v", err)
	}
	metric := slices.Index(rows[0], "metric")
	if metric < 0 || !slices.ContainsFunc(rows[1:], func(r []string) bool { return r[metric] == "brief" }) {
		t.Errorf("accuracy.csv has no row of the study's own criterion, brief:\n%q", rows)
	}

	// The notebook's cells reopen the run (outside a notebook they show
	// nothing, and a failure panics).
	if code, stdout, stderr := run(cells); code != 0 {
		t.Errorf("the notebook's cells: exit status %d\n%s%s", code, stdout, stderr)
	}

	// The plain command knows no brevity study: both refusals say how to
	// get a command that does, and neither sends the user to --config.
	before, err := os.ReadFile(filepath.Join(runDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "--config", config, "--out", filepath.Join(work, "plain"), "--cache-dir", cache}},
		{"report", []string{"report", "--run", runDir}},
	} {
		t.Run("plain "+c.name, func(t *testing.T) {
			code, stdout, stderr := run(plain, c.args...)
			if code != 2 {
				t.Errorf("exit status %d, want 2\n%s%s", code, stdout, stderr)
			}
			for _, want := range []string{`unknown study "brevity"`, "func main() { cli.Main(mystudy.Study{}) }", `"github.com/bhashalab/bhasha/cmd/cli"`, "docs/own-study.md"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, "--config if") {
				t.Errorf("stderr suggests --config:\n%s", stderr)
			}
			if first, _, _ := strings.Cut(strings.SplitN(stderr, "problem(s):\n", 2)[1], "\n"); !strings.Contains(first, "unknown study") {
				t.Errorf("the first problem is %q, not the unknown study:\n%s", first, stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(work, "plain")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run wrote its directory: %v", err)
	}
	if after, err := os.ReadFile(filepath.Join(runDir, "manifest.json")); err != nil || !bytes.Equal(before, after) {
		t.Errorf("the refused report changed the run's manifest: %v", err)
	}
}
