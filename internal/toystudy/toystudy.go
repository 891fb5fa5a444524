// Package toystudy is a study small enough to read in one sitting, kept
// to prove that a study needs one package and one registration: it asks
// each item's English question as a plain chat message and scores the
// whole trimmed answer by exact match against the item's golds
// (TriviaQA's normalisation). Its tables are accuracy, scoring and
// "toy_lengths" (answer length per model), a table of its own. Its own
// YAML option, answer_tokens, is the answers' token limit (Options).
package toystudy

import (
	"context"
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/protocol"
)

// Study is the toy study: YAML study: toy.
type Study struct{}

// Name is "toy".
func (Study) Name() string { return "toy" }

// About says what it does.
func (Study) About() string {
	return "asks each English question plainly; exact match of the whole answer"
}

// Fields: the shared dataset.
func (Study) Fields() []string { return []string{"dataset"} }

// Options are the toy study's own options.
type Options struct {
	// AnswerTokens is the answers' token limit (default 16, at most 4096).
	AnswerTokens int `yaml:"answer_tokens"`
}

// Options is a new zero Options: YAML answer_tokens.
func (Study) Options() any { return new(Options) }

// AnswerTokens sets the answers' token limit (YAML answer_tokens).
func AnswerTokens(n int) experiment.Option {
	return experiment.Set(func(o *Options) { o.AnswerTokens = n })
}

// Check requires the dataset and an answer_tokens in 1..4096 when set.
func (Study) Check(e *experiment.Experiment, c *experiment.Checker) {
	if n := experiment.OptionsOf[Options](e).AnswerTokens; n < 0 || n > 4096 {
		c.Add([]string{"answer_tokens"}, "answer_tokens %d: want 1 to 4096 (or absent for 16)", n)
	}
	e.CheckDataset(c)
}

// Build reads the dataset.
func (Study) Build(ctx context.Context, e *experiment.Experiment) (experiment.Plan, error) {
	set, err := e.LoadItems(ctx)
	if err != nil {
		return nil, err
	}
	tokens := experiment.OptionsOf[Options](e).AnswerTokens
	if tokens == 0 {
		tokens = 16
	}
	return &plan{set: set, abstain: e.Abstain, study: e.Study, tokens: tokens}, nil
}

type plan struct {
	set     *item.Set
	abstain map[string][]string
	study   string
	tokens  int // the answers' token limit
}

func (p *plan) Stages() int                  { return 1 }
func (p *plan) Templates() map[string]string { return nil }
func (p *plan) Items() *item.Set             { return p.set }

// Requests asks every English question, greedy, answer_tokens tokens.
func (p *plan) Requests(exp, model string, stage int, _ protocol.Lookup) iter.Seq2[engine.Request, error] {
	return func(yield func(engine.Request, error) bool) {
		zero := 0.0
		for _, it := range p.set.Items {
			v, ok := it.Variant("eng", item.English)
			if !ok || stage != 1 {
				continue
			}
			r := engine.Request{Key: engine.Key{Experiment: exp, Model: model, Item: it.ID, Language: "eng", Form: string(item.English)},
				Kind: engine.Chat, Messages: []engine.Message{{Role: "user", Content: v.Question}},
				Decoding: engine.Decoding{MaxTokens: p.tokens, Temperature: &zero}}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Extract takes the whole answer, trimmed.
func (p *plan) Extract(r *engine.Record) *extract.Result {
	return &extract.Result{Value: strings.TrimSpace(r.Response), Method: extract.MethodText}
}

// Score: exact match of the answer against the golds.
func (p *plan) Score(recs []*engine.Record) ([]score.Row, error) {
	c := score.NewCommon(p.abstain)
	byID := p.set.Index()
	var out []score.Row
	for _, r := range recs {
		it := byID[r.Fields.Item]
		if it == nil {
			continue
		}
		v, _ := it.Variant("eng", item.English)
		row := c.Row(r)
		row.Gold = v.Answer
		if !row.Failed {
			row.Correct = match.ExactMatch(row.Prediction, v.Golds())
		}
		out = append(out, row)
	}
	return out, nil
}

// Tables: accuracy and scoring, then toy_lengths.
func (p *plan) Tables(rows []score.Row, opt tables.Options) []*tables.Table {
	crit := []tables.Criterion{{Name: "correct", Rule: "exact match of the whole trimmed answer against every gold", Normalization: "triviaqa-normalize"}}
	lengths := &tables.Table{Name: "toy_lengths", Description: "mean answer length in characters per model", Header: []string{"model", "n", "mean_chars"},
		ColumnDocs: map[string]string{"mean_chars": "mean length of the answers in characters"}}
	sum, n := map[string]int{}, map[string]int{}
	var models []string
	for _, r := range rows {
		if r.Failed {
			continue
		}
		if n[r.Key.Model] == 0 {
			models = append(models, r.Key.Model)
		}
		n[r.Key.Model]++
		sum[r.Key.Model] += utf8.RuneCountInString(r.Prediction)
	}
	for _, m := range models {
		lengths.Rows = append(lengths.Rows, []any{m, n[m], float64(sum[m]) / float64(n[m])})
	}
	return append(tables.Standard(p.study, []tables.Metric{tables.Correct()}, crit, rows, opt), lengths)
}

// AnswerSchema: the toy study's one criterion, exact match (correct).
func (p *plan) AnswerSchema() *score.Schema {
	return score.NewSchema(score.CorrectField("exact match of the whole trimmed answer against every gold"))
}
