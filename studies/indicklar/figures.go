package indicklar

import (
	"encoding/json"
	"slices"

	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/study"
)

// Figures draws the paper's figures from the plan's tables (Figures).
func (p *plan) Figures(ts []*study.Table) ([]study.Figure, error) { return Figures(ts) }

// Figures are every IndicKLAR figure the tables ts allow, in report
// order. A table absent from ts, or empty, draws nothing, except an
// empty clc_matrix, flip_points or strategy_tests, drawn as a figure
// saying why. The figures are not finished (chart.Finish).
func Figures(ts []*study.Table) ([]study.Figure, error) {
	by := chart.ByName(ts)
	return chart.Draw(by, []chart.Maker{
		{Table: "accuracy", Make: FormAccuracy},
		{Table: "accuracy", Make: Romanization},
		{Table: "clc_matrix", Empty: true, Make: CLCHeatmap},
		{Table: "flip_points", Empty: true, Make: FlipSankey},
		{Table: "relations", Make: RelationsRadar},
		{Table: "tokenization", Make: TokenizationScatter},
		{Table: "latency", Make: LatencyScatter},
		{Table: "model_families", Make: func(t *study.Table) ([]study.Figure, error) { // accuracy, then CLC, against size
			acc, err := chart.FamilyScaling(t, string(study.Native), "IndicKLAR Fig. 5")
			if err != nil || by["clc_overall"] == nil {
				return acc, err
			}
			clc, err := FamilyCLC(t, by["clc_overall"])
			return append(acc, clc...), err
		}},
		{Table: "strategy_tests", Empty: true, Make: StrategyGains},
	})
}

// appendNew appends v to s unless s holds it.
func appendNew[T comparable](s []T, v T) []T {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// figureOf is study.FigureOf with stated, the figure's n, closing the caption.
func figureOf(t *study.Table, name, mirrors, caption, stated string, o json.RawMessage) study.Figure {
	return study.FigureOf(t, name, mirrors, caption+" ("+stated+")", stated, o)
}
