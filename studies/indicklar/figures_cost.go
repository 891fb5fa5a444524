package indicklar

import (
	"fmt"
	"math"

	"github.com/bhashalab/bhasha/study"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/report/chart"
)

// TokenizationScatter is IndicKLAR's Table 10 as a scatter per model:
// mean prompt tokens against accuracy per language, the least-squares
// line through them, and r, ρ and their p-values (the tokenization
// table's language "*" row) in the caption.
func TokenizationScatter(tok *study.Table) ([]study.Figure, error) {
	models, by := chart.GroupRows(tok, "model")
	var out []study.Figure
	for _, m := range models {
		var pts []opts.ScatterData
		var r, rho, pr, prho float64 = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		langs, answers := 0, 0
		var xs, ys []float64
		for _, row := range by[m] {
			if tok.Str(row, "language") == "*" {
				r, pr, rho, prho = tok.Num(row, "pearson_r"), tok.Num(row, "pearson_p"), tok.Num(row, "spearman_rho"), tok.Num(row, "spearman_p")
				continue
			}
			langs++
			x, y := tok.Num(row, "mean_prompt_tokens"), tok.Num(row, "accuracy")
			pts = append(pts, opts.ScatterData{Name: tok.Str(row, "language"), Value: []any{chart.Round(x), chart.Round(y)}})
			if !math.IsNaN(x) && !math.IsNaN(y) {
				xs, ys = append(xs, x), append(ys, y)
				answers += int(tok.Num(row, "n"))
			}
		}
		sc := scatter(m+" — prompt length against accuracy", "mean prompt tokens")
		sc.AddSeries("languages", pts, named())
		fitNote := "; no least-squares fit (it needs two languages of different prompt lengths)"
		if fit, ok := chart.LeastSquares(xs, ys); ok {
			fitNote = ", the dashed line the least-squares fit"
			fitted := charts.NewLine()
			fitted.AddSeries(fmt.Sprintf("least-squares fit (slope %s per token)", chart.Num(fit.B)),
				[]opts.LineData{{Value: []any{chart.Round(fit.X0), chart.Round(fit.A + fit.B*fit.X0)}}, {Value: []any{chart.Round(fit.X1), chart.Round(fit.A + fit.B*fit.X1)}}},
				charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}), charts.WithLineStyleOpts(opts.LineStyle{Type: "dashed", Color: "#555"}))
			sc.Overlap(fitted)
		}
		o, err := chart.OptionWith(sc, chart.PlaceLabels)
		if err != nil {
			return nil, err
		}
		out = append(out, figureOf(tok, "tokenization_"+m, "IndicKLAR Table 10 / A.9",
			fmt.Sprintf("%s: %s, each point labelled with its language where the label fits (its tooltip names it)%s; Pearson r = %s (p %s), Spearman ρ = %s (p %s)", m, study.Counted(langs, "language"), fitNote, chart.Num(r), chart.Num(pr), chart.Num(rho), chart.Num(prho)),
			"n = "+study.Counted(answers, "answer"), o))
	}
	return out, nil
}

// LatencyScatter is IndicKLAR's Table 6 as a trade-off per model: each
// strategy's mean end-to-end latency against its accuracy, from latency.
func LatencyScatter(lat *study.Table) ([]study.Figure, error) {
	models, by := chart.GroupRows(lat, "model")
	var out []study.Figure
	for _, m := range models {
		sc := scatter(m+" — accuracy against latency", "mean ms per answer")
		n := 0
		for _, r := range by[m] {
			if math.IsNaN(lat.Num(r, "mean_ms")) {
				continue
			}
			sc.AddSeries(lat.Str(r, "strategy"), []opts.ScatterData{{Name: lat.Str(r, "strategy"), Value: []any{chart.Round(lat.Num(r, "mean_ms")), chart.Round(lat.Num(r, "accuracy"))}, SymbolSize: 12}}, named())
			n += int(lat.Num(r, "n"))
		}
		o, err := chart.OptionWith(sc, chart.PlaceLabels)
		if err != nil {
			return nil, err
		}
		out = append(out, figureOf(lat, "latency_"+m, "IndicKLAR Table 6 / A.2",
			m+": each strategy's accuracy against its client-observed end-to-end latency under the run's concurrency, each point labelled with its strategy where the label fits (its tooltip names it)", "n = "+study.Counted(n, "answer"), o))
	}
	return out, nil
}

// scatter is a scatter of accuracy against x, points named by their labels (named).
func scatter(title, x string) *charts.Scatter {
	sc := charts.NewScatter()
	sc.SetGlobalOptions(append(chart.Globals(title), charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Name: x, Type: "value", NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(opts.YAxis{Name: "accuracy", Min: 0, Max: 1}))...)
	return sc
}

// named labels a scatter's points with their names, right of them.
func named() charts.SeriesOpts {
	return charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "right"})
}
