package indicquest

import (
	"github.com/bhashalab/bhasha/study"
)

// AnswerSchema is the study's answer schema (AnswerSchema).
func (p *plan) AnswerSchema() *study.Schema { return AnswerSchema() }

// AnswerSchema declares what an IndicQuest answer carries beside the
// common fields: its domain, the judge's verdict (correct, and the
// verdict itself), the lexical criteria under the normalisation in force
// and under the other one, and the transliteration-aware match.
func AnswerSchema() *study.Schema {
	return study.NewSchema(
		study.TextField("domain", "IndicQuest domain", func(r *study.Row) string { return r.Domain }),
		study.CorrectField("the LLM judge's verdict is correct"),
		study.TextField("judge", "the IndicQuest judge's verdict: correct, incorrect, unparsed, or empty when missing", func(r *study.Row) string { return r.Verdict }),
		study.Mark("substring", "the gold occurs as a contiguous substring of the answer (the normalisation in force)", MarkSubstring),
		study.Mark("overlap", "every gold word occurs among the answer's words (the normalisation in force)", MarkOverlap),
		study.Mark("substring_alt", "substring under the other normalisation (scoring.normalized_lexical switches them)", MarkSubstringAlt),
		study.Mark("overlap_alt", "overlap under the other normalisation (scoring.normalized_lexical switches them)", MarkOverlapAlt),
		study.Mark("translit", "the answer matches the gold within translit.Match's tolerance", MarkTranslit),
	)
}

// The study's marks: bits of score.Row.Marks, set by Score and read by
// the answer schema (which names them: answers.csv's columns), the
// metrics, the alternatives and the tables; a fixture or another package
// builds and reads rows with them.
const (
	// MarkSubstring: the gold occurs as a contiguous substring of the
	// answer, under the normalisation in force.
	MarkSubstring = iota
	// MarkOverlap: every gold word occurs among the answer's words, under
	// the normalisation in force.
	MarkOverlap
	// MarkSubstringAlt and MarkOverlapAlt: the same under the other
	// normalisation (scoring.normalized_lexical switches them).
	MarkSubstringAlt
	MarkOverlapAlt
	// MarkTranslit: the answer matches the gold within translit.Match's
	// tolerance.
	MarkTranslit
)
