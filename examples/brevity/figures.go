package brevity

import (
	"fmt"
	"slices"

	"github.com/bhashalab/bhasha/study"
)

// FigureName is the name of the study's figure.
const FigureName = "brief_by_model"

// Figures draws brief_by_model from answer_lengths (experiment.Figurer):
// the share of brief answers per model as bars with their 95% Wilson
// intervals, its n (the answers counted) and SIMULATED carried as the
// figure's fields; a figure saying why when the table has no rows, and
// none when the run has no answer_lengths.
func (p *plan) Figures(ts []*study.Table) ([]study.Figure, error) {
	i := slices.IndexFunc(ts, func(x *study.Table) bool { return x.Name == LengthsTable })
	if i < 0 {
		return nil, nil
	}
	t := ts[i]
	title := fmt.Sprintf("answers within %s, per model", wordsOf(p.words))
	if len(t.Rows) == 0 {
		f, err := study.EmptyFigure(t, FigureName, "", title, "", "answer")
		return []study.Figure{f}, err
	}
	var models []string
	estimates := make([]study.Estimate, 0, len(t.Rows))
	total := 0
	for _, r := range t.Rows {
		e := study.EstimateOf(t, r)
		models = append(models, t.Str(r, "model"))
		estimates = append(estimates, e)
		total += e.N
	}
	o, err := study.IntervalBars(title, "share brief", models, []string{"brief"}, [][]study.Estimate{estimates})
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", FigureName, err)
	}
	n := "n = " + study.Counted(total, "answer")
	return []study.Figure{study.FigureOf(t, FigureName, "",
		fmt.Sprintf("share of the answers within %s (brief), per model, with 95%% Wilson intervals (%s)", wordsOf(p.words), n), n, o)}, nil
}
