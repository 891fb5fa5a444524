package report

import (
	"math"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// The report renders the figures it is handed; these tests hand it the
// built-in studies' figures (their own tests check how each is drawn),
// finished as a run's report has them.

func table(name string, header []string, rows ...[]any) *tables.Table {
	return &tables.Table{Name: name, Header: header, Rows: rows, Simulated: true}
}

// figuresOf is figures as a run's report has them (chart.Finish).
func figuresOf(figs []Figure, err error) ([]Figure, error) {
	if err != nil {
		return nil, err
	}
	return chart.Finish(figs)
}

// flipTable is a flip_points table whose TinT-EN step flips nothing: its
// flow of 0 items comes before the largest one.
func flipTable() *tables.Table {
	return table("flip_points", []string{"model", "language", "path", "step", "from", "flipped"},
		[]any{"m", "hin", "strategy", "tint-cm", 7, 1}, []any{"m", "hin", "strategy", "tint-en", 6, 0},
		[]any{"m", "hin", "input", "code-mixed", 7, 1}, []any{"m", "hin", "input", "english", 6, 1})
}

// clcTable is a clc_matrix over ben, hin, tam: the reference above the
// diagonal (row < col), the strategy below, one pair not computed.
func clcTable() *tables.Table {
	ls := []string{"ben", "hin", "tam"}
	v := [][]float64{{1, 0.25, 0.5}, {0.2, 1, 0.6}, {0, -1, 1}} // -1: NaN
	mx := table("clc_matrix", []string{"model", "form", "upper", "lower", "row", "col", "jaccard"})
	for r, rl := range ls {
		for c, cl := range ls {
			x := v[r][c]
			var cell any = x
			if x < 0 {
				cell = math.NaN()
			}
			mx.Rows = append(mx.Rows, []any{"m", "native", "baseline", "tint-cm", rl, cl, cell})
		}
	}
	return mx
}

// oneLanguageRows are an IndicKLAR run of one model on Hindi alone (and
// English): the baseline only.
func oneLanguageRows() []score.Row {
	var rows []score.Row
	for i, it := range []string{"a", "b", "c", "d"} {
		rows = append(rows, score.Row{Key: engine.Key{Model: "m", Language: "hin", Form: "native", Strategy: "baseline", Item: it}, Correct: i == 0},
			score.Row{Key: engine.Key{Model: "m", Language: "eng", Form: "english", Strategy: "baseline", Item: it}, Correct: true})
	}
	return rows
}
