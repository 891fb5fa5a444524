package indicquest

import "github.com/bhashalab/bhasha/studies/experiment"

// Options are IndicQuest's own options (top-level keys of the experiment
// file); languages, the dataset and human_labels are shared fields of the
// experiment.
type Options struct {
	// JudgePrompt is v2 (binary is_correct, the default) or v1 (graded 1-5).
	JudgePrompt string `yaml:"judge_prompt"`
}

// Options is a new zero Options: the study's YAML keys.
func (Study) Options() any { return new(Options) }

// WithJudgePrompt sets the judge's prompt, v1 or v2 (YAML judge_prompt:).
func WithJudgePrompt(version string) experiment.Option {
	return experiment.Set(func(o *Options) { o.JudgePrompt = version })
}
