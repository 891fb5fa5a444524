package indicklar

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
)

// StrategyGains is IndicKLAR's Fig. 3 per model, from strategy_tests:
// each strategy's accuracy gain over the reference per language on the
// native questions, each bar marked by tables.Stars of its Holm-adjusted
// McNemar p; a gain of 0 is a sliver at 0. A table with no rows, or a
// model with no native comparison, is a figure saying why.
func StrategyGains(st *study.Table) ([]study.Figure, error) {
	const mirrors = "IndicKLAR Fig. 3"
	if len(st.Rows) == 0 {
		f, err := study.EmptyFigure(st, "strategy_gains", mirrors, "accuracy gain over the reference", st.Note, "paired answer")
		return []study.Figure{f}, err
	}
	models, by := chart.GroupRows(st, "model")
	var out []study.Figure
	for _, m := range models {
		var langs, strategies, forms []string
		gain := map[[2]string][2]float64{} // strategy, language → gain, Holm-adjusted p
		sig, n, ref, zeros := 0, 0, "", 0
		for _, r := range by[m] {
			if f := st.Str(r, "form"); f != string(study.Native) {
				forms = appendNew(forms, f)
				continue
			}
			g := [2]float64{st.Num(r, "diff"), st.Num(r, "p_holm")}
			l, s := st.Str(r, "language"), st.Str(r, "strategy")
			langs, strategies = appendNew(langs, l), appendNew(strategies, s)
			gain[[2]string{s, l}] = g
			if g[0] == 0 {
				zeros++
			}
			if g[1] < 0.05 {
				sig++
			}
			n += int(st.Num(r, "pairs"))
			ref = st.Str(r, "reference")
		}
		if len(langs) == 0 {
			f, err := study.EmptyFigure(st, "strategy_gains_"+m, mirrors, m+" — accuracy gain over the reference",
				"no gain on native questions: the strategies were compared with the reference on "+strings.Join(forms, " and ")+" questions only", "paired answer")
			if err != nil {
				return nil, err
			}
			out = append(out, f)
			continue
		}
		sort.Strings(langs)
		bar := charts.NewBar()
		bar.SetGlobalOptions(append(chart.Globals(fmt.Sprintf("%s — accuracy gain over %s", m, ref)), charts.WithYAxisOpts(opts.YAxis{Name: "gain"}))...)
		bar.SetXAxis(langs)
		for _, s := range strategies {
			data := make([]opts.BarData, len(langs))
			for i, l := range langs {
				if g, ok := gain[[2]string{s, l}]; ok {
					v := g[0]
					data[i] = opts.BarData{Value: chart.Round(v)}
					if stars := tables.Stars(g[1]); stars != "" { // on the bar itself: Table 10's thresholds (the paper's Fig. 3 has no stars), on Bhasha's Holm-adjusted p
						pos := "top"
						if v < 0 {
							pos = "bottom"
						}
						data[i].Label = &opts.Label{Show: opts.Bool(true), Position: pos, Formatter: stars, FontSize: 16, FontWeight: "bold"}
					}
				} else {
					data[i] = opts.BarData{Value: "-"}
				}
			}
			bar.AddSeries(s, data)
		}
		o, err := chart.OptionWith(bar, func(o map[string]any) {
			for _, s := range chart.SeriesMaps(o) {
				s["barMinHeight"] = 2 // a gain of 0 is a sliver, not nothing
			}
			if zeros == len(gain) { // a plot of slivers says what they are
				o["graphic"] = []any{map[string]any{"type": "text", "left": "center", "top": "middle",
					"style": map[string]any{"text": fmt.Sprintf("every gain is 0: each strategy as accurate as %s", ref), "fontSize": 16, "fill": "#444"}}}
			}
		})
		if err != nil {
			return nil, err
		}
		zero := ""
		switch total := len(gain); {
		case zeros == total:
			zero = fmt.Sprintf("; every gain is 0 (each strategy as accurate as %s on the same items), each drawn as a sliver at 0", ref)
		case zeros > 0:
			zero = fmt.Sprintf("; %d of the %d gains are 0, drawn as slivers at 0", zeros, total)
		}
		stated := "n = " + study.Counted(n, "paired answer")
		out = append(out, study.FigureOf(st, "strategy_gains_"+m, mirrors,
			fmt.Sprintf("%s: each strategy's accuracy gain over %s on the same %s items per language; %d of the differences significant, marked * p < 0.05, ** p < 0.01, *** p < 0.001%s (McNemar, Holm-adjusted; %s)", m, ref, study.Native, sig, zero, stated), stated, o))
	}
	return out, nil
}

