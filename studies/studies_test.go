package studies_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/benchdata"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicquest"
	"github.com/bhashalab/bhasha/studies/requests"
)

// Every table a built-in study writes says what it holds and declares
// every column (a description each, every cell of the declared type),
// and every built-in study is registered under its YAML name.
func TestBuiltinStudiesDeclareTheirTables(t *testing.T) {
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
			checkDeclared(t, f, tb)
		}
	}
	// Richer answers, so that every table has rows of every column.
	for f, rows := range map[string][]score.Row{"smoke-indicklar.yaml": klarRows(), "smoke-indicquest.yaml": questRows(), "smoke-mdi.yaml": mdiRows()} {
		e, err := experiment.Load(context.Background(), filepath.Join("..", "testdata", "experiments", f), experiment.LoadOptions{Studies: reg})
		if err != nil {
			t.Fatal(err)
		}
		opt := tables.Options{Sizes: map[string]float64{"model-0": 8, "model-1": 70, "m0": 8, "m1": 30}, Families: map[string]string{"model-0": "F", "model-1": "F", "m0": "G", "m1": "G"},
			Human: []tables.HumanLabel{{Model: "m0", Item: "1", Language: "hin"}, {Model: "m0", Item: "1", Language: "eng", Condition: "clean"}}}
		for _, tb := range append(e.Plan().Tables(rows, opt), tables.Answers(rows, e.AnswerSchema()), tables.Requests(rows), tables.Compare(rows, rows)) {
			if len(tb.Rows) == 0 {
				t.Errorf("%s: table %s has no rows", f, tb.Name)
			}
			checkDeclared(t, f, tb)
		}
	}
	e := &experiment.Experiment{Name: "s", Studies: reg, Options: &requests.SyntheticOptions{Synthetic: &requests.Generated{Count: 2}}, Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
	if err := e.Build(context.Background()); err != nil || e.Study != "synthetic" {
		t.Fatalf("synthetic: %v (study %q)", err, e.Study)
	}
	for _, tb := range e.Plan().Tables(rows, tables.Options{}) {
		checkDeclared(t, "synthetic", tb)
	}
}

// checkDeclared fails unless the table says what it holds and declares
// each of its columns with a description, every cell of the declared
// type: a Float column may hold ints (a count that Pivot lays out beside
// missing cells, NaN).
func checkDeclared(t *testing.T, where string, tb *tables.Table) {
	t.Helper()
	if tb.Description == "" {
		t.Errorf("%s: table %s has no description", where, tb.Name)
	}
	if len(tb.Cols) != len(tb.Header) {
		t.Errorf("%s: table %s declares %d columns for %d", where, tb.Name, len(tb.Cols), len(tb.Header))
		return
	}
	for i, c := range tb.Cols {
		if c.Description == "" {
			t.Errorf("%s: column %s.%s has no description", where, tb.Name, c.Name)
		}
		for _, r := range tb.Rows {
			var typ tables.Type
			switch r[i].(type) {
			case string:
				typ = tables.String
			case int:
				typ = tables.Int
			case float64:
				typ = tables.Float
			case bool:
				typ = tables.Bool
			}
			if typ != c.Type && !(c.Type == tables.Float && typ == tables.Int) {
				t.Errorf("%s: column %s.%s is declared %s, a cell is %T", where, tb.Name, c.Name, c.Type, r[i])
				break
			}
		}
	}
}

// klarRows are IndicKLAR answers over both language families, every
// strategy and form, with latencies and failed requests.
func klarRows() []score.Row {
	rows := benchdata.KLARRows(6, 31, 9, 2)
	for i := range rows {
		rows[i].LatencyMS = 10 + float64(i%7)
		rows[i].Failed = i%11 == 0
	}
	return rows
}

// marks sets the marks given (bit → value).
func marks(set map[int]bool) score.Marks {
	var m score.Marks
	for i, v := range set {
		m.Set(i, v)
	}
	return m
}

// mdiRows are distractor-study answers: both formats, four conditions (the
// paragraph for the conclusions' claim of every model),
// switched answers with every semantic verdict.
func mdiRows() []score.Row {
	var rows []score.Row
	for m := range 2 {
		for it := range 8 {
			for _, st := range []string{"qa", "mc1"} {
				for ci, c := range []string{"clean", "hi", "es_long", "paragraph"} {
					rows = append(rows, score.Row{Key: engine.Key{Model: fmt.Sprint("m", m), Item: fmt.Sprint(it), Language: "eng", Strategy: st, Condition: c},
						Correct: (it+ci+m)%3 == 0, Abstain: (it+ci)%5 == 1, Marks: marks(map[int]bool{distractors.MarkDistractorSwitch: (it+ci)%2 == 0}), Script: "Latin",
						Verdict: []string{"CORRECT", "WRONG", "ABSTAIN", "x", ""}[(it+ci)%5]})
				}
			}
		}
	}
	return rows
}

// questRows are IndicQuest answers: two models, languages and domains,
// judged and graded.
func questRows() []score.Row {
	var rows []score.Row
	for m := range 2 {
		for it := range 8 {
			for _, l := range []string{"hin", "ben"} {
				rows = append(rows, score.Row{Key: engine.Key{Model: fmt.Sprint("m", m), Item: fmt.Sprint(it), Language: l, Form: "native"}, Domain: []string{"a", "b"}[it%2],
					Correct: (it+m)%3 == 0, Verdict: []string{"correct", "incorrect"}[(it+m)%2],
					Marks:  marks(map[int]bool{indicquest.MarkSubstring: it%2 == 0, indicquest.MarkOverlap: it%3 == 0, indicquest.MarkTranslit: it%4 == 0}),
					Detail: &score.Detail{JudgeScores: map[string]float64{"Overall": float64(1 + it%5), "Clarity": float64(2 + it%3)}}})
			}
		}
	}
	return rows
}
