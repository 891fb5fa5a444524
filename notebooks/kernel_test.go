package notebooks

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// jupyter is the jupyter command, or skips the test when Jupyter is not
// installed (fails it when BHASHA_REQUIRE_JUPYTER is set, as make test
// sets it).
func jupyter(t testing.TB) string {
	t.Helper()
	j, err := exec.LookPath("jupyter")
	if err == nil {
		err = exec.Command(j, "--data-dir").Run()
	}
	if err != nil {
		if os.Getenv("BHASHA_REQUIRE_JUPYTER") != "" {
			t.Fatalf("jupyter is required (BHASHA_REQUIRE_JUPYTER) but does not run: %v", err)
		}
		t.Skipf("jupyter is not installed (%v): make kernel installs it", err)
	}
	return j
}

// goDir is the directory of the go command on PATH.
func goDir(t testing.TB) string {
	t.Helper()
	g, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(g)
}

// buildKernelTools builds GoNB and goimports from tools/go.mod (as make
// kernel does) into a fresh folder and returns it.
func buildKernelTools(t testing.TB) string {
	t.Helper()
	bin := t.TempDir()
	for _, pkg := range []string{"github.com/janpfeifer/gonb", "golang.org/x/tools/cmd/goimports"} {
		cmd := exec.Command(filepath.Join(goDir(t), "go"), "build", "-o", bin, pkg)
		cmd.Dir = filepath.Join("..", "tools")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", pkg, err, out)
		}
	}
	return bin
}

