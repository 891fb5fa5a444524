package bhasha_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// importNames maps each import of f to its path, under the name the file
// uses (its alias, else the path's last element, a /vN suffix skipped).
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" && len(name) > 1 {
			name = path.Base(path.Dir(p))
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = p
	}
	return out
}

// packageRef is x of x.Sel when x names an import of f (not a variable
// of the file that shadows it): its import path.
func packageRef(imports map[string]string, e ast.Expr) (string, string, bool) {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok || x.Obj != nil {
		return "", "", false
	}
	p, ok := imports[x.Name]
	return p, sel.Sel.Name, ok
}

// offeredBy reads the study package's files: what each exported name
// forwards ("import/path.Name" → the study package's name) — a type alias
// or a constant whose value is pkg.Name, or a function whose body is one
// statement calling pkg.Name — and its problems: each package-level
// variable (the package holds no state).
func offeredBy(files []*ast.File) (map[string]string, []string) {
	offer := map[string]string{}
	var problems []string
	for _, f := range files {
		imports := importNames(f)
		callee := func(e ast.Expr) (string, string, bool) {
			call, ok := e.(*ast.CallExpr)
			if !ok {
				return "", "", false
			}
			fn := call.Fun
			switch x := fn.(type) {
			case *ast.IndexExpr:
				fn = x.X
			case *ast.IndexListExpr:
				fn = x.X
			}
			return packageRef(imports, fn)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if p, n, ok := packageRef(imports, s.Type); ok && s.Assign.IsValid() && s.Name.IsExported() {
							offer[p+"."+n] = s.Name.Name
						}
					case *ast.ValueSpec:
						if d.Tok == token.VAR {
							problems = append(problems, fmt.Sprintf("study declares the package-level variable %s: it offers functions, types and constants only", s.Names[0].Name))
							continue
						}
						for i, name := range s.Names {
							if i < len(s.Values) && name.IsExported() {
								if p, n, ok := packageRef(imports, s.Values[i]); ok {
									offer[p+"."+n] = name.Name
								}
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil || !d.Name.IsExported() || d.Body == nil || len(d.Body.List) != 1 {
					continue
				}
				var e ast.Expr
				switch s := d.Body.List[0].(type) {
				case *ast.ReturnStmt:
					if len(s.Results) == 1 {
						e = s.Results[0]
					}
				case *ast.ExprStmt:
					e = s.X
				}
				if p, n, ok := callee(e); ok {
					offer[p+"."+n] = d.Name.Name
				}
			}
		}
	}
	return offer, problems
}

// reachArounds lists the uses in f (named name) of what the study
// package offers, reached through the package that defines it.
func reachArounds(offer map[string]string, fset *token.FileSet, name string, f *ast.File) []string {
	imports := importNames(f)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if p, sel, ok := packageRef(imports, e); ok {
				if s, ok := offer[p+"."+sel]; ok {
					out = append(out, fmt.Sprintf("%s:%d: %s.%s is offered by the study package as study.%s", name, fset.Position(n.Pos()).Line, path.Base(p), sel, s))
				}
			}
		}
		return true
	})
	return out
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, fset *token.FileSet, dir string, names []string) []*ast.File {
	t.Helper()
	var out []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// TestStudiesUseStudyPackage: the study package forwards (aliases,
// constants, one-call functions) and holds no variable; every package of
// studies/ that is a study (all but the registry studies, studies/experiment
// and studies/protocol) and examples/brevity import it, and none of their
// non-test files names a type, constant or function it offers through
// the package that defines it.
func TestStudiesUseStudyPackage(t *testing.T) {
	pkgs := goList(t)
	mod := ""
	for _, p := range pkgs {
		if p.Module != nil {
			mod = p.Module.Path
			break
		}
	}
	byPath := map[string]listedPackage{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	sp, ok := byPath[mod+"/study"]
	if !ok {
		t.Fatalf("no package %s/study: the study author's package", mod)
	}
	fset := token.NewFileSet()
	offer, problems := offeredBy(parseDir(t, fset, sp.Dir, sp.GoFiles))
	for _, p := range problems {
		t.Error(p)
	}
	for _, want := range []string{"/studies/experiment.Study", "/studies/experiment.Plan", "/analysis/score.Row", "/analysis/tables.Table", "/report/chart.Figure", "/runtime/engine.Request", "/datasets/item.Set"} {
		if _, ok := offer[mod+want]; !ok {
			t.Errorf("the study package does not offer %s", strings.TrimPrefix(want, "/"))
		}
	}
	var users []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, mod+"/")
		if strings.HasPrefix(rel, "studies/") && rel != "studies/experiment" && rel != "studies/protocol" || rel == "examples/brevity" {
			users = append(users, rel)
		}
	}
	if len(users) < 5 {
		t.Fatalf("found the studies %v: want the built-in ones and examples/brevity", users)
	}
	for _, rel := range users {
		p := byPath[mod+"/"+rel]
		if !slices.Contains(p.Imports, mod+"/study") {
			t.Errorf("%s does not import the study package", rel)
		}
		for i, f := range parseDir(t, fset, p.Dir, p.GoFiles) {
			for _, r := range reachArounds(offer, fset, rel+"/"+p.GoFiles[i], f) {
				t.Error(r)
			}
		}
	}
}

