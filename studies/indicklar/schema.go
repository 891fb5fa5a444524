package indicklar

import (
	"github.com/bhashalab/bhasha/study"
)

// AnswerSchema is the study's answer schema (AnswerSchema).
func (p *plan) AnswerSchema() *study.Schema { return AnswerSchema() }

// AnswerSchema declares what an IndicKLAR answer carries beside the
// common fields: the fact's relation, the criterion in force (correct),
// the verdicts under each JSON extraction rule (correct is one of them:
// scoring.lenient_json chooses) and the transliteration-aware match.
func AnswerSchema() *study.Schema {
	return study.NewSchema(
		study.TextField("relation", "the fact's relation (KLAR)", func(r *study.Row) string { return r.Domain }),
		study.CorrectField("the authors' prefix match (baselines) or candidate matcher (the other strategies), JSON read by the rule in force"),
		study.Mark("authors_json", "the verdict with JSON read by the authors' json.loads rule (extract.Authors)", MarkAuthorsJSON),
		study.Mark("lenient_json", "the verdict with JSON read leniently (fenced, embedded, single-quoted, truncated: extract.Field)", MarkLenientJSON),
		study.Mark("translit", "correct, or the romanized answer matches the gold (translit.Match)", MarkTranslit),
	)
}

// The study's marks: bits of score.Row.Marks, set by Score and read by
// the answer schema (which names them: answers.csv's columns), the
// alternatives and the tables; a fixture or another package builds and
// reads rows with them.
const (
	// MarkAuthorsJSON: the verdict with JSON read by the authors'
	// json.loads rule (extract.Authors).
	MarkAuthorsJSON = iota
	// MarkLenientJSON: the verdict with JSON read leniently (extract.Field).
	MarkLenientJSON
	// MarkTranslit: correct, or the romanized answer matches the gold.
	MarkTranslit
)
