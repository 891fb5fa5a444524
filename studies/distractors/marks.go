package distractors

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