// TestReachAroundsFound: a name the study package offers, used through
// its own package, is found at its line; one it does not offer, one of a
// variable shadowing the package, and one in a comment are not.
func TestReachAroundsFound(t *testing.T) {
	const study = `package study

import (
	"example.com/m/analysis/score"
	"example.com/m/analysis/tables"
	"example.com/m/studies/experiment"
)

type Row = score.Row

const MaxMarks = score.MaxMarks

func KeyColumn(name string) tables.Column { return tables.Key(name) }

func OptionsOf[T any](e *experiment.Experiment) *T { return experiment.OptionsOf[T](e) }

func SortBy[T any](s []T, key func(T) []string) { tables.SortBy(s, key) }

func Helper() int { n := 1; return n }
`
	fset := token.NewFileSet()
	sf, err := parser.ParseFile(fset, "study.go", study, 0)
	if err != nil {
		t.Fatal(err)
	}
	offer, problems := offeredBy([]*ast.File{sf})
	if len(problems) > 0 {
		t.Fatalf("problems %q", problems)
	}
	wantOffer := map[string]string{"example.com/m/analysis/score.Row": "Row", "example.com/m/analysis/score.MaxMarks": "MaxMarks",
		"example.com/m/analysis/tables.Key": "KeyColumn", "example.com/m/studies/experiment.OptionsOf": "OptionsOf", "example.com/m/analysis/tables.SortBy": "SortBy"}
	if fmt.Sprint(offer) != fmt.Sprint(wantOffer) {
		t.Fatalf("offered %v, want %v", offer, wantOffer)
	}
	if _, problems := offeredBy([]*ast.File{mustParse(t, fset, "package study\n\nvar Default = 1\n")}); len(problems) != 1 {
		t.Errorf("a package-level variable: problems %q, want one", problems)
	}
	cases := []struct {
		name, src string
		want      []string
	}{
		{"a row through score", "package s\n\nimport \"example.com/m/analysis/score\"\n\nfunc f(r score.Row) {}\n",
			[]string{"s.go:5: score.Row is offered by the study package as study.Row"}},
		{"a generic function and a column", "package s\n\nimport (\n\tt \"example.com/m/analysis/tables\"\n\t\"example.com/m/studies/experiment\"\n)\n\nvar _ = t.Key(\"n\")\n\nfunc f(e *experiment.Experiment) { _ = experiment.OptionsOf[int](e) }\n",
			[]string{"s.go:8: tables.Key is offered by the study package as study.KeyColumn", "s.go:10: experiment.OptionsOf is offered by the study package as study.OptionsOf"}},
		{"what it does not offer", "package s\n\nimport \"example.com/m/analysis/tables\"\n\nvar _ = tables.Latency\n", nil},
		{"a variable shadowing the package", "package s\n\nimport \"example.com/m/analysis/tables\"\n\nfunc f() {\n\ttables := struct{ Key int }{}\n\t_ = tables.Key\n}\n", nil},
		{"a comment", "package s\n\nimport \"example.com/m/analysis/score\"\n\n// score.Row is named here only.\nvar _ score.Detail\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := reachArounds(offer, fset, "s.go", mustParse(t, fset, c.src))
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func mustParse(t *testing.T, fset *token.FileSet, src string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(fset, "s.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// processSettings lists the calls in f (named name) that change the
// process it runs in: runtime/debug's SetMemoryLimit and SetGCPercent,
// os/signal's Notify and NotifyContext.
func processSettings(fset *token.FileSet, name string, f *ast.File) []string {
	settings := map[string][]string{"runtime/debug": {"SetMemoryLimit", "SetGCPercent"}, "os/signal": {"Notify", "NotifyContext"}}
	imports := importNames(f)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if p, sel, ok := packageRef(imports, call.Fun); ok && slices.Contains(settings[p], sel) {
				out = append(out, fmt.Sprintf("%s:%d: %s.%s", name, fset.Position(call.Pos()).Line, path.Base(p), sel))
			}
		}
		return true
	})
	return out
}

// TestLibraryLeavesProcessAlone: no non-test Go file outside cmd/ and
// kernel/ (the commands and the notebook kernel, which own their
// processes) sets the memory limit or the GC percent or handles signals.
// The package that does (cmd/internal/memlimit) is importable only from
// cmd/, which Go's internal rule enforces.
func TestLibraryLeavesProcessAlone(t *testing.T) {
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch base := d.Name(); {
			case p == "cmd" || p == "kernel",
				p != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")),
				base == "testdata" || base == "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(p)
		found = append(found, processSettings(fset, rel, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: a library leaves the process it is imported into as it is (only cmd/ and kernel/ may change it)", f)
	}
}

// TestProcessSettingsFound: each call that changes the process is found
// at its line, under the import's own name or an alias; a comment, a
// method of a variable of the same name and another function are not.
func TestProcessSettingsFound(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"a memory limit", "package p\n\nimport \"runtime/debug\"\n\nfunc f() {\n\tdebug.SetMemoryLimit(1 << 30)\n}\n", []string{"p.go:6: debug.SetMemoryLimit"}},
		{"the GC percent, aliased", "package p\n\nimport rd \"runtime/debug\"\n\nfunc f() { defer rd.SetGCPercent(rd.SetGCPercent(-1)) }\n", []string{"p.go:5: debug.SetGCPercent", "p.go:5: debug.SetGCPercent"}},
		{"signals", "package p\n\nimport (\n\t\"context\"\n\t\"os\"\n\t\"os/signal\"\n)\n\nfunc f(c chan os.Signal) {\n\tsignal.Notify(c, os.Interrupt)\n\tsignal.NotifyContext(context.Background())\n}\n", []string{"p.go:10: signal.Notify", "p.go:11: signal.NotifyContext"}},
		{"a comment and other functions", "package p\n\nimport \"runtime/debug\"\n\n// debug.SetMemoryLimit(1) is not called here.\nfunc f() { _ = debug.Stack() }\n", nil},
		{"a variable named debug", "package p\n\ntype limiter struct{}\n\nfunc (limiter) SetMemoryLimit(int64) {}\n\nfunc f() {\n\tdebug := limiter{}\n\tdebug.SetMemoryLimit(1)\n}\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := processSettings(fset, "p.go", f); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
