package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// estimate is a rate with its 95% interval and n.
type estimate struct {
	rate, lo, hi float64
	n            int
}

// Bar geometry shared by the bars and their whiskers: ECharts lays a
// category's m bars over (1 − barCategoryGap) of the band, each bar w
// wide with barGap·w between bars, so m·w + (m−1)·gap·w = 0.8.
const (
	barCategoryGap = 0.2
	barGap         = 0.3
)

// barCentre is the x offset, in bands from the category's centre, of bar
// j of m.
func barCentre(j, m int) float64 {
	used := 1 - barCategoryGap
	w := used / (float64(m) + barGap*float64(m-1))
	return -used/2 + w/2 + float64(j)*w*(1+barGap)
}

// intervalBars is a clustered bar chart with a 95% interval whisker on
// every bar: categories on the x axis, one bar series per name in order,
// values[s][c] the estimate of series s in category c (NaN rate: no bar).
// The whiskers are line segments (with caps) on a hidden value axis
// aligned with the category bands, silent and kept out of the tooltip;
// each shares its bars' name, so the legend hides both together.
func intervalBars(title, yName string, cats, names []string, values [][]estimate) (json.RawMessage, error) {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(globals(title),
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
			if math.IsNaN(e.rate) {
				data[c] = opts.BarData{Value: "-"}
				continue
			}
			data[c] = opts.BarData{Name: cats[c], Value: round(e.rate)}
			if math.IsNaN(e.lo) || math.IsNaN(e.hi) {
				continue
			}
			x := float64(c) + barCentre(s, len(names))
			pt := func(x, y float64) opts.LineData { return opts.LineData{Value: []any{round(x), round(y)}} }
			seg = append(seg, pt(x, e.lo), pt(x, e.hi), gap, pt(x-capWidth, e.lo), pt(x+capWidth, e.lo), gap, pt(x-capWidth, e.hi), pt(x+capWidth, e.hi), gap)
		}
		bar.AddSeries(name, data, charts.WithBarChartOpts(opts.BarChart{BarGap: "30%", BarCategoryGap: "20%"}))
		if seg == nil {
			continue
		}
		line.AddSeries(name, seg, charts.WithLineChartOpts(opts.LineChart{XAxisIndex: 1, ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: "#222", Width: 1}))
	}
	bar.Overlap(line)
	return optionWith(bar, func(o map[string]any) {
		for _, s := range o["series"].([]any) {
			if m := s.(map[string]any); m["type"] == "line" {
				m["silent"], m["tooltip"] = true, map[string]any{"show": false}
			}
		}
	})
}

// optionWith marshals a chart's option after edit changes what go-echarts
// has no field for (a series' silent flag).
func optionWith(c chart, edit func(map[string]any)) (json.RawMessage, error) {
	raw, err := optionOf(c)
	if err != nil {
		return nil, err
	}
	var o map[string]any
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	edit(o)
	return json.Marshal(o)
}

// Romanization is IndicKLAR's Fig. 7 (§5.6, the romanization ablation):
// per model and language, accuracy on the native questions as they are
// (the baseline with candidates, or without when the run has only that),
// fully romanized (ablation-romanized) and on the dataset's code-mixed
// questions, and, where the run has it, romanized by the model first
// (2step-translit); bars with 95% Wilson whiskers, from the accuracy
// table. A model with neither romanized variant has no figure.
func Romanization(acc *tables.Table) ([]Figure, error) {
	type key struct{ model, strategy, form string }
	est := map[key]map[string]estimate{}
	var models []string
	for _, r := range acc.Rows {
		if acc.Str(r, "metric") != "correct" {
			continue
		}
		k := key{acc.Str(r, "model"), acc.Str(r, "strategy"), acc.Str(r, "form")}
		if est[k] == nil {
			est[k] = map[string]estimate{}
		}
		est[k][acc.Str(r, "language")] = estimateOf(acc, r)
		if !slices.Contains(models, k.model) {
			models = append(models, k.model)
		}
	}
	sort.Strings(models)
	var out []Figure
	for _, m := range models {
		rom, first := est[key{m, "ablation-romanized", "native"}], est[key{m, "2step-translit", "native"}]
		if rom == nil && first == nil {
			continue
		}
		base := "baseline-cands"
		if est[key{m, base, "native"}] == nil {
			base = "baseline"
		}
		bars := []struct {
			name string
			k    key
		}{
			{"native (" + base + ")", key{m, base, "native"}},
			{"romanized (ablation-romanized)", key{m, "ablation-romanized", "native"}},
			{"code-mixed (" + base + ")", key{m, base, "code-mixed"}},
			{"romanized by the model first (2step-translit)", key{m, "2step-translit", "native"}},
		}
		var langs []string
		for _, e := range []map[string]estimate{rom, first} {
			for l := range e {
				if !slices.Contains(langs, l) {
					langs = append(langs, l)
				}
			}
		}
		sort.Strings(langs)
		var names []string
		var values [][]estimate
		n := 0
		for _, b := range bars {
			e := est[b.k]
			if e == nil {
				continue
			}
			row := make([]estimate, len(langs))
			for i, l := range langs {
				row[i] = lookup(e, l)
				n += row[i].n
			}
			names, values = append(names, b.name), append(values, row)
		}
		o, err := intervalBars(m+" — native, romanized and code-mixed", "accuracy", langs, names, values)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "romanization_" + m, Mirrors: "IndicKLAR Fig. 7",
			Caption: simulated(acc, fmt.Sprintf("%s: accuracy on the native questions as they are, fully romanized, and in their code-mixed form (and romanized by the model first, where run), per language; whiskers the 95%% Wilson interval (n = %s)", m, counted(n, "answer"))),
			Option:  o})
	}
	return out, nil
}