// RelationsRadar is IndicKLAR's Fig. 6 per model: accuracy per relation
// (pooled over languages and forms) for each strategy, from relations.
func RelationsRadar(rel *study.Table) ([]study.Figure, error) {
	type key struct{ model, strategy, relation string }
	k, n := map[key]int{}, map[key]int{}
	models, rels := []string{}, []string{}
	strategies := map[string][]string{}
	for _, r := range rel.Rows {
		x := key{rel.Str(r, "model"), rel.Str(r, "strategy"), rel.Str(r, "relation")}
		models = appendNew(models, x.model)
		rels = appendNew(rels, x.relation)
		strategies[x.model] = appendNew(strategies[x.model], x.strategy)
		k[x] += int(rel.Num(r, "k"))
		n[x] += int(rel.Num(r, "n"))
	}
	sort.Strings(rels)
	if len(rels) < 3 { // a radar needs three axes
		return nil, nil
	}
	var out []study.Figure
	for _, m := range models {
		ind := make([]*opts.Indicator, len(rels))
		for i, r := range rels {
			ind[i] = &opts.Indicator{Name: r, Max: 1}
		}
		rd := charts.NewRadar()
		rd.SetGlobalOptions(charts.WithTitleOpts(opts.Title{Title: m + " — accuracy per relation"}), charts.WithLegendOpts(opts.Legend{Top: "bottom"}),
			charts.WithRadarComponentOpts(opts.RadarComponent{Indicator: ind}), charts.WithColorsOpts(opts.Colors(chart.Palette())), charts.WithAnimation(false))
		total := 0
		for _, s := range strategies[m] {
			vals := make([]any, len(rels))
			for i, r := range rels {
				x := key{m, s, r}
				vals[i] = chart.Round(float64(k[x]) / math.Max(1, float64(n[x])))
				total += n[x]
			}
			rd.AddSeries(s, []opts.RadarData{{Name: s, Value: vals}})
		}
		o, err := chart.OptionOf(rd)
		if err != nil {
			return nil, err
		}
		out = append(out, figureOf(rel, "relations_"+m, "IndicKLAR Fig. 6",
			m+": accuracy per relation and strategy, pooled over languages and forms", "n = "+study.Counted(total, "answer"), o))
	}
	return out, nil
}

