package bhasha_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// layer is one rule of the module's layering: the packages From (module
// paths relative to the module root, "." for the root package, "p/..."
// for p and everything below it) import none of Forbid, except Allow. With
// Deps the rule holds for every package they depend on (Deps); otherwise
// for their own imports (Imports), and with tests for those of their test
// files too (TestImports, XTestImports).
type layer struct {
	why        string
	from       []string
	forbid     []string
	allow      []string
	transitive bool
	tests      bool
}

// studyPackages are the study packages, the experiment code that knows
// studies and the study author's package.
var studyPackages = []string{"studies/...", "study"}

// analysisLeaves are the leaf algorithms of analysis/: they import only
// one another, the language registry and internal/textdist (edit
// distances, which imports nothing of the module).
var analysisLeaves = []string{"analysis/normalize", "analysis/match", "analysis/extract", "analysis/script",
	"analysis/abstain", "analysis/translit", "analysis/stats", "analysis/bpe"}

// layers is the module's layering.
func layers() []layer {
	return []layer{
		{why: "the runtime knows no experiment, no study, no report and no simulator",
			from: []string{"runtime/..."}, forbid: []string{"studies/...", "report/...", "kernel/...", "sim/...", "."}, transitive: true},
		{why: "the simulator answers from neutral cues, knowing no study",
			from: []string{"sim/..."}, forbid: append(slices.Clone(studyPackages), "report/...", "kernel/...", "."), allow: []string{"studies/protocol"}, transitive: true},
		{why: "reports render what they are handed, knowing no study and no runtime",
			from: []string{"report/..."}, forbid: []string{"studies/...", "runtime/...", "kernel/...", "sim/...", "."}},
		{why: "the notebook kernel knows no study",
			from: []string{"kernel/..."}, forbid: studyPackages, allow: []string{"studies/protocol"}},
		{why: "the command line knows the studies it is handed (cli.Main), the built-in ones through the root package",
			from: []string{"cmd/cli/..."}, forbid: studyPackages, allow: []string{"studies/experiment"}},
		{why: "a study of one's own is written against the study author's package and run through the root package",
			from: []string{"examples/brevity"}, forbid: []string{"..."}, allow: []string{".", "study", "examples/brevity"}, tests: true},
		{why: "the analysis leaves import nothing of the module above them",
			from: analysisLeaves, forbid: []string{"..."}, allow: append(slices.Clone(analysisLeaves), "datasets/lang", "internal/textdist"), transitive: true},
	}
}

// listedPackage is what the layering reads of `go list -json`.
type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
	GoFiles      []string
	Dir          string
	Module       *struct{ Path string }
}

// matches reports whether path (a full import path) is one of the
// patterns (relative to mod; "." is mod itself, "..." every package of
// mod, "p/..." p and below it).
func matches(mod, path string, patterns []string) bool {
	for _, p := range patterns {
		switch {
		case p == ".":
			if path == mod {
				return true
			}
		case p == "...":
			if path == mod || strings.HasPrefix(path, mod+"/") {
				return true
			}
		case strings.HasSuffix(p, "/..."):
			base := mod + "/" + strings.TrimSuffix(p, "/...")
			if path == base || strings.HasPrefix(path, base+"/") {
				return true
			}
		default:
			if path == mod+"/"+p {
				return true
			}
		}
	}
	return false
}

// violations lists every import of pkgs that breaks a rule, and every
// rule whose From matches no package (a renamed package would leave it
// checking nothing).
func violations(mod string, pkgs []listedPackage, rules []layer) []string {
	var out []string
	for _, r := range rules {
		seen := false
		for _, p := range pkgs {
			if !matches(mod, p.ImportPath, r.from) {
				continue
			}
			seen = true
			imports := p.Imports
			if r.transitive {
				imports = p.Deps
			}
			if r.tests {
				imports = slices.Concat(imports, p.TestImports, p.XTestImports)
			}
			for _, imp := range imports {
				if matches(mod, imp, r.forbid) && !matches(mod, imp, r.allow) {
					out = append(out, fmt.Sprintf("%s imports %s: %s", strings.TrimPrefix(p.ImportPath, mod+"/"), strings.TrimPrefix(imp, mod+"/"), r.why))
				}
			}
		}
		if !seen {
			out = append(out, fmt.Sprintf("no package matches %v (%s)", r.from, r.why))
		}
	}
	return out
}

