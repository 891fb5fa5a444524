package bhasha_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The root package is a thin front door: few exported declarations
// (go doc -short), few lines, and no exported signature that makes its
// users import the packages below it.
func TestFrontDoor(t *testing.T) {
	const maxDecls, maxLines = 60, 1500
	out, err := exec.Command("go", "doc", "-short", ".").Output()
	if err != nil {
		t.Fatalf("go doc -short .: %v", err)
	}
	if n := bytes.Count(out, []byte("\n")); n > maxDecls {
		t.Errorf("go doc -short . prints %d lines, want at most %d:\n%s", n, maxDecls, out)
	}
	files, lines := frontDoorFiles(t, ".")
	if lines > maxLines {
		t.Errorf("the root package has %d non-test lines, want at most %d", lines, maxLines)
	}
	for _, bad := range belowFrontDoor(files) {
		t.Error(bad)
	}
}

// belowFrontDoor checks a synthetic package whose exported API names
// packages below the front door, each way it can.
func TestBelowFrontDoor(t *testing.T) {
	cases := []struct {
		name, src string
		want      int // problems found
	}{
		{"alias to a runtime type", "type M = run.Manifest", 1},
		{"alias to the study package", "type M = study.Manifest", 0},
		{"function result", "func F() []sim.ModelSpec { return nil }", 1},
		{"parameter of a func type", "type O func(*run.Options)", 1},
		{"exported field", "type C struct{ X report.Step; y run.Options }", 1},
		{"embedded field", "type C struct{ run.Options }", 1},
		{"unexported field", "type C struct{ o run.Options }", 0},
		{"method of an exported type", "type R struct{}\nfunc (R) F() *score.Schema { return nil }", 1},
		{"method of an unexported type", "type r struct{}\nfunc (r) F() *score.Schema { return nil }", 0},
		{"unexported function", "func f() internal.X { return nil }", 0},
		{"exported variable", "var V internal.X", 1},
		{"user package", "func F() *tables.Table { return nil }", 0},
	}
	const imports = `package p
import (
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/study"
)
`
	for _, c := range cases {
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", imports+c.src, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := belowFrontDoor([]*ast.File{f}); len(got) != c.want {
			t.Errorf("%s: %q, want %d problem(s)", c.name, got, c.want)
		}
	}
}

// frontDoorFiles parses the non-test Go files of dir and counts their
// lines.
func frontDoorFiles(t *testing.T, dir string) ([]*ast.File, int) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	lines := 0
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
		f, err := parser.ParseFile(fset, p, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files, lines
}

// hidden are the packages a user of the root package should not need:
// the reports' renderer, the simulator, the scoring rows, the runtime and
// the module's internals.
var hidden = []string{"report", "sim", "analysis/score", "runtime", "internal"}

// belowFrontDoor lists each exported declaration of files whose type
// (an alias's target, a signature, an exported field of an exported
// struct, a method of an exported type) names a hidden package.
func belowFrontDoor(files []*ast.File) []string {
	var out []string
	for _, f := range files {
		pkgs := map[string]string{} // local name → module-relative path of a hidden package
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			rel, ok := strings.CutPrefix(path, "github.com/bhashalab/bhasha/")
			if !ok {
				continue
			}
			for _, h := range hidden {
				if rel == h || strings.HasPrefix(rel, h+"/") {
					name := rel[strings.LastIndex(rel, "/")+1:]
					if im.Name != nil {
						name = im.Name.Name
					}
					pkgs[name] = path
				}
			}
		}
		check := func(what string, n ast.Node) {
			if n == nil {
				return
			}
			ast.Inspect(n, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && pkgs[id.Name] != "" {
						out = append(out, what+" names "+pkgs[id.Name]+"."+n.Sel.Name)
					}
				case *ast.StructType: // only exported fields, embedded ones by their type's name
					for _, fl := range n.Fields.List {
						exported := len(fl.Names) == 0 && ast.IsExported(typeName(fl.Type))
						for _, nm := range fl.Names {
							exported = exported || nm.IsExported()
						}
						if exported {
							ast.Inspect(fl.Type, func(m ast.Node) bool {
								if s, ok := m.(*ast.SelectorExpr); ok {
									if id, ok := s.X.(*ast.Ident); ok && pkgs[id.Name] != "" {
										out = append(out, what+" has a field of "+pkgs[id.Name]+"."+s.Sel.Name)
									}
								}
								return true
							})
						}
					}
					return false
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil && !ast.IsExported(typeName(d.Recv.List[0].Type)) {
					continue
				}
				check("func "+d.Name.Name, d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							check("type "+s.Name.Name, s.Type)
						}
					case *ast.ValueSpec:
						for _, nm := range s.Names {
							if nm.IsExported() {
								check(nm.Name, s.Type)
								for _, v := range s.Values {
									check(nm.Name, v)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// typeName is the name of a receiver's or an embedded field's type.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.IndexExpr:
		return typeName(e.X)
	}
	return ""
}