// FlipSankey is IndicKLAR's Fig. 8 per model, from flip_points: of the
// items the baseline gets wrong, how many TinT-CM gets right, and of the
// rest how many TinT-EN gets right; every flow and node carries its
// count, 0 included. A table with no rows, or a model without a
// baseline-wrong item, is a figure saying why.
func FlipSankey(fp *study.Table) ([]study.Figure, error) {
	const mirrors = "IndicKLAR Fig. 8 / Table 15"
	type acc struct{ from1, flip1, from2, flip2 int }
	by := map[string]*acc{}
	var models []string
	for _, r := range fp.Rows {
		if fp.Str(r, "path") != "strategy" {
			continue
		}
		m := fp.Str(r, "model")
		if by[m] == nil {
			by[m] = &acc{}
			models = append(models, m)
		}
		switch fp.Str(r, "step") {
		case string(TinTCM):
			by[m].from1 += int(fp.Num(r, "from"))
			by[m].flip1 += int(fp.Num(r, "flipped"))
		case string(TinTEN):
			by[m].from2 += int(fp.Num(r, "from"))
			by[m].flip2 += int(fp.Num(r, "flipped"))
		}
	}
	if len(models) == 0 {
		why := fp.Note
		if len(fp.Rows) > 0 {
			why = "no TinT-CM answers: the flow follows the baseline's wrong items through TinT-CM, then TinT-EN (the input path, native → code-mixed → English, is in the table flip_points)"
		}
		f, err := study.EmptyFigure(fp, "flip_points", mirrors, "flip points: baseline → TinT-CM → TinT-EN", why, "baseline-wrong item")
		return []study.Figure{f}, err
	}
	var out []study.Figure
	for _, m := range models {
		a := by[m]
		if a.from1 == 0 {
			f, err := study.EmptyFigure(fp, "flip_points_"+m, mirrors, m+" — flip points",
				"no baseline-wrong item: the baseline answered right every native item TinT-CM was asked, so no item can flip", "baseline-wrong item")
			if err != nil {
				return nil, err
			}
			out = append(out, f)
			continue
		}
		type node struct {
			name, colour string
			value        int
		}
		nodes := []node{{"wrong at baseline", "#999999", a.from1}, {"right under TinT-CM", "#009E73", a.flip1}, {"still wrong", "#E69F00", a.from1 - a.flip1},
			{"right under TinT-EN", "#0072B2", a.flip2}, {"wrong throughout", "#D55E00", a.from2 - a.flip2}}
		links := [][3]any{{0, 1, a.flip1}, {0, 2, a.from1 - a.flip1}, {2, 3, a.flip2}, {2, 4, a.from2 - a.flip2}}
		sk := charts.NewSankey()
		sk.SetGlobalOptions(charts.WithTitleOpts(opts.Title{Title: m + " — flip points"}), charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
			charts.WithColorsOpts(opts.Colors(chart.Palette())), charts.WithAnimation(false))
		sk.AddSeries("flip points", nil, nil)
		zero := 0
		o, err := chart.OptionWith(sk, func(o map[string]any) {
			o["legend"] = map[string]any{"show": false}
			s := chart.SeriesMaps(o)[0]
			var data, ls []any
			for _, n := range nodes {
				data = append(data, map[string]any{"name": n.name, "value": n.value, "itemStyle": map[string]any{"color": n.colour}})
			}
			for _, l := range links {
				v := l[2].(int)
				if v == 0 {
					zero++
				}
				ls = append(ls, map[string]any{"source": nodes[l[0].(int)].name, "target": nodes[l[1].(int)].name, "value": v})
			}
			s["data"], s["links"] = data, ls
			s["top"], s["bottom"], s["left"], s["right"] = 80, 20, 20, 200
			s["nodeAlign"] = "left" // each step a column: TinT-CM's flips beside those still wrong
			s["label"] = map[string]any{"show": true, "formatter": "{b}: {c}", "fontSize": 13}
			s["lineStyle"] = map[string]any{"color": "source", "opacity": 0.35}
			s["emphasis"] = map[string]any{"focus": "adjacency"}
		})
		if err != nil {
			return nil, err
		}
		caption := fmt.Sprintf("%s: of %s wrong at the baseline, %d right under TinT-CM; of the %d still wrong, %d right under TinT-EN", m, study.Counted(a.from1, "item"), a.flip1, a.from2, a.flip2)
		if zero > 0 {
			caption += fmt.Sprintf("; %s of 0 items drawn as a hairline, the count in the node's label", study.Counted(zero, "flow"))
		}
		out = append(out, figureOf(fp, "flip_points_"+m, mirrors, caption, "n = "+study.Counted(a.from1, "baseline-wrong item"), o))
	}
	return out, nil
}
