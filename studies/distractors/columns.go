package distractors

import (
	"github.com/bhashalab/bhasha/study"
)

// key declares a key column of the distractor study's tables: strategy
// and condition with what they hold in this study, the others as
// tables.Key.
func key(name string) study.Column {
	switch name {
	case "strategy":
		return study.TextColumn(name, "prompting strategy (IndicKLAR), answer format (distractor study: qa, mc1), or empty")
	case "condition":
		return study.TextColumn(name, "distractor condition (clean, es, hi, zh, *_long, paragraph), or empty")
	}
	return study.KeyColumn(name)
}
