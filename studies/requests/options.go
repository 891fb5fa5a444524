package requests

import (
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/study"
)

// FileOptions are the requests study's options: YAML requests: names the
// file (and, without study:, the study).
type FileOptions struct {
	// Requests is a JSON Lines file of RequestLine, relative to the
	// experiment file.
	Requests string `yaml:"requests"`
}

// Inputs: the requests file.
func (o *FileOptions) Inputs() []experiment.Input {
	return []experiment.Input{{Key: "requests", Path: &o.Requests}}
}

// Options is a new zero FileOptions.
func (File) Options() any { return new(FileOptions) }

// ImpliedBy: an experiment without study: that names a requests file is
// this study.
func (File) ImpliedBy() string { return "requests" }

// WithFile sets the requests file (YAML requests:).
func WithFile(path string) study.Option {
	return study.Set(func(o *FileOptions) { o.Requests = path })
}

// SyntheticOptions are the synthetic study's options: YAML synthetic:
// (and, without study:, the study).
type SyntheticOptions struct {
	Synthetic *Generated `yaml:"synthetic"`
}

// Generated asks for Count chat requests with distinct prompts.
type Generated struct {
	Count int `yaml:"count"`
}

// Options is a new zero SyntheticOptions.
func (Synthetic) Options() any { return new(SyntheticOptions) }

// ImpliedBy: an experiment without study: that sets synthetic: is this
// study.
func (Synthetic) ImpliedBy() string { return "synthetic" }
