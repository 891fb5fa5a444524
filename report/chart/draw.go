package chart

import (
	"fmt"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Maker draws the figures of one table: Table names it, Make draws them,
// and Empty says whether an empty table is drawn too (as a figure saying
// why it has nothing to show, Empty's figure) or skipped.
type Maker struct {
	Table string
	Empty bool
	Make  func(t *tables.Table) ([]Figure, error)
}

// ByName indexes tables by name (the last one of a name wins).
func ByName(ts []*tables.Table) map[string]*tables.Table {
	by := make(map[string]*tables.Table, len(ts))
	for _, t := range ts {
		by[t.Name] = t
	}
	return by
}

// Draw runs the makers in order over the tables by (ByName): a maker
// whose table is absent draws nothing, one whose table is empty draws
// only when it says so (Maker.Empty). The figures come in the makers'
// order; the first error is returned, wrapped with its table's name, and
// no figure with it. The figures are not finished (Finish).
func Draw(by map[string]*tables.Table, makers []Maker) ([]Figure, error) {
	var out []Figure
	for _, m := range makers {
		t := by[m.Table]
		if t == nil || (len(t.Rows) == 0 && !m.Empty) {
			continue
		}
		figs, err := m.Make(t)
		if err != nil {
			return nil, fmt.Errorf("figures of %s: %w", m.Table, err)
		}
		out = append(out, figs...)
	}
	return out, nil
}
