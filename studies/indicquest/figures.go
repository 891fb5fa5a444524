package indicquest

import (
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/study"
)

// The plan draws its figures (experiment.Figurer).
var _ study.Figurer = (*plan)(nil)

// Figures draws the paper's figures from the plan's tables (Figures).
func (p *plan) Figures(ts []*study.Table) ([]study.Figure, error) { return Figures(ts) }

// Figures are every IndicQuest figure the tables ts allow, in report
// order: accuracy by protocol from accuracy, the models' ranks by
// protocol from domains (with protocol_rankings' τ), accuracy against
// model size (native questions) from model_families, and accuracy by
// domain and language from domains. A table absent from ts draws
// nothing, and so does an empty one but domains' ranks. The figures are
// not finished (chart.Finish).
func Figures(ts []*study.Table) ([]study.Figure, error) {
	by := chart.ByName(ts)
	return chart.Draw(by, []chart.Maker{
		{Table: "accuracy", Empty: true, Make: ProtocolBars},
		{Table: "domains", Empty: true, Make: func(t *study.Table) ([]study.Figure, error) { return ProtocolRanks(t, by["protocol_rankings"]) }},
		{Table: "model_families", Make: func(t *study.Table) ([]study.Figure, error) {
			return chart.FamilyScaling(t, string(study.Native), "IndicKLAR Fig. 5")
		}},
		{Table: "domains", Make: DomainHeatmap},
	})
}
