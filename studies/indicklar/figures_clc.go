package indicklar

import (
	"fmt"
	"math"
	"sort"

	"github.com/bhashalab/bhasha/study"

	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/report/chart"
)

// CLCHeatmap is IndicKLAR's Fig. 4, from clc_matrix: one heatmap per
// model, form and strategy, the reference above the diagonal and the
// strategy below, each cell labelled, the diagonal grey. A matrix with no
// rows is one figure saying why (its note).
func CLCHeatmap(mx *study.Table) ([]study.Figure, error) {
	if len(mx.Rows) == 0 {
		f, err := study.EmptyFigure(mx, "clc", "IndicKLAR Fig. 4", "cross-lingual consistency (CLC) between languages", mx.Note, "language pair")
		return []study.Figure{f}, err
	}
	type key struct{ model, form, upper, lower string }
	cells := map[key][]chart.Cell{}
	langs := map[key][]string{}
	var keys []key
	for _, r := range mx.Rows {
		k := key{mx.Str(r, "model"), mx.Str(r, "form"), mx.Str(r, "upper"), mx.Str(r, "lower")}
		if cells[k] == nil {
			keys = append(keys, k)
		}
		row, col := mx.Str(r, "row"), mx.Str(r, "col")
		langs[k] = appendNew(langs[k], row)
		c := chart.Cell{X: col, Y: row, V: mx.Num(r, "jaccard")}
		if row == col {
			c.Neutral = "1"
		}
		cells[k] = append(cells[k], c)
	}
	var out []study.Figure
	for _, k := range keys {
		var off []float64
		for _, c := range cells[k] {
			if c.Neutral == "" {
				off = append(off, c.V)
			}
		}
		lo, hi := chart.HeatRange(off)
		title := fmt.Sprintf("%s — CLC, %s: %s above the diagonal, %s below", k.model, k.form, k.upper, k.lower)
		o, err := chart.Heatmap(title, "jaccard", langs[k], langs[k], cells[k], lo, hi)
		if err != nil {
			return nil, err
		}
		n := len(langs[k])
		out = append(out, figureOf(mx, "clc_"+k.model+"_"+k.form+"_"+k.lower, "IndicKLAR Fig. 4",
			fmt.Sprintf("%s: pairwise cross-lingual consistency (the Jaccard index of the items answered right) over %s, %s above the diagonal, %s below; "+
				"each cell labelled with its value, the colour scale spanning the off-diagonal values (%.2f to %.2f), the diagonal (a language against itself, 1) grey, off the scale",
				k.model, study.Counted(n, k.form+" language"), k.upper, k.lower, lo, hi), "n = "+study.Counted(n*(n-1)/2, "language pair")+" per triangle", o))
	}
	return out, nil
}

// FamilyCLC is the other half of IndicKLAR's Fig. 5: clc_overall's
// native CLC against model size (from model_families), one line per
// family and strategy; a model without a size has no point.
func FamilyCLC(mf, co *study.Table) ([]study.Figure, error) {
	type info struct {
		family string
		size   float64
	}
	models := map[string]info{}
	for _, r := range mf.Rows {
		if s := mf.Num(r, "size_b"); !math.IsNaN(s) {
			models[mf.Str(r, "model")] = info{mf.Str(r, "family"), s}
		}
	}
	type key struct{ family, strategy string }
	type point struct {
		model string
		size  float64
		clc   float64
	}
	pts := map[key][]point{}
	var keys []key
	langs := 0
	for _, r := range co.Rows {
		in, ok := models[co.Str(r, "model")]
		if !ok || co.Str(r, "form") != string(study.Native) || math.IsNaN(co.Num(r, "clc")) {
			continue
		}
		k := key{in.family, co.Str(r, "strategy")}
		if pts[k] == nil {
			keys = append(keys, k)
		}
		pts[k] = append(pts[k], point{co.Str(r, "model"), in.size, co.Num(r, "clc")})
		langs = max(langs, int(co.Num(r, "languages")))
	}
	if len(keys) == 0 {
		return nil, nil
	}
	line := chart.SizeLines("cross-lingual consistency against model size per family", "CLC")
	models2 := 0
	for _, k := range keys {
		ps := pts[k]
		sort.Slice(ps, func(i, j int) bool { return ps[i].size < ps[j].size })
		data := make([]opts.LineData, len(ps))
		for i, p := range ps {
			data[i] = opts.LineData{Name: p.model, Value: []any{p.size, chart.Round(p.clc)}}
		}
		models2 += len(ps)
		line.AddSeries(k.family+" "+k.strategy, data)
	}
	o, err := chart.OptionOf(line)
	if err != nil {
		return nil, err
	}
	return []study.Figure{figureOf(co, "family_clc", "IndicKLAR Fig. 5",
		fmt.Sprintf("%s cross-lingual consistency (mean CLC(L) over up to %s) against model size, one line per family and strategy", study.Native, study.Counted(langs, "language")),
		"n = "+study.Counted(models2, "model × strategy point"), o)}, nil
}
