package chart

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// SizeLines is a scaling figure's frame: a line chart over model size
// (billions of parameters, log scale) with a 0–1 y axis named yName.
func SizeLines(title, yName string) *charts.Line {
	line := charts.NewLine()
	line.SetGlobalOptions(append(Globals(title),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Name: "parameters (billions)", Type: "log", NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(opts.YAxis{Name: yName, Min: 0, Max: 1}))...)
	return line
}

// FamilyScaling is accuracy against model size, one line per model
// family and strategy, pooled over languages, from the rows of
// model_families (the columns family, model, size_b, strategy, form, n,
// rate) whose form is form (the caption says so: "native accuracy …");
// mirrors names the paper figure it mirrors. A model without a size has
// no point; a table without a point of that form has no figure.
func FamilyScaling(mf *tables.Table, form, mirrors string) ([]Figure, error) {
	type key struct{ family, strategy string }
	pts := map[key][]opts.LineData{}
	var keys []key
	n := 0
	for _, r := range mf.Rows {
		if mf.Str(r, "form") != form || math.IsNaN(mf.Num(r, "size_b")) {
			continue
		}
		k := key{mf.Str(r, "family"), mf.Str(r, "strategy")}
		if pts[k] == nil {
			keys = append(keys, k)
		}
		pts[k] = append(pts[k], opts.LineData{Name: mf.Str(r, "model"), Value: []any{mf.Num(r, "size_b"), Round(mf.Num(r, "rate"))}})
		n += int(mf.Num(r, "n"))
	}
	if len(keys) == 0 {
		return nil, nil
	}
	line := SizeLines("accuracy against model size per family", "accuracy")
	for _, k := range keys {
		line.AddSeries(k.family+" "+k.strategy, pts[k], charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "top"}))
	}
	o, err := OptionWith(line, PlaceLabels)
	if err != nil {
		return nil, fmt.Errorf("figure family_scaling: %w", err)
	}
	ns := "n = " + Counted(n, "answer")
	return []Figure{Of(mf, "family_scaling", mirrors,
		fmt.Sprintf("%s accuracy against model size, one line per family and strategy, each point labelled with its model where the label fits, pooled over languages (%s)", form, ns), ns, o)}, nil
}
