package indicklar_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
)

func build(t *testing.T, prompt experiment.PromptOptions) *experiment.Experiment {
	t.Helper()
	reg, err := experiment.NewRegistry(indicklar.Study{})
	if err != nil {
		t.Fatal(err)
	}
	e := &experiment.Experiment{Name: "c", Study: "indicklar", Studies: reg, Dataset: &experiment.Dataset{Path: "../../testdata/klar", Format: "klar"},
		Languages: []string{"en"}, Forms: []string{"english"}, Strategies: []string{"baseline-cands"}, Prompt: prompt,
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
		prompt  experiment.PromptOptions
		allLast bool
		note    string
	}{
		{"stored (default)", experiment.PromptOptions{}, true, "the gold is always the last candidate"},
		{"shuffled", experiment.PromptOptions{ShuffleCandidates: true}, false, "shuffled with seed 12345"},
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
