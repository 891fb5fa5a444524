package brevity_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// studyWorkspace makes a study author's module, example.com/mystudy, in
// a go.work workspace beside this checkout (as a notebook's go.work
// holds it), and returns the workspace, the module's folder and a build
// function: build(out, pkg) builds pkg (relative to the module) into
// work/out and returns its path. It skips the test under -short or
// without go on PATH.
func studyWorkspace(t *testing.T) (work, mod string, build func(out, pkg string) string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds programs")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work = t.TempDir()
	mod = filepath.Join(work, "mystudy")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		filepath.Join(mod, "go.mod"):   "module example.com/mystudy\n\ngo 1.26.8\n",
		filepath.Join(work, "go.work"): "go 1.26.8\n\nuse (\n\t./mystudy\n\t" + repo + "\n)\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build = func(out, pkg string) string {
		t.Helper()
		exe := filepath.Join(work, out)
		cmd := exec.Command(goBin, "build", "-o", exe, pkg)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(work, "go.work"), "GOFLAGS=-buildvcs=false")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
		}
		return exe
	}
	return work, mod, build
}
