package distractors

import (
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/study"
)

// The plan draws its figures (experiment.Figurer).
var _ study.Figurer = (*plan)(nil)

// Figures draws the paper's figures from the plan's tables (Figures).
func (p *plan) Figures(ts []*study.Table) ([]study.Figure, error) { return Figures(ts) }

// Figures are every figure of the distractor study the tables ts allow,
// in report order: the answers by condition (Tables 2–3) and the script
// switch rates (§5, §5.3) from accuracy, then the hallucination proxy's
// decomposition (§5.3) from script_decomposition; the conditions in the
// study's order (Conditions). A table absent from ts, or empty, draws
// nothing. The figures are not finished (chart.Finish).
func Figures(ts []*study.Table) ([]study.Figure, error) {
	order := conditionNames()
	inOrder := func(f func(*study.Table, []string) ([]study.Figure, error)) func(*study.Table) ([]study.Figure, error) {
		return func(t *study.Table) ([]study.Figure, error) { return f(t, order) }
	}
	return chart.Draw(chart.ByName(ts), []chart.Maker{
		{Table: "accuracy", Make: inOrder(ConditionBars)},
		{Table: "accuracy", Make: inOrder(SwitchRates)},
		{Table: "script_decomposition", Make: inOrder(DecompositionWaterfall)},
	})
}
