package experiment

import (
	"context"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// EngineOptions is the engine limits of e's Job (zero when it fails).
func (e *Experiment) EngineOptions() engine.Options {
	j, err := e.Job(context.Background())
	if err != nil {
		return engine.Options{}
	}
	return j.Engine
}
