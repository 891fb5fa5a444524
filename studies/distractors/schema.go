package distractors

import (
	"github.com/bhashalab/bhasha/study"
)

// AnswerSchema is the study's answer schema (AnswerSchema).
func (p *plan) AnswerSchema() *study.Schema { return AnswerSchema() }

// AnswerSchema declares what a distractor-study answer carries beside the
// common fields: exact match (correct), MC1's argmax (lenient), SQuAD's
// exact match, the transliteration-aware match, the semantic judge's
// verdict, both abstention rules (abstain is the one in force), the
// distractor script switch and, for a multiple-choice item, the option
// the model ranks first.
func AnswerSchema() *study.Schema {
	return study.NewSchema(
		study.CorrectField("TriviaQA exact match against every alias; mc1: the correct choice strictly above every other"),
		study.Mark("lenient", "the lenient criterion (mc1: argmax, ties to the first; equal to correct elsewhere)", MarkLenient),
		study.Mark("squad_em", "exact match under SQuAD v1.1's normalisation", MarkSQuAD),
		study.Mark("translit", "correct, or the answer matches an alias within translit.Match's tolerance", MarkTranslit),
		study.TextField("semantic", "the semantic judge's verdict on a switched answer (CORRECT, WRONG, ABSTAIN, unparsed, or empty when not judged)", func(r *study.Row) string { return r.Verdict }),
		study.Mark("abstain_english", "an English abstention phrase occurs (the default: the paper's \"I don't know\" and \"unknown\" and Bhasha's reading of its related phrases)", MarkAbstainEnglish),
		study.Mark("abstain_multilingual", "an abstention phrase of any of 17 languages occurs (scoring.multilingual_abstain)", MarkAbstainMultilingual),
		study.Mark("abstain_rerun", "\"i don't know\" or \"unknown\" occurs in the answer lower-cased (the rerun's rule; scoring.rerun_abstain)", MarkAbstainRerun),
		study.Mark("distractor_switch", "a Devanagari or CJK character in the answer", MarkDistractorSwitch),
		study.IntField("chosen", "mc1: the option the model ranks first (−1 when not multiple choice)", Chosen),
	)
}

// Chosen is the multiple-choice option a row's model ranks first, −1
// for an answer that is not multiple choice.
func Chosen(r *study.Row) int {
	if d := r.Detail; d != nil && d.ChoiceLogprobs != nil {
		return d.Chosen
	}
	return -1
}

// The study's marks: bits of score.Row.Marks, set by Score and read by
// the answer schema (which names them: answers.csv's columns), the
// metrics, the alternatives, the decomposition and the figures; a fixture
// or another package builds and reads rows with them.
const (
	// MarkLenient: MC1's argmax, ties to the first (equal to Correct for
	// a generated answer).
	MarkLenient = iota
	// MarkSQuAD: exact match under SQuAD v1.1's normalisation.
	MarkSQuAD
	// MarkTranslit: correct, or the answer matches an alias within
	// translit.Match's tolerance.
	MarkTranslit
	// MarkAbstainEnglish: an English abstention phrase occurs (the
	// default: abstain.English, the paper's "I don't know" and "unknown"
	// and Bhasha's reading of its "related phrases").
	MarkAbstainEnglish
	// MarkAbstainMultilingual: an abstention phrase of any of 17
	// languages occurs (scoring.multilingual_abstain).
	MarkAbstainMultilingual
	// MarkDistractorSwitch: a Devanagari or CJK character in the answer
	// (script.DistractorSwitch).
	MarkDistractorSwitch
	// MarkAbstainRerun: the rerun's abstention rule (RerunAbstains)
	// holds (scoring.rerun_abstain).
	MarkAbstainRerun
)

// Verdicts of the study's semantic judge (score.Row.Verdict on a switched
// answer; score.VerdictUnparsed when the judge said none of them).
const (
	SemanticCorrect = "CORRECT"
	SemanticWrong   = "WRONG"
	SemanticAbstain = "ABSTAIN"
)
