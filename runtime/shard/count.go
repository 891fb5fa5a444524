package shard

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
)

// Cell is a part of a job's requests: those of one shard, one model (the
// model a request is sent to: a judge's verdicts are the judge's) and one
// stage.
type Cell struct {
	Shard, Stage int
	Model        string
}

// Count is what a Cell asks.
type Count struct {
	Requests int
	// Built counts the requests whose prompts are known before any
	// answer; the others are built from an earlier stage's answer (a
	// second step, a judge's verdict), which a count made before the run
	// does not have.
	Built int
	// PromptTokens counts the prompts of the built requests with the
	// model's tokenizer, and Counted says how many of them were counted
	// (those of a model without a tokenizer are not).
	PromptTokens, Counted int
	// AnswerTokens bounds the answers of the built requests: the sum of
	// their max_tokens.
	AnswerTokens int
}

// Tally counts the requests of job j by Cell, every stage, as a run of
// the whole job would ask them when every answer is ok; l divides them
// into shards (every request in shard 0 when l is nil). tokens counts a
// request's prompt, and says false when its model has no tokenizer (nil:
// none is counted). It reads every stage's requests once and sends
// nothing. A request no shard owns is an error naming it.
func Tally(j *run.Job, l *Layout, tokens func(engine.Request) (int, bool, error)) (map[Cell]*Count, error) {
	out := map[Cell]*Count{}
	none := func(engine.Key) (*engine.Record, bool) { return nil, false }
	var bad error
	cell := func(k engine.Key, stage int) *Count {
		s := 0
		if l != nil {
			var ok bool
			if s, ok = l.Of(k); !ok && bad == nil {
				bad = fmt.Errorf("%s: request %s (stage %d) belongs to no shard: its model and item ask nothing in the first stage", j.Name, k, stage)
			}
		}
		c := Cell{Shard: s, Stage: stage, Model: k.Model}
		if out[c] == nil {
			out[c] = &Count{}
		}
		return out[c]
	}
	for stage := 1; stage <= j.Stages; stage++ {
		withheld := func(k engine.Key) { cell(k, stage).Requests++ }
		for r, err := range j.Requests(stage, none, withheld) {
			if err != nil {
				return nil, fmt.Errorf("%s: stage %d: %w", j.Name, stage, err)
			}
			c := cell(r.Key, stage)
			c.Requests++
			c.Built++
			c.AnswerTokens += r.Decoding.MaxTokens
			if tokens == nil {
				continue
			}
			n, ok, err := tokens(r)
			if err != nil {
				return nil, fmt.Errorf("%s: counting the prompt tokens of %s: %w", j.Name, r.Key, err)
			}
			if ok {
				c.PromptTokens += n
				c.Counted++
			}
		}
		if bad != nil {
			return nil, bad
		}
	}
	return out, nil
}

// Cells returns the cells of a tally in order: by shard, stage and model.
func Cells(t map[Cell]*Count) []Cell {
	return slices.SortedFunc(maps.Keys(t), func(a, b Cell) int {
		return cmp.Or(cmp.Compare(a.Shard, b.Shard), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Model, b.Model))
	})
}
