package chart

import (
	"encoding/json"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Estimate is a rate with its 95% interval and n.
type Estimate struct {
	Rate, Lo, Hi float64
	N            int
}

// EstimateOf reads a rate row's rate, interval and n (the columns rate,
// ci_lo, ci_hi and n, as the accuracy table has them).
func EstimateOf(t *tables.Table, r []any) Estimate {
	return Estimate{Rate: t.Num(r, "rate"), Lo: t.Num(r, "ci_lo"), Hi: t.Num(r, "ci_hi"), N: int(t.Num(r, "n"))}
}

// Lookup is m[k], or a missing estimate (NaN) when absent.
func Lookup(m map[string]Estimate, k string) Estimate {
	if e, ok := m[k]; ok {
		return e
	}
	return Estimate{Rate: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
}

// ECharts' gaps, shared by the bars and their whiskers.
const (
	barCategoryGap = 0.2
	barGap         = 0.3
)

// barCentre is bar j of m's offset from its category's centre, in bands.
func barCentre(j, m int) float64 {
	used := 1 - barCategoryGap
	w := used / (float64(m) + barGap*float64(m-1))
	return -used/2 + w/2 + float64(j)*w*(1+barGap)
}

// IntervalBars is a clustered bar chart with a 95% interval whisker on
// every bar: categories on the x axis, one bar series per name in order,
// values[s][c] the estimate of series s in category c (NaN rate: no bar).
// The whiskers are line segments (with caps) on a hidden value axis
// aligned with the category bands, silent and kept out of the tooltip;
// each shares its bars' name, so the legend hides both together.
func IntervalBars(title, yName string, cats, names []string, values [][]Estimate) (json.RawMessage, error) {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(Globals(title),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithYAxisOpts(opts.YAxis{Name: yName, Min: 0, Max: 1, AxisLine: &opts.AxisLine{OnZero: opts.Bool(false)}}))...)
	bar.SetXAxis(cats)
	bar.ExtendXAxis(opts.XAxis{Type: "value", Show: opts.Bool(false), Min: -0.5, Max: float64(len(cats)) - 0.5})
	line := charts.NewLine()
	capWidth := 0.25 * (1 - barCategoryGap) / (float64(len(names)) + barGap*float64(len(names)-1))
	for s, name := range names {
		data := make([]opts.BarData, len(cats))
		var seg []opts.LineData
		gap := opts.LineData{Value: "-"}
		for c := range cats {
			e := values[s][c]
			if math.IsNaN(e.Rate) {
				data[c] = opts.BarData{Value: "-"}
				continue
			}
			data[c] = opts.BarData{Name: cats[c], Value: Round(e.Rate)}
			if math.IsNaN(e.Lo) || math.IsNaN(e.Hi) {
				continue
			}
			x := float64(c) + barCentre(s, len(names))
			pt := func(x, y float64) opts.LineData { return opts.LineData{Value: []any{Round(x), Round(y)}} }
			seg = append(seg, pt(x, e.Lo), pt(x, e.Hi), gap, pt(x-capWidth, e.Lo), pt(x+capWidth, e.Lo), gap, pt(x-capWidth, e.Hi), pt(x+capWidth, e.Hi), gap)
		}
		bar.AddSeries(name, data, charts.WithBarChartOpts(opts.BarChart{BarGap: "30%", BarCategoryGap: "20%"}))
		if seg == nil {
			continue
		}
		line.AddSeries(name, seg, charts.WithLineChartOpts(opts.LineChart{XAxisIndex: 1, ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: "#222", Width: 1}))
	}
	bar.Overlap(line)
	return OptionWith(bar, func(o map[string]any) {
		for _, s := range o["series"].([]any) {
			if m := s.(map[string]any); m["type"] == "line" {
				m["silent"], m["tooltip"] = true, map[string]any{"show": false}
			}
		}
	})
}
