package distractors

import (
	"github.com/bhashalab/bhasha/analysis/tables"
)

// key declares a key column of the distractor study's tables: strategy
// and condition with what they hold in this study, the others as
// tables.Key.
func key(name string) tables.Column {
	switch name {
	case "strategy":
		return tables.Text(name, "prompting strategy (IndicKLAR), answer format (distractor study: qa, mc1), or empty")
	case "condition":
		return tables.Text(name, "distractor condition (clean, es, hi, zh, *_long, paragraph), or empty")
	}
	return tables.Key(name)
}