// newCheckout lays out what install-kernel.sh uses of a checkout at dir
// (a clone as far as the script can tell): notebooks/install-kernel.sh,
// this one's, and bin/gonb and bin/goimports. It returns dir with its
// symbolic links resolved, as the script names it.
func newCheckout(t *testing.T, dir, tools string) string {
	t.Helper()
	script, err := os.ReadFile("install-kernel.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"notebooks", "bin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notebooks", "install-kernel.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"gonb", "goimports"} {
		if err := os.Symlink(filepath.Join(tools, tool), filepath.Join(dir, "bin", tool)); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

type kernelSpec struct {
	Argv        []string          `json:"argv"`
	DisplayName string            `json:"display_name"`
	Env         map[string]string `json:"env"`
}

// TestKernelPerCheckout installs the kernels of two checkouts (folders of
// the same name, as two clones of the repository would be) into one
// Jupyter data directory (JUPYTER_DATA_DIR): each gets a kernel of its
// own that runs it (its go.work, its bin/ first on PATH, its display name
// naming it), and installing one leaves the other's as it was. A kernel
// named on the command line that another checkout's kernel has is left as
// it is, the install failing with a message naming that checkout.
func TestKernelPerCheckout(t *testing.T) {
	jup := jupyter(t)
	tools := buildKernelTools(t)
	root := t.TempDir()
	checkouts := map[string]string{
		"first":  newCheckout(t, filepath.Join(root, "one", "bhasha"), tools),
		"second": newCheckout(t, filepath.Join(root, "two", "bhasha"), tools),
	}
	data := filepath.Join(root, "jupyter-data")
	env := append(os.Environ(), "JUPYTER_DATA_DIR="+data, "JUPYTER_PATH=")

	script := func(checkout string, args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(checkouts[checkout], "notebooks", "install-kernel.sh"), args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	defaultName := map[string]string{}
	for c := range checkouts {
		out, err := script(c, "--name")
		if err != nil {
			t.Fatalf("install-kernel.sh --name in the %s checkout: %v\n%s", c, err, out)
		}
		defaultName[c] = strings.TrimSpace(out)
	}
	if defaultName["first"] == defaultName["second"] || !strings.HasPrefix(defaultName["first"], "gonb-bhasha-") {
		t.Fatalf("default kernel names %q and %q: want two, gonb-bhasha-<hash>", defaultName["first"], defaultName["second"])
	}

	// want is, after each step, every kernel in the data directory and the
	// checkout it runs.
	want := map[string]string{}
	for _, step := range []struct {
		what, checkout, name string
		fails                string // what the failure says; "" when it installs
	}{
		{what: "the first checkout's kernel", checkout: "first"},
		{what: "the second checkout's kernel", checkout: "second"},
		{what: "the first's again", checkout: "first"},
		{what: "the first's named study", checkout: "first", name: "study"},
		{what: "the second's named study", checkout: "second", name: "study", fails: "runs " + checkouts["first"]},
		{what: "the second's named Study", checkout: "second", name: "Study", fails: "runs " + checkouts["first"]},
		{what: "the second's named with a space", checkout: "second", name: "my study", fails: "Jupyter allows only"},
		{what: "the second's named second", checkout: "second", name: "second"},
	} {
		before := kernelFiles(t, data)
		name := step.name
		if name == "" {
			name = defaultName[step.checkout]
		}
		out, err := script(step.checkout, goDir(t), step.name)
		switch {
		case step.fails == "" && err != nil:
			t.Fatalf("%s: %v\n%s", step.what, err, out)
		case step.fails != "" && err == nil:
			t.Fatalf("%s: installed, want a failure saying %q\n%s", step.what, step.fails, out)
		case step.fails != "" && !strings.Contains(out, step.fails):
			t.Errorf("%s: the failure says %q, want %q", step.what, out, step.fails)
		}
		if step.fails == "" {
			want[strings.ToLower(name)] = step.checkout
		}
		after := kernelFiles(t, data)
		for k, c := range want {
			dir := filepath.Join(data, "kernels", k)
			spec := readSpec(t, dir)
			co := checkouts[c]
			if got := goWork(spec.Argv); got != co {
				t.Errorf("%s: kernel %s runs %q, want the %s checkout %s", step.what, k, got, c, co)
			}
			if !strings.HasPrefix(spec.Env["PATH"], filepath.Join(co, "bin")+":") {
				t.Errorf("%s: kernel %s's PATH is %q, want %s/bin first", step.what, k, spec.Env["PATH"], co)
			}
			if !strings.Contains(spec.DisplayName, co) {
				t.Errorf("%s: kernel %s's display name %q does not name its checkout %s", step.what, k, spec.DisplayName, co)
			}
			for _, a := range spec.Argv {
				if strings.HasPrefix(a, "/") && strings.HasPrefix(a, data) && !strings.HasPrefix(a, dir+"/") {
					t.Errorf("%s: kernel %s names a file outside its folder: %s", step.what, k, a)
				}
			}
			if k != strings.ToLower(name) && before[k] != after[k] {
				t.Errorf("%s: kernel %s (the %s checkout's) was rewritten", step.what, k, c)
			}
		}
		if step.fails != "" && !equalMaps(before, after) {
			t.Errorf("%s failed but changed the kernels: before %v, after %v", step.what, before, after)
		}
		if len(after) != len(want) {
			t.Errorf("%s: kernels %v, want %v", step.what, after, want)
		}
	}

	// Jupyter finds each kernel by its name in that data directory.
	cmd := exec.Command(jup, "kernelspec", "list", "--json")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jupyter kernelspec list: %v", err)
	}
	var list struct {
		Kernelspecs map[string]struct {
			ResourceDir string `json:"resource_dir"`
		} `json:"kernelspecs"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("jupyter kernelspec list: %v", err)
	}
	for k := range want {
		if got := list.Kernelspecs[k].ResourceDir; got != filepath.Join(data, "kernels", k) {
			t.Errorf("Jupyter's kernel %s is in %q, want %s", k, got, filepath.Join(data, "kernels", k))
		}
	}
}

// kernelFiles is every kernel's kernel.json under the data directory, by
// kernel name.
func kernelFiles(t *testing.T, data string) map[string]string {
	t.Helper()
	got := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(data, "kernels", "*", "kernel.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(filepath.Dir(f))] = string(b)
	}
	return got
}

func readSpec(t *testing.T, dir string) kernelSpec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s kernelSpec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s/kernel.json: %v", dir, err)
	}
	return s
}

// goWork is the checkout a GoNB kernel's argv names (-go_work=...).
func goWork(argv []string) string {
	for _, a := range argv {
		if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "go_work="); ok {
			return v
		}
	}
	return ""
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
