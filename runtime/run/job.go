package run

import (
	"errors"
	"iter"
	"slices"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// Lookup finds the record of an earlier stage by its key (a run's ok
// records). Execute's lookups return records holding Key, Fields, Status
// and Response: what the studies' request builders read (see buildPrior).
type Lookup = func(engine.Key) (*engine.Record, bool)

// Job is what a run needs of an experiment, built once by its caller
// (experiment.Experiment.Job) before Execute or batch.Export: its
// provenance, its models and engine limits, and its requests stage by
// stage. Execute and batch.Export read a Job and never change it; the
// runtime knows no experiment and no study beyond it.
type Job struct {
	// Name is the experiment's name: every record's key names it, and a
	// run directory holds the records of one name.
	Name string
	// Path is the experiment file ("" when the experiment was built in
	// Go), and Hash the SHA-256 of its bytes.
	Path, Hash string
	// Copy is the run's copy of the experiment (DIR/experiment.yaml), as
	// its author wrote it with every path made absolute: endpoints given
	// for one run (Options.Endpoint) are not part of it.
	Copy []byte
	// Decoding is the experiment's decoding, for the manifest.
	Decoding engine.Decoding
	// Inputs are the SHA-256 of each input file (dataset, requests), keyed
	// by absolute path; Templates those of the prompt templates, by name.
	Inputs, Templates map[string]string
	// Models are the engine's models, the judge included, with the
	// endpoints and concurrency the experiment names (Options.Endpoint and
	// Options.Concurrency replace them for one run).
	Models []engine.ModelConfig
	// Engine holds the experiment's engine limits.
	Engine engine.Options
	// Stages is the number of request stages (at least 1).
	Stages int
	// Requests yields the requests of stage (1-based) for every model;
	// prior finds the records of earlier stages. Requests that cannot be
	// built yet (their first stage has no answer) are not yielded: when
	// withheld is not nil it is called with each one's key as the stream
	// is read. The stream is the same each time it is read with the same
	// records.
	Requests func(stage int, prior Lookup, withheld func(engine.Key)) iter.Seq2[engine.Request, error]
	// Extract, when set, fills an ok record's Extracted the way the study
	// scores it, before the record is written.
	Extract func(rec *engine.Record)
	// Dataset describes the study's data for the manifest (nil when the
	// study reads no dataset).
	Dataset *DatasetInfo
	// Shard is "K/N" when the job is shard K of N of the experiment (its
	// requests are that shard's: package shard), for the manifest; "" for
	// the whole experiment.
	Shard string
}

// check reports a job that cannot be run: one without a name, stages or
// requests.
func (j *Job) check() error {
	switch {
	case j == nil:
		return errors.New("run: no job")
	case j.Name == "":
		return errors.New("run: the job has no experiment name")
	case j.Stages < 1:
		return errors.New("run: job " + j.Name + " has no stage")
	case j.Requests == nil:
		return errors.New("run: job " + j.Name + " has no requests")
	}
	return nil
}

// models are the job's models with the run's endpoints (every model's,
// the judge's included, when endpoints is not empty) and per-replica
// concurrency (when n > 0); the job's own configurations are not changed.
func (j *Job) models(endpoints []string, n int) []engine.ModelConfig {
	out := slices.Clone(j.Models)
	for i := range out {
		if len(endpoints) > 0 {
			out[i].Endpoints = slices.Clone(endpoints)
		}
		if n > 0 {
			out[i].MaxConcurrency = n
		}
	}
	return out
}
