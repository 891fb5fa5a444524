// Package toystudy is a study small enough to read in one sitting, kept
// to prove that a study needs one package and one registration: it asks
// each item's English question as a plain chat message and scores the
// whole trimmed answer by exact match against the item's golds
// (TriviaQA's normalisation). Its tables are accuracy, scoring and
// "toy_lengths" (answer length per model), a table of its own.
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

// Fields: dataset only.
func (Study) Fields() []string { return []string{"dataset"} }

// Check requires the dataset.
func (Study) Check(e *experiment.Experiment, c *experiment.Checker) { e.CheckDataset(c) }

// Build reads the dataset.
func (Study) Build(ctx context.Context, e *experiment.Experiment) (experiment.Plan, error) {
	set, err := e.LoadItems(ctx)
	if err != nil {
		return nil, err
	}
	return &plan{set: set, abstain: e.Abstain, study: e.Study}, nil
}

type plan struct {
	set     *item.Set
	abstain map[string][]string
	study   string
}

func (p *plan) Stages() int                  { return 1 }
func (p *plan) Templates() map[string]string { return nil }
func (p *plan) Items() *item.Set             { return p.set }

// Requests asks every English question, greedy, 16 tokens.
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
				Decoding: engine.Decoding{MaxTokens: 16, Temperature: &zero}}
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
			row.Lenient = row.Correct
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