// goList runs `go list -json ./...` in the module root (the directory of
// this test) and decodes its packages.
func goList(t *testing.T) []listedPackage {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "list", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./...: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list's output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestLayering checks the module's layering from `go list` (the imports
// of non-test files): the runtime knows no study, report, kernel,
// simulator or the root package; the simulator, reports and the kernel
// know no study; reports know no runtime; the analysis leaves import
// nothing above them; examples/brevity, tests included, imports only the
// root package and the study package.
func TestLayering(t *testing.T) {
	pkgs := goList(t)
	mod := ""
	for _, p := range pkgs {
		if p.Module != nil {
			mod = p.Module.Path
			break
		}
	}
	if mod == "" {
		t.Fatal("go list names no module")
	}
	for _, v := range violations(mod, pkgs, layers()) {
		t.Error(v)
	}
}

// TestLayeringFailsOnBackEdge: each rule catches an import it forbids,
// and lets through what it allows.
func TestLayeringFailsOnBackEdge(t *testing.T) {
	const mod = "example.com/m"
	cases := []struct {
		name    string
		pkg     listedPackage
		wantBad bool
	}{
		{"runtime imports a study", listedPackage{ImportPath: mod + "/runtime/run", Deps: []string{mod + "/studies/experiment"}}, true},
		{"runtime depends on the root", listedPackage{ImportPath: mod + "/runtime/engine", Deps: []string{mod}}, true},
		{"runtime imports the runtime", listedPackage{ImportPath: mod + "/runtime/run", Deps: []string{mod + "/runtime/engine", "fmt"}}, false},
		{"sim imports a study", listedPackage{ImportPath: mod + "/sim", Deps: []string{mod + "/studies/indicklar"}}, true},
		{"sim imports the protocol helpers", listedPackage{ImportPath: mod + "/sim", Deps: []string{mod + "/studies/protocol"}}, false},
		{"a report package imports the runtime", listedPackage{ImportPath: mod + "/report/xlsx", Imports: []string{mod + "/runtime/engine"}}, true},
		{"report imports the studies registry", listedPackage{ImportPath: mod + "/report", Imports: []string{mod + "/studies"}}, true},
		{"the kernel imports a study", listedPackage{ImportPath: mod + "/kernel", Imports: []string{mod + "/studies/distractors"}}, true},
		{"the command line imports a study", listedPackage{ImportPath: mod + "/cmd/cli", Imports: []string{mod + "/studies/indicklar"}}, true},
		{"the command line imports the study interfaces", listedPackage{ImportPath: mod + "/cmd/cli", Imports: []string{mod + "/studies/experiment", mod}}, false},
		{"the own study imports the study package and the root", listedPackage{ImportPath: mod + "/examples/brevity", Imports: []string{mod + "/study", "fmt"}, XTestImports: []string{mod, mod + "/examples/brevity"}}, false},
		{"the own study imports tables", listedPackage{ImportPath: mod + "/examples/brevity", Imports: []string{mod + "/study", mod + "/analysis/tables"}}, true},
		{"the own study's test imports a study package", listedPackage{ImportPath: mod + "/examples/brevity", Imports: []string{mod + "/study"}, XTestImports: []string{mod + "/studies/experiment"}}, true},
		{"a leaf imports tables", listedPackage{ImportPath: mod + "/analysis/match", Deps: []string{mod + "/analysis/tables"}}, true},
		{"a leaf imports a leaf and the languages", listedPackage{ImportPath: mod + "/analysis/abstain", Deps: []string{mod + "/analysis/normalize", mod + "/datasets/lang", "strings"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var bad []string
			for _, v := range violations(mod, []listedPackage{c.pkg}, layers()) {
				if !strings.HasPrefix(v, "no package matches") {
					bad = append(bad, v)
				}
			}
			if got := len(bad) > 0; got != c.wantBad {
				t.Errorf("violations %q, want some: %t", bad, c.wantBad)
			}
		})
	}
}
