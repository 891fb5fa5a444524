// Package brevity is a study of your own, written the way the built-in
// ones are and small enough to read in one sitting: do models answer a
// plain factual question correctly, and do they answer it briefly? It is
// the README's "your own study", run end to end in its test, and imports
// only Bhasha's study package, whose doc lists a study's parts in the
// order a run meets them.
//
// Register it with bhasha.Register(brevity.Study{}) on an experiment, or
// reg.Add(brevity.Study{}) on bhasha.BuiltinStudies() for YAML files. Its
// own options are answer_tokens and brief_words (AnswerTokens,
// BriefWords). The plan (plan.go) asks every English question as one chat
// message, scores exact match as correct and its own criterion, brief (at
// most brief_words words), as a mark; its table answer_lengths is in
// lengths.go and its figure brief_by_model in figures.go.
package brevity

import (
	"cmp"
	"context"

	"github.com/bhashalab/bhasha/study"
)

// Default option values.
const (
	// DefaultAnswerTokens is the answers' token limit when answer_tokens
	// is absent.
	DefaultAnswerTokens = 16
	// DefaultBriefWords is the most words a brief answer has when
	// brief_words is absent.
	DefaultBriefWords = 5
)

// Study is the brevity study: YAML study: brevity.
type Study struct{}

// Name is "brevity".
func (Study) Name() string { return "brevity" }

// About says what it measures.
func (Study) About() string {
	return "asks each English question plainly: exact match of the whole answer, and whether it is brief"
}

// Fields: the shared dataset.
func (Study) Fields() []string { return []string{"dataset"} }

// Options are the brevity study's own options, set at the experiment
// file's top level.
type Options struct {
	// AnswerTokens is the answers' token limit (default 16, at most 4096).
	AnswerTokens int `yaml:"answer_tokens"`
	// BriefWords is the most words an answer meeting the brief criterion
	// has (default 5, at most 100).
	BriefWords int `yaml:"brief_words"`
}

// Options is a new zero Options: YAML answer_tokens and brief_words.
func (Study) Options() any { return new(Options) }

// AnswerTokens sets the answers' token limit (YAML answer_tokens).
func AnswerTokens(n int) study.Option {
	return study.Set(func(o *Options) { o.AnswerTokens = n })
}

// BriefWords sets the most words of a brief answer (YAML brief_words).
func BriefWords(n int) study.Option {
	return study.Set(func(o *Options) { o.BriefWords = n })
}

// Check requires the dataset, an answer_tokens in 1..4096 and a
// brief_words in 1..100 when set, each problem at its YAML line.
func (Study) Check(e *study.Experiment, c *study.Checker) {
	o := study.OptionsOf[Options](e)
	if n := o.AnswerTokens; n < 0 || n > 4096 {
		c.Add([]string{"answer_tokens"}, "answer_tokens %d: want 1 to 4096 (or absent for %d)", n, DefaultAnswerTokens)
	}
	if n := o.BriefWords; n < 0 || n > 100 {
		c.Add([]string{"brief_words"}, "brief_words %d: want 1 to 100 (or absent for %d)", n, DefaultBriefWords)
	}
	e.CheckDataset(c)
}

// Build reads the dataset and returns the plan, the options' defaults
// filled in.
func (Study) Build(ctx context.Context, e *study.Experiment) (study.Plan, error) {
	set, err := e.LoadItems(ctx)
	if err != nil {
		return nil, err
	}
	o := study.OptionsOf[Options](e)
	return &plan{set: set, abstain: e.Abstain, study: e.Study,
		tokens: cmp.Or(o.AnswerTokens, DefaultAnswerTokens), words: cmp.Or(o.BriefWords, DefaultBriefWords)}, nil
}
