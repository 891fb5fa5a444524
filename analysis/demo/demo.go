// Package demo turns datasets into what the simulator knows (Facts) and
// reads the bundled IndicKLAR demo facts; the built-in default run itself
// is bhasha.Demo.
package demo

import (
	"context"

	"github.com/bhashalab/bhasha/analysis/sim"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// Questions reads the bundled IndicKLAR page-demo facts.
func Questions(ctx context.Context, bundle string) (*item.Set, error) {
	return klar.LoadPageDemo(ctx, bundle, lang.New(), item.Options{})
}

// Facts turns an item set into simulator facts: each variant's question
// (and subject) is a cue, its answer and candidates what the simulated
// models know; a multiple-choice item's correct choice is its answer.
func Facts(s *item.Set) []sim.Fact {
	var out []sim.Fact
	for _, it := range s.Items {
		for _, v := range it.Variants {
			var cues []string
			if v.Question != "" {
				cues = append(cues, v.Question)
			}
			if v.Subject != "" {
				cues = append(cues, v.Subject)
			}
			if len(cues) == 0 {
				continue
			}
			out = append(out, sim.Fact{ID: it.ID, Relation: it.Relation, Language: v.Language, Form: string(v.Form),
				Cues: cues, Answer: v.Answer, Candidates: v.Candidates, Choices: it.Choices})
		}
	}
	return out
}
