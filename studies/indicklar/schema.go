package indicklar

import (
	"github.com/bhashalab/bhasha/analysis/score"
)

// AnswerSchema is the study's answer schema (AnswerSchema).
func (p *plan) AnswerSchema() *score.Schema { return AnswerSchema() }

// AnswerSchema declares what an IndicKLAR answer carries beside the
// common fields: the fact's relation, the criterion in force (correct),
// the verdicts under each JSON extraction rule (correct is one of them:
// scoring.lenient_json chooses) and the transliteration-aware match.
func AnswerSchema() *score.Schema {
	return score.NewSchema(
		score.Text("relation", "the fact's relation (KLAR)", func(r *score.Row) string { return r.Domain }),
		score.CorrectField("the authors' prefix match (baselines) or candidate matcher (the other strategies), JSON read by the rule in force"),
		score.Mark("authors_json", "the verdict with JSON read by the authors' json.loads rule (extract.Authors)", MarkAuthorsJSON),
		score.Mark("lenient_json", "the verdict with JSON read leniently (fenced, embedded, single-quoted, truncated: extract.Field)", MarkLenientJSON),
		score.Mark("translit", "correct, or the romanized answer matches the gold (translit.Match)", MarkTranslit),
	)
}
