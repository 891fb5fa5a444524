package experiment

import (
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
)

// Figurer is implemented by a plan that draws figures from its tables:
// Figures returns them in report order, each with its caption, n and
// SIMULATED as fields (chart.Figure), not yet stamped (chart.Finish does
// that for the report). A table the plan did not make may be absent
// from ts; a figure whose table is empty may be a figure saying why
// (chart.Empty).
type Figurer interface {
	Figures(ts []*tables.Table) ([]chart.Figure, error)
}

// Figures are the plan's figures from its tables ts (Figurer), finished
// for the report (chart.Finish): nil when the plan draws none.
func (e *Experiment) Figures(ts []*tables.Table) ([]chart.Figure, error) {
	f, ok := e.plan.(Figurer)
	if !ok {
		return nil, nil
	}
	figs, err := f.Figures(ts)
	if err != nil {
		return nil, err
	}
	return chart.Finish(figs)
}
