package chart

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// Cell is one heatmap cell: its column X, its row Y and its value V (NaN:
// no value); a cell with a Neutral label (a matrix's diagonal, "1") is
// drawn grey with that label, outside the colour scale.
type Cell struct {
	X, Y    string
	V       float64
	Neutral string
}

// Grey for heatmap cells outside the colour scale.
const (
	heatNeutral = "#bdbdbd"
	heatMissing = "#eeeeee"
)

// Heatmap draws cells over xs × ys, the first of ys at the top (as a
// table reads, and as a paper's matrix sets its upper triangle above the
// diagonal); every cell labelled with its value (2 decimals); the colour
// scale from lo to hi at the right of the plot, named name, both ends
// written by its handles (which drag them); cells without a value
// ("n/a") and neutral cells grey, outside the scale.
func Heatmap(title, name string, xs, ys []string, cells []Cell, lo, hi float64) (json.RawMessage, error) {
	hm := charts.NewHeatMap()
	hm.SetGlobalOptions(append(Globals(title),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: xs}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: ys}))...)
	hm.SetXAxis(xs)
	hm.AddSeries(name, nil)
	size := 14
	switch k := max(len(xs), len(ys)); {
	case k > 14:
		size = 10
	case k > 8:
		size = 12
	}
	var onScale, off []any
	for _, c := range cells {
		switch {
		case c.Neutral != "":
			off = append(off, map[string]any{"value": []any{c.X, c.Y, 0}, "label": map[string]any{"formatter": c.Neutral}, "itemStyle": map[string]any{"color": heatNeutral}})
		case math.IsNaN(c.V): // a value ECharts draws (no number draws no cell), its label "n/a"
			off = append(off, map[string]any{"value": []any{c.X, c.Y, 0}, "label": map[string]any{"formatter": "n/a"}, "itemStyle": map[string]any{"color": heatMissing}})
		default:
			onScale = append(onScale, map[string]any{"value": []any{c.X, c.Y, math.Round(c.V*1000) / 1000}, "label": map[string]any{"formatter": fmt.Sprintf("%.2f", c.V)}})
		}
	}
	return OptionWith(hm, func(m map[string]any) {
		m["legend"] = map[string]any{"show": false}
		m["grid"] = map[string]any{"top": 80, "left": 20, "right": 120, "bottom": 30, "containLabel": true}
		if ya, ok := m["yAxis"].([]any); ok && len(ya) > 0 {
			ya[0].(map[string]any)["inverse"] = true
		}
		m["visualMap"] = []any{map[string]any{"type": "continuous", "seriesIndex": 0, "min": lo, "max": hi, "precision": 2,
			// calculable: its handles write the ends (and drag them); the text names the scale
			"calculable": true, "text": []any{name, ""}, "textGap": 14, "orient": "vertical", "right": 10, "top": "middle",
			"itemHeight": 200, "inRange": map[string]any{"color": []any{"#f7fbff", "#6baed6", "#08306b"}}}}
		label := map[string]any{"show": true, "fontSize": size}
		series := []any{map[string]any{"type": "heatmap", "name": name, "data": onScale, "label": label,
			"emphasis": map[string]any{"itemStyle": map[string]any{"borderColor": "#000", "borderWidth": 1}}}}
		if len(off) > 0 {
			series = append(series, map[string]any{"type": "heatmap", "name": "outside the colour scale", "data": off,
				"label": map[string]any{"show": true, "fontSize": size, "color": "#333"}, "tooltip": map[string]any{"show": false}})
		}
		m["series"] = series
	})
}

// HeatRange is the colour scale over values: from the least to the
// greatest (to 2 decimals, outward), at least 0.1 wide, within [0, 1];
// [0, 1] when none is a number.
func HeatRange(values []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	lo, hi = math.Floor(lo*100+1e-9)/100, math.Ceil(hi*100-1e-9)/100
	if hi-lo < 0.1 {
		mid := (lo + hi) / 2
		lo = math.Max(0, math.Round((mid-0.05)*100)/100)
		hi = math.Min(1, lo+0.1)
		lo = math.Max(0, hi-0.1)
	}
	return lo, hi
}
