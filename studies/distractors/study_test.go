package distractors_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// buildProblems is what Validate says of an experiment with opt.
func buildProblems(opt distractors.ScoringOptions) string {
	reg, _ := experiment.NewRegistry(distractors.Study{})
	e := &experiment.Experiment{Name: "d", Study: "mdi", Studies: reg, Dataset: &experiment.Dataset{Path: "../../testdata/triviaqa/triviaqa_small.jsonl"},
		Options: &distractors.Options{Scoring: opt}, Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
	if probs := e.Validate(); len(probs) > 0 {
		return probs.Error()
	}
	return ""
}

// build makes a distractor experiment over the bundled TriviaQA sample.
func build(t *testing.T, opt distractors.ScoringOptions) *experiment.Experiment {
	t.Helper()
	reg, err := experiment.NewRegistry(distractors.Study{})
	if err != nil {
		t.Fatal(err)
	}
	e := &experiment.Experiment{Name: "d", Study: "mdi", Studies: reg, Dataset: &experiment.Dataset{Path: "../../testdata/triviaqa/triviaqa_small.jsonl"},
		Options: &distractors.Options{Conditions: []string{"clean", "hi"}, Scoring: opt}, Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
	if err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// scoreAnswers scores one answer per request of the first items (answers
// cycle through the list).
func scoreAnswers(t *testing.T, e *experiment.Experiment, answers ...string) []score.Row {
	t.Helper()
	var recs []*engine.Record
	i := 0
	for r, err := range e.StreamStage(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if i == len(answers) {
			break
		}
		rec := &engine.Record{Key: r.Key.String(), Fields: r.Key, Status: engine.StatusOK, Response: answers[i]}
		e.Extract(rec)
		recs = append(recs, rec)
		i++
	}
	rows, err := e.Plan().Score(recs)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func table(t *testing.T, e *experiment.Experiment, rows []score.Row, name string) *tables.Table {
	t.Helper()
	for _, tb := range e.Plan().Tables(rows, tables.Options{}) {
		if tb.Name == name {
			return tb
		}
	}
	t.Fatalf("no table %s", name)
	return nil
}

// markOf reads r's flag name through the study's answer schema.
func markOf(t *testing.T, r score.Row, name string) bool {
	t.Helper()
	f, ok := distractors.AnswerSchema().Field(name)
	if !ok || f.Type != score.FlagField {
		t.Fatalf("the answer schema has no flag %q", name)
	}
	return f.Flag(&r)
}

// The abstention rules: the default English list (the paper's "I don't
// know" and "unknown" and related phrases), the 17 languages' lists
// (scoring.multilingual_abstain) and the rerun's two phrases in the
// answer lower-cased (scoring.rerun_abstain). Each row's abstain is the
// rule in force, every rule's mark is set, and the sensitivity table
// re-scores with the two rules not in force (answers gained and lost).
func TestAbstentionRule(t *testing.T) {
	answers := []string{"मुझे नहीं पता", "I don't know.", "Paris", "I'm not sure", "I don’t know", "UNKNOWN"}
	marks := map[string][]bool{ // per answer, by rule
		"english":      {false, true, false, true, true, true},
		"multilingual": {true, true, false, true, true, true},
		"rerun":        {false, true, false, false, false, true},
	}
	mark := map[string]string{"english": "abstain_english", "multilingual": "abstain_multilingual", "rerun": "abstain_rerun"}
	alt := map[string]string{"english": "english_abstain", "multilingual": "multilingual_abstain", "rerun": "rerun_abstain"}
	for _, c := range []struct {
		rule string
		opt  distractors.ScoringOptions
	}{{"english", distractors.ScoringOptions{}}, {"multilingual", distractors.ScoringOptions{MultilingualAbstain: true}}, {"rerun", distractors.ScoringOptions{RerunAbstain: true}}} {
		e := build(t, c.opt)
		rows := scoreAnswers(t, e, answers...)
		if len(rows) != len(answers) {
			t.Fatalf("%s: %d rows", c.rule, len(rows))
		}
		for i, r := range rows {
			if r.Abstain != marks[c.rule][i] {
				t.Errorf("%s: %q abstains %v", c.rule, answers[i], r.Abstain)
			}
			for rule, want := range marks {
				if got := markOf(t, r, mark[rule]); got != want[i] {
					t.Errorf("%s: %q %s = %v", c.rule, answers[i], mark[rule], got)
				}
			}
		}
		sens := table(t, e, rows, "sensitivity")
		seen := map[string]bool{}
		for _, row := range sens.Rows {
			if sens.Str(row, "measure") != "abstain" {
				continue
			}
			name := sens.Str(row, "alternative")
			other := ""
			for rule, a := range alt {
				if a == name {
					other = rule
				}
			}
			if other == "" || other == c.rule || seen[name] {
				t.Errorf("%s: alternative %v", c.rule, row)
				continue
			}
			seen[name] = true
			gained, lost := 0, 0
			for i := range answers {
				switch in, alt := marks[c.rule][i], marks[other][i]; {
				case alt && !in:
					gained++
				case in && !alt:
					lost++
				}
			}
			if int(sens.Num(row, "gained")) != gained || int(sens.Num(row, "lost")) != lost || int(sens.Num(row, "n")) != len(answers) {
				t.Errorf("%s: %s sensitivity %v, want gained %d lost %d", c.rule, name, row, gained, lost)
			}
		}
		if len(seen) != 2 {
			t.Errorf("%s: abstain alternatives %v", c.rule, seen)
		}
	}
	if probs := buildProblems(distractors.ScoringOptions{MultilingualAbstain: true, RerunAbstain: true}); !strings.Contains(probs, "set one") {
		t.Errorf("both rules: %q", probs)
	}
}
