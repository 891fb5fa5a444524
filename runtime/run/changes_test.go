package run

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// manyRequests is a job of one stage asking n requests.
func manyRequests(n int) *Job {
	return &Job{Name: "x", Stages: 1, Requests: func(int, Lookup, func(engine.Key)) iter.Seq2[engine.Request, error] {
		return func(yield func(engine.Request, error) bool) {
			for i := range n {
				r := engine.Request{Key: engine.Key{Experiment: "x", Model: "m", Item: fmt.Sprint(i)}, Kind: engine.Completion, Prompt: "p"}
				if !yield(r, nil) {
					return
				}
			}
		}
	}}
}

// planStage tells its progress every planEvery requests, and stops there
// when its context is done.
func TestPlanStageProgressAndCancel(t *testing.T) {
	const n = 3*planEvery + 5
	cases := []struct {
		name     string
		cancelAt int // cancel the context when note is told this many (0: never)
		notes    []int
		err      error
		pending  int
	}{
		{"to the end", 0, []int{planEvery, 2 * planEvery, 3 * planEvery}, nil, n},
		{"cancelled", 2 * planEvery, []int{planEvery, 2 * planEvery}, context.Canceled, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var notes []int
			p, err := planStage(ctx, manyRequests(n), 1, nil, records.NewKeySet(), nil, nil, func(walked int) {
				notes = append(notes, walked)
				if walked == c.cancelAt {
					cancel()
				}
			})
			if !errors.Is(err, c.err) || fmt.Sprint(notes) != fmt.Sprint(c.notes) {
				t.Fatalf("err %v, notes %v; want %v, %v", err, notes, c.err, c.notes)
			}
			if c.pending >= 0 && p.pending != c.pending {
				t.Fatalf("%d pending, want %d", p.pending, c.pending)
			}
		})
	}
}
