package indicquest

import (
	"github.com/bhashalab/bhasha/analysis/score"
)

// AnswerSchema is the study's answer schema (AnswerSchema).
func (p *plan) AnswerSchema() *score.Schema { return AnswerSchema() }

// AnswerSchema declares what an IndicQuest answer carries beside the
// common fields: its domain, the judge's verdict (correct, and the
// verdict itself), the lexical criteria under the normalisation in force
// and under the other one, and the transliteration-aware match.
func AnswerSchema() *score.Schema {
	return score.NewSchema(
		score.Text("domain", "IndicQuest domain", func(r *score.Row) string { return r.Domain }),
		score.CorrectField("the LLM judge's verdict is correct"),
		score.Text("judge", "the IndicQuest judge's verdict: correct, incorrect, unparsed, or empty when missing", func(r *score.Row) string { return r.Verdict }),
		score.Mark("substring", "the gold occurs as a contiguous substring of the answer (the normalisation in force)", MarkSubstring),
		score.Mark("overlap", "every gold word occurs among the answer's words (the normalisation in force)", MarkOverlap),
		score.Mark("substring_alt", "substring under the other normalisation (scoring.normalized_lexical switches them)", MarkSubstringAlt),
		score.Mark("overlap_alt", "overlap under the other normalisation (scoring.normalized_lexical switches them)", MarkOverlapAlt),
		score.Mark("translit", "the answer matches the gold within translit.Match's tolerance", MarkTranslit),
	)
}
