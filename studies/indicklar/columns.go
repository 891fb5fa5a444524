package indicklar

import (
	"github.com/bhashalab/bhasha/analysis/tables"
)

// key declares a key column of IndicKLAR's tables: form and strategy
// with what they hold in this study, the others as tables.Key.
func key(name string) tables.Column {
	switch name {
	case "form":
		return tables.Text(name, "question form: native, code-mixed or english")
	case "strategy":
		return tables.Text(name, "prompting strategy (IndicKLAR), answer format (distractor study: qa, mc1), or empty")
	}
	return tables.Key(name)
}
