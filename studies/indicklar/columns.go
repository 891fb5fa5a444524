package indicklar

import (
	"github.com/bhashalab/bhasha/study"
)

// key declares a key column of IndicKLAR's tables: form and strategy
// with what they hold in this study, the others as tables.Key.
func key(name string) study.Column {
	switch name {
	case "form":
		return study.TextColumn(name, "question form: native, code-mixed or english")
	case "strategy":
		return study.TextColumn(name, "prompting strategy (IndicKLAR), answer format (distractor study: qa, mc1), or empty")
	}
	return study.KeyColumn(name)
}
