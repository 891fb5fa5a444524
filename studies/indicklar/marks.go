package indicklar

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
