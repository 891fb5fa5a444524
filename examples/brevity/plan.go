package brevity

import (
	"fmt"
	"iter"
	"strings"

	"github.com/bhashalab/bhasha/study"
)

// The plan declares its answer schema and draws its figures.
var (
	_ study.AnswerSchemer = (*plan)(nil)
	_ study.Figurer       = (*plan)(nil)
)

// plan is a built brevity study: its items and its options in force.
type plan struct {
	set     *study.Items
	abstain map[string][]string
	study   string
	tokens  int // the answers' token limit
	words   int // the most words of a brief answer
}

func (p *plan) Stages() int                  { return 1 }
func (p *plan) Templates() map[string]string { return nil }
func (p *plan) Items() *study.Items          { return p.set }

// Requests asks every English question as one chat message, greedy, at
// most answer_tokens tokens.
func (p *plan) Requests(exp, model string, stage int, _ study.Lookup) iter.Seq2[study.Request, error] {
	return func(yield func(study.Request, error) bool) {
		if stage != 1 {
			return
		}
		for _, it := range p.set.Items {
			v, ok := it.Variant("eng", study.English)
			if !ok {
				continue
			}
			r := study.Request{Key: study.Key{Experiment: exp, Model: model, Item: it.ID, Language: "eng", Form: string(study.English)},
				Kind: study.Chat, Messages: []study.Message{{Role: "user", Content: v.Question}},
				Decoding: study.Decoding{MaxTokens: p.tokens, Temperature: new(0.0)}}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Extract takes the whole answer, trimmed.
func (p *plan) Extract(r *study.Record) *study.ExtractResult {
	return &study.ExtractResult{Value: strings.TrimSpace(r.Response), Method: study.MethodText}
}

// Score scores every answer: correct is exact match of the answer
// against the golds; brief is its own mark (markBrief), set from the prediction.
func (p *plan) Score(recs []*study.Record) ([]study.Row, error) {
	c := study.NewCommon(p.abstain)
	byID := p.set.Index()
	var out []study.Row
	for _, r := range recs {
		it := byID[r.Fields.Item]
		if it == nil {
			continue
		}
		v, _ := it.Variant("eng", study.English)
		row := c.Row(r)
		row.Gold = v.Answer
		if !row.Failed {
			row.Correct = study.ExactMatch(row.Prediction, v.Golds())
		}
		row.Marks.Set(markBrief, p.brief(&row))
		out = append(out, row)
	}
	return out, nil
}

const exactRule = "exact match of the whole trimmed answer against every gold"

// Words counts an answer's words: its runs of characters between spaces.
func Words(answer string) int { return len(strings.Fields(answer)) }

// wordsOf writes "one word", "3 words".
func wordsOf(n int) string {
	if n == 1 {
		return "one word"
	}
	return study.Counted(n, "word")
}

// markBrief is the bit of Row.Marks (below study.MaxMarks) that holds the
// study's own criterion, brief; the answer schema declares it with
// study.Mark.
const markBrief = 0

// brief is the study's own criterion: an answer that came back with at
// least one word and at most p.words (an empty answer is not brief, it
// is missing). Score stores it as the mark markBrief.
func (p *plan) brief(r *study.Row) bool {
	w := Words(r.Prediction)
	return !r.Failed && w > 0 && w <= p.words
}

// briefRule says what brief decides, for the schema and the scoring table.
func (p *plan) briefRule() string {
	return fmt.Sprintf("the answer came back, not empty, with at most %s (brief_words)", wordsOf(p.words))
}

// AnswerSchema: correct (exact match) and the study's own brief, in
// that order, in answers.csv, the samples sheet and the explorer.
func (p *plan) AnswerSchema() *study.Schema {
	return study.NewSchema(
		study.CorrectField(exactRule),
		study.Mark("brief", p.briefRule(), markBrief))
}

// Tables: accuracy (correct and brief per model) and scoring, then
// answer_lengths.
func (p *plan) Tables(rows []study.Row, opt study.TableOptions) []*study.Table {
	metrics := []study.Metric{study.Correct(), {Name: "brief", Of: func(r *study.Row) bool { return r.Marks.Has(markBrief) }}}
	crit := []study.Criterion{
		{Name: "correct", Rule: exactRule, Normalization: "triviaqa-normalize"},
		{Name: "brief", Rule: p.briefRule(), Normalization: "none (words split at spaces)"},
	}
	return append(study.Standard(p.study, metrics, crit, rows, opt), p.lengths(rows))
}
