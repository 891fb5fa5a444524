package experiment

import (
	"context"
	"iter"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
)

// Job builds the experiment (Build; ctx cancels reading its dataset) and
// returns what a run of it needs (run.Execute, batch.Export): its name,
// file and hash, its portable copy (Portable), decoding, the hashes of its
// inputs and templates, its models and engine limits, and its requests
// stage by stage with the study's extraction. The job reads the
// experiment's plan: build it again after changing the experiment.
func (e *Experiment) Job(ctx context.Context) (*run.Job, error) {
	if err := e.Build(ctx); err != nil {
		return nil, err
	}
	portable, err := e.Portable()
	if err != nil {
		return nil, err
	}
	inputs, err := e.InputHashes()
	if err != nil {
		return nil, err
	}
	j := &run.Job{
		Name: e.Name, Path: e.Path, Hash: e.Hash, Copy: portable, Decoding: e.Decoding,
		Inputs: inputs, Templates: e.Templates(),
		Models: e.ModelConfigs(), Engine: e.EngineOptions(),
		Stages: e.Stages(),
		Requests: func(stage int, prior run.Lookup, withheld func(engine.Key)) iter.Seq2[engine.Request, error] {
			return e.StreamStage(stage, prior, withheld)
		},
		Extract: e.Extract,
	}
	if set := e.Items(); set != nil {
		d := &run.DatasetInfo{Name: set.Dataset, Items: len(set.Items), Skipped: set.Skipped, Notes: set.Notes, Missing: map[string]int{}}
		for lf, ids := range set.Check().Missing {
			d.Missing[lf] = len(ids)
		}
		j.Dataset = d
	}
	return j, nil
}
