package studies_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// Every table a built-in study writes is in the catalogue (with what it
// holds), and every built-in study is registered under its YAML name.
func TestBuiltinStudiesAndCatalogue(t *testing.T) {
	reg := studies.Builtin()
	for _, name := range []string{"indicklar", "indicquest", "mdi", "requests", "synthetic"} {
		s, ok := reg.Lookup(name)
		if !ok || s.About() == "" {
			t.Errorf("study %s: registered %v", name, ok)
		}
	}
	row := func(strategy, cond string, correct bool) score.Row {
		return score.Row{Key: engine.Key{Model: "m", Item: "1", Language: "hin", Form: "native", Strategy: strategy, Condition: cond}, Correct: correct}
	}
	rows := []score.Row{row("baseline", "", true), row("tint-cm", "", false), row("qa", "clean", true), row("qa", "hi", false)}
	for _, f := range []string{"smoke-indicklar.yaml", "smoke-indicquest.yaml", "smoke-mdi.yaml"} {
		e, err := experiment.Load(context.Background(), filepath.Join("..", "testdata", "experiments", f), experiment.LoadOptions{Studies: reg})
		if err != nil {
			t.Fatal(err)
		}
		ts := e.Plan().Tables(rows, tables.Options{Sizes: map[string]float64{"m": 8}, Families: map[string]string{"m": "F"}, Human: []tables.HumanLabel{{Model: "m", Item: "1", Language: "hin"}}})
		for _, tb := range append(ts, tables.Answers(rows, e.AnswerSchema())) {
			if in, ok := tables.InfoOf(tb.Name); !ok || in.Description == "" {
				t.Errorf("%s: table %s is not in the catalogue", f, tb.Name)
			}
			for _, c := range tb.Columns() {
				if c.Description == "" {
					t.Errorf("%s: column %s.%s has no description", f, tb.Name, c.Name)
				}
			}
		}
	}
	e := &experiment.Experiment{Name: "s", Studies: reg, Synthetic: &experiment.Synthetic{Count: 2}, Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
	if err := e.Build(context.Background()); err != nil || e.Study != "synthetic" {
		t.Fatalf("synthetic: %v (study %q)", err, e.Study)
	}
	for _, tb := range e.Plan().Tables(rows, tables.Options{}) {
		if _, ok := tables.InfoOf(tb.Name); !ok {
			t.Errorf("synthetic: table %s is not in the catalogue", tb.Name)
		}
		for _, c := range tb.Columns() {
			if c.Description == "" {
				t.Errorf("synthetic: column %s.%s has no description", tb.Name, c.Name)
			}
		}
	}
}
