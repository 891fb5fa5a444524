// Package brevity is a study of your own, written the way the built-in
// ones are and small enough to read in one sitting: do models answer a
// plain factual question correctly, and do they answer it briefly? It is
// the README's "your own study", run end to end in its test, and it
// imports one package of Bhasha's, study, the study author's package.
//
// A study is one value that satisfies study.Study, registered by
// name in a Registry (one line: bhasha.Register(brevity.Study{}) on an
// experiment, or reg.Add(brevity.Study{}) on bhasha.BuiltinStudies() for
// YAML files). Its parts, in the order a run meets them:
//
//   - Name and About: "brevity" is what a YAML file's study: names.
//   - Fields: the shared experiment fields it reads (the dataset).
//   - Options: its own YAML options, decoded from the experiment file's
//     top level into its own struct (answer_tokens, brief_words); a
//     program sets them with AnswerTokens and BriefWords, and reads them
//     with study.OptionsOf.
//   - Check: its problems, each at its YAML line, before anything is
//     read or sent.
//   - Build: reads the dataset and returns the Plan, which holds
//     everything the run needs (a Study holds no state).
//
// The plan (plan.go) says what to ask and how to read the answers:
// Stages and Requests (one stage here: every English question as a
// plain chat message; a request's Cues would tell the simulator what it
// asks beyond its words, and plain questions need none), Extract (the
// whole trimmed answer), Score (one study.Row per answer: exact match
// against the golds is correct), AnswerSchema (its criteria, declared
// once: correct and its own, brief — the answer within brief_words
// words; answers.csv, the workbook's samples sheet and the HTML
// explorer carry both), Tables (accuracy and scoring from
// study.Standard, and answer_lengths, a table of its own with declared
// columns: lengths.go) and Figures (figures.go: brief_by_model, drawn
// from answer_lengths with the study package's figure helpers).
package brevity

import (
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
	p := &plan{set: set, abstain: e.Abstain, study: e.Study, tokens: o.AnswerTokens, words: o.BriefWords}
	if p.tokens == 0 {
		p.tokens = DefaultAnswerTokens
	}
	if p.words == 0 {
		p.words = DefaultBriefWords
	}
	return p, nil
}
