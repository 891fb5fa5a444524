package indicklar_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
)

// mark reads r's flag name through the study's answer schema.
func mark(t *testing.T, r score.Row, name string) bool {
	t.Helper()
	f, ok := indicklar.AnswerSchema().Field(name)
	if !ok || f.Type != score.FlagField {
		t.Fatalf("the answer schema has no flag %q", name)
	}
	return f.Flag(&r)
}

func build(t *testing.T, prompt indicklar.PromptOptions) *experiment.Experiment {
	t.Helper()
	reg, err := experiment.NewRegistry(indicklar.Study{})
	if err != nil {
		t.Fatal(err)
	}
	e := &experiment.Experiment{Name: "c", Study: "indicklar", Studies: reg, Dataset: &experiment.Dataset{Path: "../../testdata/klar", Format: "klar"},
		Languages: []string{"en"}, Options: &indicklar.Options{Forms: []string{"english"}, Strategies: []string{"baseline-cands"}, Prompt: prompt},
		Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
	if err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// The authors' scripts never shuffle: by default the gold is the last
// candidate of every prompt, and the plan says so; shuffle_candidates
// moves it.
func TestCandidateOrder(t *testing.T) {
	for _, c := range []struct {
		name    string
		prompt  indicklar.PromptOptions
		allLast bool
		note    string
	}{
		{"stored (default)", indicklar.PromptOptions{}, true, "the gold is always the last candidate"},
		{"shuffled", indicklar.PromptOptions{ShuffleCandidates: true}, false, "shuffled with seed 12345"},
	} {
		e := build(t, c.prompt)
		byID := e.Items().Index()
		last, n := 0, 0
		for r, err := range e.StreamStage(1, nil, nil) {
			if err != nil {
				t.Fatal(err)
			}
			v, _ := byID[r.Key.Item].Variant("eng", item.English)
			line := r.Prompt[strings.LastIndex(r.Prompt, "Candidates: ")+len("Candidates: "):]
			line, _, _ = strings.Cut(line, "\n")
			cands := strings.Split(line, ", ")
			n++
			if cands[len(cands)-1] == v.Answer {
				last++
			}
		}
		if n == 0 || (last == n) != c.allLast {
			t.Errorf("%s: gold last in %d of %d prompts", c.name, last, n)
		}
		notes := strings.Join(e.PlanNotes(), "\n")
		if !strings.Contains(notes, c.note) {
			t.Errorf("%s: notes %q", c.name, notes)
		}
		found := false
		for _, tb := range e.Plan().Tables(nil, tables.Options{}) {
			if tb.Name != "scoring" {
				continue
			}
			for _, row := range tb.Rows {
				if tb.Str(row, "criterion") == "candidate_order" && strings.Contains(tb.Str(row, "rule"), c.note) {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: scoring table does not state the candidate order", c.name)
		}
	}
}

// The authors' json.loads rule is the default: an answer cut off by the
// token limit is scored on its raw text (wrong); scoring.lenient_json
// reads it (right); the sensitivity table counts the answer either way.
func TestJSONRuleDefault(t *testing.T) {
	for _, lenient := range []bool{false, true} {
		reg, _ := experiment.NewRegistry(indicklar.Study{})
		e := &experiment.Experiment{Name: "j", Study: "indicklar", Studies: reg, Dataset: &experiment.Dataset{Path: "../../testdata/klar", Format: "klar"},
			Languages: []string{"ja"}, Options: &indicklar.Options{Strategies: []string{"tint-en"}, Scoring: indicklar.ScoringOptions{LenientJSON: lenient}},
			Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
		if err := e.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		var recs []*engine.Record
		var gold string
		for r, err := range e.StreamStage(1, nil, nil) {
			if err != nil {
				t.Fatal(err)
			}
			v, _ := e.Items().Index()[r.Key.Item].Variant(r.Key.Language, item.Form(r.Key.Form))
			gold = v.Answer
			cut := string([]rune(gold)[:len([]rune(gold))-1])
			recs = append(recs, &engine.Record{Key: r.Key.String(), Fields: r.Key, Status: engine.StatusOK, Response: `{"answer": "` + cut})
			break
		}
		for _, r := range recs {
			e.Extract(r)
		}
		rows, err := e.Plan().Score(recs)
		if err != nil || len(rows) != 1 {
			t.Fatalf("%d rows %v", len(rows), err)
		}
		r := rows[0]
		if mark(t, r, "authors_json") || !mark(t, r, "lenient_json") || r.Correct != lenient {
			t.Errorf("lenient=%v: gold %q, row %+v", lenient, gold, r)
		}
		var sens *tables.Table
		for _, tb := range e.Plan().Tables(rows, tables.Options{}) {
			if tb.Name == "sensitivity" {
				sens = tb
			}
		}
		want := map[bool]struct {
			alt          string
			gained, lost float64
		}{false: {"lenient_json", 1, 0}, true: {"authors_json", 0, 1}}[lenient]
		found := false
		for _, row := range sens.Rows {
			if sens.Str(row, "alternative") == want.alt {
				found = true
				if sens.Num(row, "gained") != want.gained || sens.Num(row, "lost") != want.lost || sens.Num(row, "n") != 1 {
					t.Errorf("lenient=%v: sensitivity %v", lenient, row)
				}
			}
		}
		if !found {
			t.Errorf("lenient=%v: no %s row in %v", lenient, want.alt, sens.Rows)
		}
	}
}

// A failed request and a second stage withheld after a failed first both
// count as wrong answers in n (and a two-step answer's latency is both
// stages'), as the authors' scorers count a missing
// answer, and the accuracy table says how many failed.
func TestFailedCountAsWrong(t *testing.T) {
	reg, _ := experiment.NewRegistry(indicklar.Study{})
	e := &experiment.Experiment{Name: "f", Study: "indicklar", Studies: reg, Dataset: &experiment.Dataset{Path: "../../testdata/klar", Format: "klar"},
		Languages: []string{"ja"}, Options: &indicklar.Options{Strategies: []string{"2step-en"}}, Sample: 3, Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
	if err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	var recs []*engine.Record
	byKey := map[engine.Key]*engine.Record{}
	i := 0
	for r, err := range e.StreamStage(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		rec := &engine.Record{Key: r.Key.String(), Fields: r.Key, Status: engine.StatusOK, Response: `{"translation": "What instrument?"}`, LatencyMS: 100}
		if i == 0 {
			rec.Status, rec.Response, rec.Error = engine.StatusFailed, "", "HTTP 500"
		}
		recs = append(recs, rec)
		byKey[r.Key] = rec
		i++
	}
	withheld := 0
	for r, err := range e.StreamStage(2, func(k engine.Key) (*engine.Record, bool) { rec, ok := byKey[k]; return rec, ok }, func(engine.Key) { withheld++ }) {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &engine.Record{Key: r.Key.String(), Fields: r.Key, Status: engine.StatusOK, Response: `{"answer": "x"}`, LatencyMS: 50})
	}
	if withheld != 1 {
		t.Fatalf("withheld %d", withheld)
	}
	for _, r := range recs {
		e.Extract(r)
	}
	rows, err := e.Plan().Score(recs)
	if err != nil {
		t.Fatal(err)
	}
	w := 0
	for _, r := range rows {
		if r.Withheld && r.Failed && !r.Correct {
			w++
		}
		if !r.Failed && r.LatencyMS != 150 { // end-to-end: both stages
			t.Errorf("latency %v, want 150 (100 + 50)", r.LatencyMS)
		}
	}
	if len(rows) != 3 || w != 1 {
		t.Fatalf("%d rows, %d withheld: %+v", len(rows), w, rows)
	}
	for _, tb := range e.Plan().Tables(rows, tables.Options{}) {
		if tb.Name != "accuracy" {
			continue
		}
		for _, row := range tb.Rows {
			if tb.Str(row, "metric") == "correct" && (tb.Num(row, "n") != 3 || tb.Num(row, "failed") != 1) {
				t.Errorf("accuracy row %v: want n 3 with 1 failed", row)
			}
		}
	}
}

// The strategies are tested against the experiment's reference: Baseline
// by default (the paper's Fig. 4 and A.5), Obj-Baseline when asked; a
// reference that was not run is a validation problem.
func TestReference(t *testing.T) {
	for _, c := range []struct{ ref, want string }{{"", "baseline"}, {"Obj-Baseline", "baseline-cands"}} {
		reg, _ := experiment.NewRegistry(indicklar.Study{})
		e := &experiment.Experiment{Name: "r", Study: "indicklar", Studies: reg, Dataset: &experiment.Dataset{Path: "../../testdata/klar", Format: "klar"},
			Languages: []string{"ja"}, Options: &indicklar.Options{Strategies: []string{"baseline", "baseline-cands", "tint-en"}, Reference: c.ref}, Sample: 4,
			Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
		if err := e.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		var recs []*engine.Record
		for r, err := range e.StreamStage(1, nil, nil) {
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, &engine.Record{Key: r.Key.String(), Fields: r.Key, Status: engine.StatusOK, Response: `{"answer": "x"}`})
		}
		for _, r := range recs {
			e.Extract(r)
		}
		rows, _ := e.Plan().Score(recs)
		for _, tb := range e.Plan().Tables(rows, tables.Options{}) {
			if tb.Name != "strategy_tests" {
				continue
			}
			if len(tb.Rows) == 0 {
				t.Fatalf("%q: no strategy tests", c.ref)
			}
			for _, row := range tb.Rows {
				if tb.Str(row, "reference") != c.want || tb.Str(row, "strategy") == c.want {
					t.Errorf("%q: row %v", c.ref, row)
				}
			}
		}
	}
	reg, _ := experiment.NewRegistry(indicklar.Study{})
	e := &experiment.Experiment{Name: "r", Study: "indicklar", Studies: reg, Dataset: &experiment.Dataset{Path: "x"}, Languages: []string{"ja"},
		Options: &indicklar.Options{Strategies: []string{"tint-en"}, Reference: "baseline"}, Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
	if probs := e.Validate(); len(probs) != 1 || !strings.Contains(probs.Error(), "reference baseline is not among the strategies run") {
		t.Errorf("reference not run: %v", probs)
	}
}

// Where the demonstrations came from is stated in the scoring table and
// the run's notes, the authors' 2Step pool by default, each option named
// when set.
func TestDemonstrationsStated(t *testing.T) {
	for _, c := range []struct {
		name   string
		prompt indicklar.PromptOptions
		want   []string
	}{
		{"default", indicklar.PromptOptions{}, []string{"same relation and language", "can be its own demonstration", "random.sample"}},
		{"demos_exclude_item", indicklar.PromptOptions{DemosExcludeItem: true}, []string{"never among its own demonstrations (prompt.demos_exclude_item"}},
		{"demos_from_english", indicklar.PromptOptions{DemosFromEnglish: true}, []string{"English split of its relation (prompt.demos_from_english"}},
	} {
		e := build(t, c.prompt)
		rule := ""
		for _, tb := range e.Plan().Tables(nil, tables.Options{}) {
			if tb.Name == "scoring" {
				for _, row := range tb.Rows {
					if tb.Str(row, "criterion") == "demonstrations" {
						rule = tb.Str(row, "rule")
					}
				}
			}
		}
		notes := strings.Join(e.PlanNotes(), "\n")
		for _, w := range c.want {
			if !strings.Contains(rule, w) {
				t.Errorf("%s: scoring's demonstrations rule %q lacks %q", c.name, rule, w)
			}
			if c.name != "default" && !strings.Contains(notes, w) {
				t.Errorf("%s: notes %q lack %q", c.name, notes, w)
			}
		}
	}
}
