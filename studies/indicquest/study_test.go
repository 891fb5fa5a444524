package indicquest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicquest"
	"github.com/bhashalab/bhasha/study"
)

// mark reads r's flag name through the study's answer schema.
func mark(t *testing.T, r score.Row, name string) bool {
	t.Helper()
	f, ok := indicquest.AnswerSchema().Field(name)
	if !ok || f.Type != score.FlagField {
		t.Fatalf("the answer schema has no flag %q", name)
	}
	return f.Flag(&r)
}

// The paper's lexical criteria compare case-insensitively only: a nukta
// spelling and native digits do not match; scoring.normalized_lexical
// matches them; the sensitivity table counts both. A v1 judge's five
// criteria and Overall are summarised in judge_grades.
func TestLexicalRulesAndGrades(t *testing.T) {
	dir := t.TempDir()
	csv := "Question,Answer,Domain\nभारत के तीसरे राष्ट्रपति कौन थे?,जाकिर हुसैन,Politics\nभारत कब स्वतंत्र हुआ?,1947,History\n"
	if err := os.WriteFile(filepath.Join(dir, "Hindi.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, normalized := range []bool{false, true} {
		reg, _ := experiment.NewRegistry(indicquest.Study{})
		e := &experiment.Experiment{Name: "q", Study: "indicquest", Studies: reg, Dataset: &experiment.Dataset{Path: dir}, Options: &indicquest.Options{JudgePrompt: "v1", Scoring: indicquest.ScoringOptions{NormalizedLexical: normalized}},
			Judge:  &experiment.Model{Name: "judge", ServedName: "J"},
			Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
		if err := e.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		answers := []string{`{"answer": "ज़ाकिर हुसैन"}`, `{"answer": "१९४७"}`}
		grades := []string{`{"Factual Accuracy": 5, "Relevance": 5, "Clarity": 4, "Language Consistency": 5, "Conciseness": 5, "Overall": 4.8}`,
			`{"Factual Accuracy": 2, "Relevance": 4, "Clarity": 4, "Language Consistency": 1, "Conciseness": 5, "Overall": 2.5}`}
		var recs []*engine.Record
		i := 0
		for r, err := range e.StreamStage(1, nil, nil) {
			if err != nil {
				t.Fatal(err)
			}
			jk := study.JudgeKey(r.Key, "judge")
			recs = append(recs, &engine.Record{Key: r.Key.String(), Fields: r.Key, Status: engine.StatusOK, Response: answers[i]},
				&engine.Record{Key: jk.String(), Fields: jk, Status: engine.StatusOK, Response: grades[i]})
			i++
		}
		if i != 2 {
			t.Fatalf("%d requests", i)
		}
		for _, r := range recs {
			e.Extract(r)
		}
		rows, err := e.Plan().Score(recs)
		if err != nil || len(rows) != 2 {
			t.Fatalf("%d rows %v", len(rows), err)
		}
		for _, r := range rows {
			sub, alt, ov := mark(t, r, "substring"), mark(t, r, "substring_alt"), mark(t, r, "overlap")
			if sub != normalized || alt == normalized || ov != normalized {
				t.Errorf("normalized=%v: %s: substring %v (alt %v), overlap %v", normalized, r.Gold, sub, alt, ov)
			}
		}
		if !rows[0].Correct || rows[1].Correct || rows[0].Detail == nil || rows[0].Detail.JudgeScores["Clarity"] != 4 {
			t.Errorf("v1 verdicts %+v / %+v", rows[0], rows[1])
		}
		var sens, grade *tables.Table
		for _, tb := range e.Plan().Tables(rows, tables.Options{}) {
			switch tb.Name {
			case "sensitivity":
				sens = tb
			case "judge_grades":
				grade = tb
			}
		}
		for _, row := range sens.Rows {
			if sens.Str(row, "measure") == "substring" {
				want := 2.0
				if normalized {
					want = -2
				}
				if got := sens.Num(row, "gained") - sens.Num(row, "lost"); got != want {
					t.Errorf("normalized=%v: substring sensitivity %v", normalized, row)
				}
			}
		}
		if grade == nil || len(grade.Rows) != 6 {
			t.Fatalf("judge_grades %v", grade)
		}
		for _, row := range grade.Rows {
			if grade.Str(row, "criterion") == "Overall" && (grade.Num(row, "n") != 2 || grade.Num(row, "mean") != 3.65 || grade.Num(row, "share_ge3") != 0.5) {
				t.Errorf("Overall grades %v", row)
			}
		}
	}
}
