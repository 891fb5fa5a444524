// Package simulate serves an experiment from the in-process simulator:
// the simulated models it needs, and a loopback server that knows its
// items.
package simulate

import (
	"cmp"
	"context"
	"slices"

	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// ModelsOf are the simulator's own models plus one simulated model per
// other served name of the experiment and its judge (a paper's Hugging
// Face names), of its size_b (8 when unknown): any experiment runs on the
// simulator, labelled SIMULATED, before it is pointed at real servers.
func ModelsOf(exp *experiment.Experiment) []sim.ModelSpec {
	out := sim.DefaultModels()
	all := slices.Clone(exp.Models)
	if exp.Judge != nil {
		all = append(all, *exp.Judge)
	}
	for _, m := range all {
		if slices.ContainsFunc(out, func(s sim.ModelSpec) bool { return s.ID == m.ServedName }) {
			continue
		}
		out = append(out, sim.ModelSpec{ID: m.ServedName, ParamsB: cmp.Or(max(m.SizeB, 0), 8), MaxModelLen: 8192})
	}
	return out
}

// Start serves the simulator, knowing the experiment's items (built
// first: Experiment.Build), on a loopback port until stop is called or
// ctx ends, and returns its base URL.
func Start(ctx context.Context, exp *experiment.Experiment) (url string, stop func(), err error) {
	var facts []sim.Fact
	if set := exp.Items(); set != nil {
		facts = sim.FactsOf(set)
	}
	srv, err := sim.New(sim.Config{Facts: facts, Models: ModelsOf(exp)})
	if err != nil {
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	url, err = srv.Start(sctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		return "", nil, err
	}
	return url, cancel, nil
}
