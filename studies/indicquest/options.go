package indicquest

import (
	"github.com/bhashalab/bhasha/study"
)

// Options are IndicQuest's own options (top-level keys of the experiment
// file); languages, the dataset and human_labels are shared fields of the
// experiment.
type Options struct {
	// JudgePrompt is v2 (binary is_correct, the default) or v1 (graded 1-5).
	JudgePrompt string `yaml:"judge_prompt"`
	// Scoring switches the lexical criteria from the paper's rule (the
	// default) to Bhasha's named alternative (YAML scoring:, a block
	// other studies declare with keys of their own).
	Scoring ScoringOptions `yaml:"scoring"`
}

// ScoringOptions are IndicQuest's named alternatives to the paper's
// scoring rules. They change how recorded answers are read, never what
// is asked.
type ScoringOptions struct {
	// NormalizedLexical compares the lexical criteria after Bhasha's full
	// normalisation (NFC, joiners, nukta, digits, every punctuation mark,
	// case folding) instead of the paper's case-insensitive comparison.
	NormalizedLexical bool `yaml:"normalized_lexical"`
}

// Options is a new zero Options: the study's YAML keys.
func (Study) Options() any { return new(Options) }

// WithScoring sets the scoring options (YAML scoring:).
func WithScoring(s ScoringOptions) study.Option {
	return study.Set(func(o *Options) { o.Scoring = s })
}
