package indicklar

import "github.com/bhashalab/bhasha/studies/experiment"

// Options are IndicKLAR's own options (top-level keys of the experiment
// file); languages, the dataset and the prompt options are shared fields
// of the experiment.
type Options struct {
	// Forms are the question forms asked: native, code-mixed, english
	// (default native).
	Forms []string `yaml:"forms"`
	// Strategies are the prompting strategies (default baseline).
	Strategies []string `yaml:"strategies"`
	// Reference is the strategy the others are tested against (default
	// Baseline when run, else Obj-Baseline).
	Reference string `yaml:"reference"`
}

// Options is a new zero Options: the study's YAML keys.
func (Study) Options() any { return new(Options) }

// WithForms sets the question forms (YAML forms:).
func WithForms(forms ...string) experiment.Option {
	return experiment.Set(func(o *Options) { o.Forms = forms })
}

// WithStrategies sets the prompting strategies (YAML strategies:).
func WithStrategies(names ...string) experiment.Option {
	return experiment.Set(func(o *Options) { o.Strategies = names })
}

// WithReference sets the strategy the others are tested against (YAML reference:).
func WithReference(name string) experiment.Option {
	return experiment.Set(func(o *Options) { o.Reference = name })
}
