package distractors_test

import (
	"context"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
)

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

// mark reads r's flag name through the study's answer schema.
func mark(t *testing.T, r score.Row, name string) bool {
	t.Helper()
	f, ok := distractors.AnswerSchema().Field(name)
	if !ok || f.Type != score.FlagField {
		t.Fatalf("the answer schema has no flag %q", name)
	}
	return f.Flag(&r)
}

// The paper's abstention rule is English phrases: a Hindi "I don't know"
// is a hallucination by default, an abstention with
// scoring.multilingual_abstain, and the sensitivity table counts it.
func TestAbstentionRule(t *testing.T) {
	for _, multi := range []bool{false, true} {
		e := build(t, distractors.ScoringOptions{MultilingualAbstain: multi})
		rows := scoreAnswers(t, e, "मुझे नहीं पता", "I don't know.", "Paris")
		if len(rows) != 3 {
			t.Fatalf("%d rows", len(rows))
		}
		if rows[0].Abstain != multi || mark(t, rows[0], "abstain_english") || !mark(t, rows[0], "abstain_multilingual") {
			t.Errorf("multi=%v: Hindi abstention %+v", multi, rows[0])
		}
		if !rows[1].Abstain {
			t.Errorf("multi=%v: English abstention missed", multi)
		}
		sens := table(t, e, rows, "sensitivity")
		found := 0
		for _, row := range sens.Rows {
			if sens.Str(row, "measure") == "abstain" {
				found++
				gained, lost := 1.0, 0.0
				if multi {
					gained, lost = 0, 1
				}
				if sens.Num(row, "gained") != gained || sens.Num(row, "lost") != lost || sens.Num(row, "n") != 3 {
					t.Errorf("multi=%v: abstain sensitivity %v", multi, row)
				}
			}
		}
		if found != 1 {
			t.Errorf("multi=%v: %d abstain rows in %v", multi, found, sens.Rows)
		}
	}
}
