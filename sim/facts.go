package sim

import (
	"context"
	"slices"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// LoadBundle reads an IndicKLAR project-page bundle (the facts the
// simulator knows by default).
func LoadBundle(ctx context.Context, bundle string) (*item.Set, error) {
	return klar.LoadPageDemo(ctx, bundle, lang.New(), item.Options{})
}

// FactsOf turns an item set into simulator facts: each variant's question
// (and subject) is a cue, its answer and candidates what the simulated
// models know; a multiple-choice item's correct choice is its answer.
func FactsOf(s *item.Set) []Fact {
	var out []Fact
	for _, it := range s.Items {
		for _, v := range it.Variants {
			cues := slices.DeleteFunc([]string{v.Question, v.Subject}, func(c string) bool { return c == "" })
			if len(cues) == 0 {
				continue
			}
			out = append(out, Fact{ID: it.ID, Relation: it.Relation, Language: v.Language, Form: string(v.Form),
				Cues: cues, Answer: v.Answer, Candidates: v.Candidates, Choices: it.Choices})
		}
	}
	return out
}
