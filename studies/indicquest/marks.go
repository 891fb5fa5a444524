package indicquest

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
