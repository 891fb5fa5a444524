package distractors

import (
	"github.com/bhashalab/bhasha/study"
)

// Options are the distractor study's own options (top-level keys of the
// experiment file); the dataset and human_labels are shared fields of the
// experiment.
type Options struct {
	// Conditions are the distractor conditions run (default: all eight).
	Conditions []string `yaml:"conditions"`
	// Notes override the distractor notes by language (es, hi, zh).
	Notes map[string]string `yaml:"notes"`
	// Paragraph overrides the unrelated paragraph.
	Paragraph string `yaml:"paragraph"`
	// Scoring switches the scoring from the paper's rules (the defaults)
	// to Bhasha's named alternatives (YAML scoring:, a block other studies
	// declare with keys of their own).
	Scoring ScoringOptions `yaml:"scoring"`
}

// ScoringOptions are the distractor study's named alternatives to the
// paper's scoring rules. They change how recorded answers are read and
// tested, never what is asked.
type ScoringOptions struct {
	// MultilingualAbstain counts an abstention in any of the 17
	// languages' phrases (abstain.Phrases), instead of the default
	// English list (abstain.Phrases["eng"]: the paper's "I don't know"
	// and "unknown" and Bhasha's reading of its unpublished "related
	// phrases", 13 in all).
	MultilingualAbstain bool `yaml:"multilingual_abstain"`
	// RerunAbstain reads abstention as the independent rerun's scorer
	// does: exactly "i don't know" or "unknown" occurring in the answer
	// lower-cased (RerunAbstainPhrases; the experiment's abstain: phrases
	// are not added). It excludes MultilingualAbstain.
	RerunAbstain bool `yaml:"rerun_abstain"`
	// UnpairedTests adds the two-proportion z and Fisher's exact tests to
	// the paired condition tests (McNemar).
	UnpairedTests bool `yaml:"unpaired_tests"`
}

// Options is a new zero Options: the study's YAML keys.
func (Study) Options() any { return new(Options) }

// WithConditions sets the distractor conditions (YAML conditions:).
func WithConditions(names ...string) study.Option {
	return study.Set(func(o *Options) { o.Conditions = names })
}

// WithScoring sets the scoring options (YAML scoring:).
func WithScoring(s ScoringOptions) study.Option {
	return study.Set(func(o *Options) { o.Scoring = s })
}
