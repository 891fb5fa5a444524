package bhasha

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/indicklar"
)

// studyNeutral are the folders whose code knows no study: no string
// literal in their non-test files names a study, a strategy or a
// condition (a study's names live in its own package).
var studyNeutral = []string{"analysis", "report", "runtime", "sim", "kernel", "studies/experiment", "studies/protocol"}

// TestNoStudyNamesInNeutralCode parses every non-test Go file under the
// study-neutral folders and fails on a string literal that is a built-in
// study's name, strategy or condition, or that holds a study's name.
func TestNoStudyNamesInNeutralCode(t *testing.T) {
	studies := []string{"indicklar", "indicquest", "mdi"}
	var names []string // exact literals: strategies and conditions
	for _, s := range indicklar.Strategies {
		names = append(names, string(s))
	}
	for _, c := range distractors.Conditions {
		// the one-note conditions are language codes (es, hi, zh), which
		// neutral code may well spell: only the longer names are the
		// study's own
		if len(c) > 2 {
			names = append(names, string(c))
		}
	}
	names = append(names, distractors.StrategyQA, distractors.StrategyMC1)
	for _, root := range studyNeutral {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				low := strings.ToLower(s)
				if slices.Contains(names, low) {
					t.Errorf("%s: the literal %q names a study's strategy or condition", fset.Position(lit.Pos()), s)
				}
				for _, st := range studies {
					if low == st || strings.Contains(low, st+" ") || strings.Contains(low, " "+st) || strings.HasPrefix(low, st+"_") {
						t.Errorf("%s: the literal %q names the study %s", fset.Position(lit.Pos()), s, st)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
