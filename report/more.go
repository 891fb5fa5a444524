package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"gonum.org/v1/gonum/stat"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// groupRows groups a table's rows by one column, in first-seen order.
func groupRows(t *tables.Table, col string) ([]string, map[string][][]any) {
	var keys []string
	by := map[string][][]any{}
	for _, r := range t.Rows {
		k := t.Str(r, col)
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	return keys, by
}

// Decomposition is the distractor study's §5.3 per model as a waterfall
// over the conditions: each bar climbs from the clean rate (or the
// adjusted rate, when lower) by the real-error rise to the paper's
// adjusted hallucination rate, then by the right-but-wrong-script answers
// the semantic judge recovers to the raw proxy; the broader rule's
// adjusted rate is a marker; from script_decomposition.
func Decomposition(dec *tables.Table, order []string) ([]Figure, error) {
	models, by := groupRows(dec, "model")
	var out []Figure
	for _, m := range models {
		rows := by[m]
		sort.SliceStable(rows, func(i, j int) bool {
			return slices.Index(order, dec.Str(rows[i], "condition")) < slices.Index(order, dec.Str(rows[j], "condition"))
		})
		clean := math.NaN()
		for _, r := range rows {
			if dec.Str(r, "condition") == "clean" {
				clean = dec.Num(r, "halluc_rate")
			}
		}
		var conds []string
		var base, real, script []opts.BarData
		var broad []opts.ScatterData
		n := 0
		for _, r := range rows {
			raw, adj := dec.Num(r, "halluc_rate"), dec.Num(r, "adj_halluc")
			c := clean
			if math.IsNaN(c) || math.IsNaN(adj) {
				c = adj
			}
			lo := math.Min(c, adj)
			conds = append(conds, dec.Str(r, "condition"))
			base = append(base, opts.BarData{Value: round(lo)})
			real = append(real, opts.BarData{Value: round(adj - lo)})
			script = append(script, opts.BarData{Value: round(math.Max(0, raw-adj))})
			broad = append(broad, opts.ScatterData{Value: round(dec.Num(r, "broad_adj_halluc")), Symbol: "diamond", SymbolSize: 12})
			n += int(dec.Num(r, "n"))
		}
		bar := charts.NewBar()
		bar.SetGlobalOptions(append(globals(m+" — hallucination proxy: clean → adjusted → raw"),
			charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
			charts.WithYAxisOpts(opts.YAxis{Name: "rate", Min: 0, Max: 1}))...)
		bar.SetXAxis(conds)
		stack := charts.WithBarChartOpts(opts.BarChart{Stack: "waterfall"})
		bar.AddSeries("clean rate (or adjusted, when lower)", base, stack, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#BBBBBB"}))
		bar.AddSeries("real-error rise (to the paper's adjusted rate)", real, stack, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#D55E00"}))
		bar.AddSeries("right answer, wrong script (recovered by the judge)", script, stack, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#56B4E9"}))
		sc := charts.NewScatter()
		sc.AddSeries("adjusted, broader rule", broad, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#000000"}))
		bar.Overlap(sc)
		o, err := optionOf(bar)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "decomposition_" + m, Mirrors: "distractor study §5.3 / Tables 3–4",
			Caption: simulated(dec, fmt.Sprintf("%s: per condition, the hallucination proxy from the clean rate up to the paper's adjusted rate (real errors) and on to the raw rate (right answers in the wrong script, recovered by the semantic judge); the diamond is Bhasha's broader rule (n = %s)", m, counted(n, "answer"))),
			Option:  o})
	}
	return out, nil
}

// TokenizationScatter is IndicKLAR's Table 10 as a scatter per model:
// mean prompt tokens against accuracy per language, the least-squares
// line through them, and r, ρ and their p-values (the tokenization
// table's language "*" row) in the caption.
func TokenizationScatter(tok *tables.Table) ([]Figure, error) {
	models, by := groupRows(tok, "model")
	var out []Figure
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
			pts = append(pts, opts.ScatterData{Name: tok.Str(row, "language"), Value: []any{round(x), round(y)}})
			if !math.IsNaN(x) && !math.IsNaN(y) {
				xs, ys = append(xs, x), append(ys, y)
				answers += int(tok.Num(row, "n"))
			}
		}
		sc := charts.NewScatter()
		sc.SetGlobalOptions(append(globals(m+" — prompt length against accuracy"),
			charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
			charts.WithXAxisOpts(opts.XAxis{Name: "mean prompt tokens", Type: "value", NameLocation: "middle", NameGap: 28}),
			charts.WithYAxisOpts(opts.YAxis{Name: "accuracy", Min: 0, Max: 1}))...)
		sc.AddSeries("languages", pts, charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "right"}))
		if fit, ok := leastSquares(xs, ys); ok {
			fitted := charts.NewLine()
			fitted.AddSeries(fmt.Sprintf("least-squares fit (slope %s per token)", num(fit.b)),
				[]opts.LineData{{Value: []any{round(fit.x0), round(fit.a + fit.b*fit.x0)}}, {Value: []any{round(fit.x1), round(fit.a + fit.b*fit.x1)}}},
				charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}), charts.WithLineStyleOpts(opts.LineStyle{Type: "dashed", Color: "#555"}))
			sc.Overlap(fitted)
		}
		o, err := optionOf(sc)
		if err == nil {
			o, err = editOption(o, placeLabels)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "tokenization_" + m, Mirrors: "IndicKLAR Table 10 / A.9",
			Caption: simulated(tok, fmt.Sprintf("%s: %s, each point labelled with its language where the label fits (its tooltip names it), the dashed line the least-squares fit; Pearson r = %s (p %s), Spearman ρ = %s (p %s) (n = %s)", m, counted(langs, "language"), num(r), num(pr), num(rho), num(prho), counted(answers, "answer"))),
			Option:  o})
	}
	return out, nil
}

// FlipSankey is IndicKLAR's Fig. 8 / Table 15 per model: of the items the
// baseline gets wrong (pooled over languages), how many TinT-CM gets
// right, and of the rest how many TinT-EN gets right, from flip_points.
// Every flow carries its count, 0 included (a flow without a value
// would leave ECharts unable to place the flows after it), and every
// node's label says its count. A table with no rows, or a model without
// a baseline-wrong item, is a figure saying why.
func FlipSankey(fp *tables.Table) ([]Figure, error) {
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
		case "tint-cm":
			by[m].from1 += int(fp.Num(r, "from"))
			by[m].flip1 += int(fp.Num(r, "flipped"))
		case "tint-en":
			by[m].from2 += int(fp.Num(r, "from"))
			by[m].flip2 += int(fp.Num(r, "flipped"))
		}
	}
	if len(models) == 0 {
		why := fp.Note
		if len(fp.Rows) > 0 {
			why = "no TinT-CM answers: the flow follows the baseline's wrong items through TinT-CM, then TinT-EN (the input path, native → code-mixed → English, is in the table flip_points)"
		}
		f, err := emptyFigure(fp, "flip_points", mirrors, "flip points: baseline → TinT-CM → TinT-EN", why, "baseline-wrong item")
		return []Figure{f}, err
	}
	var out []Figure
	for _, m := range models {
		a := by[m]
		if a.from1 == 0 {
			f, err := emptyFigure(fp, "flip_points_"+m, mirrors, m+" — flip points",
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
			charts.WithColorsOpts(opts.Colors(palette())), charts.WithAnimation(false))
		sk.AddSeries("flip points", nil, nil)
		o, err := optionOf(sk)
		if err != nil {
			return nil, err
		}
		zero := 0
		o, err = editOption(o, func(o map[string]any) {
			o["legend"] = map[string]any{"show": false}
			s := seriesMaps(o)[0]
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
		caption := fmt.Sprintf("%s: of %s wrong at the baseline, %d right under TinT-CM; of the %d still wrong, %d right under TinT-EN", m, counted(a.from1, "item"), a.flip1, a.from2, a.flip2)
		if zero > 0 {
			caption += fmt.Sprintf("; %s of 0 items drawn as a hairline, the count in the node's label", counted(zero, "flow"))
		}
		out = append(out, Figure{Name: "flip_points_" + m, Mirrors: mirrors,
			Caption: simulated(fp, caption+fmt.Sprintf(" (n = %s)", counted(a.from1, "baseline-wrong item"))),
			Option:  o})
	}
	return out, nil
}

// RelationsRadar is IndicKLAR's Fig. 6 per model: accuracy per relation
// (pooled over languages and forms) for each strategy, from relations.
func RelationsRadar(rel *tables.Table) ([]Figure, error) {
	type key struct{ model, strategy, relation string }
	k, n := map[key]int{}, map[key]int{}
	models, rels := []string{}, []string{}
	strategies := map[string][]string{}
	for _, r := range rel.Rows {
		x := key{rel.Str(r, "model"), rel.Str(r, "strategy"), rel.Str(r, "relation")}
		if !slices.Contains(models, x.model) {
			models = append(models, x.model)
		}
		if !slices.Contains(rels, x.relation) {
			rels = append(rels, x.relation)
		}
		if !slices.Contains(strategies[x.model], x.strategy) {
			strategies[x.model] = append(strategies[x.model], x.strategy)
		}
		k[x] += int(rel.Num(r, "k"))
		n[x] += int(rel.Num(r, "n"))
	}
	sort.Strings(rels)
	if len(rels) < 3 { // a radar needs three axes
		return nil, nil
	}
	var out []Figure
	for _, m := range models {
		ind := make([]*opts.Indicator, len(rels))
		for i, r := range rels {
			ind[i] = &opts.Indicator{Name: r, Max: 1}
		}
		rd := charts.NewRadar()
		rd.SetGlobalOptions(charts.WithTitleOpts(opts.Title{Title: m + " — accuracy per relation"}), charts.WithLegendOpts(opts.Legend{Top: "bottom"}),
			charts.WithRadarComponentOpts(opts.RadarComponent{Indicator: ind}), charts.WithColorsOpts(opts.Colors(palette())), charts.WithAnimation(false))
		total := 0
		for _, s := range strategies[m] {
			vals := make([]any, len(rels))
			for i, r := range rels {
				x := key{m, s, r}
				vals[i] = round(float64(k[x]) / math.Max(1, float64(n[x])))
				total += n[x]
			}
			rd.AddSeries(s, []opts.RadarData{{Name: s, Value: vals}})
		}
		o, err := optionOf(rd)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "relations_" + m, Mirrors: "IndicKLAR Fig. 6",
			Caption: simulated(rel, fmt.Sprintf("%s: accuracy per relation and strategy, pooled over languages and forms (n = %s)", m, counted(total, "answer"))),
			Option:  o})
	}
	return out, nil
}

// DomainHeatmap is IndicQuest's domain × language accuracy per model and
// protocol, from domains (the pooled rows left out).
func DomainHeatmap(dom *tables.Table) ([]Figure, error) {
	type key struct{ model, protocol string }
	cells := map[key][]hcell{}
	langs, domains := map[key][]string{}, map[key][]string{}
	ns := map[key]int{}
	var keys []key
	for _, r := range dom.Rows {
		m, l, d := dom.Str(r, "model"), dom.Str(r, "language"), dom.Str(r, "domain")
		if m == "*" || l == "*" || d == "*" {
			continue
		}
		k := key{m, dom.Str(r, "protocol")}
		if cells[k] == nil {
			keys = append(keys, k)
		}
		if !slices.Contains(langs[k], l) {
			langs[k] = append(langs[k], l)
		}
		if !slices.Contains(domains[k], d) {
			domains[k] = append(domains[k], d)
		}
		cells[k] = append(cells[k], hcell{x: l, y: d, v: dom.Num(r, "rate")})
		ns[k] += int(dom.Num(r, "n"))
	}
	var out []Figure
	for _, k := range keys {
		o, err := heatmap(fmt.Sprintf("%s — accuracy by domain and language (%s)", k.model, k.protocol), "accuracy", langs[k], domains[k], cells[k], 0, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "domains_" + k.model + "_" + k.protocol, Mirrors: "IndicQuest Tables 4 and 7",
			Caption: simulated(dom, fmt.Sprintf("%s, %s: accuracy per domain and language, each cell labelled with its value, the colour scale from 0 to 1 (n = %s)", k.model, k.protocol, counted(ns[k], "answer"))),
			Option:  o})
	}
	return out, nil
}

// num formats a statistic for a caption ("n/a" when undefined).
func num(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.3g", v)
}

// LatencyScatter is IndicKLAR's Table 6 as a trade-off per model: each
// strategy's mean end-to-end latency against its accuracy, from latency.
func LatencyScatter(lat *tables.Table) ([]Figure, error) {
	models, by := groupRows(lat, "model")
	var out []Figure
	for _, m := range models {
		sc := charts.NewScatter()
		sc.SetGlobalOptions(append(globals(m+" — accuracy against latency"),
			charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
			charts.WithXAxisOpts(opts.XAxis{Name: "mean ms per answer", Type: "value", NameLocation: "middle", NameGap: 28}),
			charts.WithYAxisOpts(opts.YAxis{Name: "accuracy", Min: 0, Max: 1}))...)
		n := 0
		for _, r := range by[m] {
			if math.IsNaN(lat.Num(r, "mean_ms")) {
				continue
			}
			sc.AddSeries(lat.Str(r, "strategy"), []opts.ScatterData{{Name: lat.Str(r, "strategy"), Value: []any{round(lat.Num(r, "mean_ms")), round(lat.Num(r, "accuracy"))}, SymbolSize: 12}},
				charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "right"}))
			n += int(lat.Num(r, "n"))
		}
		o, err := optionOf(sc)
		if err == nil {
			o, err = editOption(o, placeLabels)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "latency_" + m, Mirrors: "IndicKLAR Table 6 / A.2",
			Caption: simulated(lat, fmt.Sprintf("%s: each strategy's accuracy against its client-observed end-to-end latency under the run's concurrency, each point labelled with its strategy where the label fits (its tooltip names it) (n = %s)", m, counted(n, "answer"))),
			Option:  o})
	}
	return out, nil
}

// StrategyGains is IndicKLAR's Fig. 3 per model: each strategy's
// accuracy gain over the reference per language (bars), each bar marked
// *, ** or *** by its Holm-adjusted McNemar p (tables.Stars) and the
// significant ones counted in the caption, from strategy_tests (native
// questions). A gain of 0 is a sliver at 0 (barMinHeight), and the
// caption counts them; a table with no rows, or a model with no native
// comparison, is a figure saying why.
func StrategyGains(st *tables.Table) ([]Figure, error) {
	const mirrors = "IndicKLAR Fig. 3"
	if len(st.Rows) == 0 {
		f, err := emptyFigure(st, "strategy_gains", mirrors, "accuracy gain over the reference", st.Note, "paired answer")
		return []Figure{f}, err
	}
	models, by := groupRows(st, "model")
	var out []Figure
	for _, m := range models {
		var langs, strategies, forms []string
		gain := map[[2]string]float64{}
		holm := map[[2]string]float64{}
		sig, n, ref, zeros := 0, 0, "", 0
		for _, r := range by[m] {
			if f := st.Str(r, "form"); f != "native" {
				if !slices.Contains(forms, f) {
					forms = append(forms, f)
				}
				continue
			}
			if st.Num(r, "diff") == 0 {
				zeros++
			}
			l, s := st.Str(r, "language"), st.Str(r, "strategy")
			if !slices.Contains(langs, l) {
				langs = append(langs, l)
			}
			if !slices.Contains(strategies, s) {
				strategies = append(strategies, s)
			}
			gain[[2]string{s, l}] = st.Num(r, "diff")
			holm[[2]string{s, l}] = st.Num(r, "p_holm")
			if st.Num(r, "p_holm") < 0.05 {
				sig++
			}
			n += int(st.Num(r, "pairs"))
			ref = st.Str(r, "reference")
		}
		if len(langs) == 0 {
			f, err := emptyFigure(st, "strategy_gains_"+m, mirrors, m+" — accuracy gain over the reference",
				"no gain on native questions: the strategies were compared with the reference on "+strings.Join(forms, " and ")+" questions only", "paired answer")
			if err != nil {
				return nil, err
			}
			out = append(out, f)
			continue
		}
		sort.Strings(langs)
		bar := charts.NewBar()
		bar.SetGlobalOptions(append(globals(fmt.Sprintf("%s — accuracy gain over %s", m, ref)), charts.WithYAxisOpts(opts.YAxis{Name: "gain"}))...)
		bar.SetXAxis(langs)
		for _, s := range strategies {
			data := make([]opts.BarData, len(langs))
			for i, l := range langs {
				if v, ok := gain[[2]string{s, l}]; ok {
					data[i] = opts.BarData{Value: round(v)}
					if stars := tables.Stars(holm[[2]string{s, l}]); stars != "" { // the papers' marks on the bar itself
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
		o, err := optionOf(bar)
		if err == nil {
			o, err = editOption(o, func(o map[string]any) {
				for _, s := range seriesMaps(o) {
					s["barMinHeight"] = 2 // a gain of 0 is a sliver, not nothing
				}
				if zeros == len(gain) { // a plot of slivers says what they are
					o["graphic"] = []any{map[string]any{"type": "text", "left": "center", "top": "middle",
						"style": map[string]any{"text": fmt.Sprintf("every gain is 0: each strategy as accurate as %s", ref), "fontSize": 16, "fill": "#444"}}}
				}
			})
		}
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
		out = append(out, Figure{Name: "strategy_gains_" + m, Mirrors: mirrors,
			Caption: simulated(st, fmt.Sprintf("%s: each strategy's accuracy gain over %s on the same native items per language; %d of the differences significant, marked * p < 0.05, ** p < 0.01, *** p < 0.001%s (McNemar, Holm-adjusted; n = %s)", m, ref, sig, zero, counted(n, "paired answer"))),
			Option:  o})
	}
	return out, nil
}

// FamilyScaling is IndicKLAR's Fig. 5: accuracy against model size, one
// line per model family and strategy (pooled over languages; native
// form), from model_families.
func FamilyScaling(mf *tables.Table) ([]Figure, error) {
	type key struct{ family, strategy string }
	pts := map[key][]opts.LineData{}
	var keys []key
	n := 0
	for _, r := range mf.Rows {
		if mf.Str(r, "form") != "native" || math.IsNaN(mf.Num(r, "size_b")) {
			continue
		}
		k := key{mf.Str(r, "family"), mf.Str(r, "strategy")}
		if pts[k] == nil {
			keys = append(keys, k)
		}
		pts[k] = append(pts[k], opts.LineData{Name: mf.Str(r, "model"), Value: []any{mf.Num(r, "size_b"), round(mf.Num(r, "rate"))}})
		n += int(mf.Num(r, "n"))
	}
	if len(keys) == 0 {
		return nil, nil
	}
	line := sizeLines("accuracy against model size per family", "accuracy")
	for _, k := range keys {
		line.AddSeries(k.family+" "+k.strategy, pts[k], charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "top"}))
	}
	o, err := optionOf(line)
	if err == nil {
		o, err = editOption(o, placeLabels)
	}
	if err != nil {
		return nil, err
	}
	return []Figure{{Name: "family_scaling", Mirrors: "IndicKLAR Fig. 5",
		Caption: simulated(mf, fmt.Sprintf("native accuracy against model size, one line per family and strategy, each point labelled with its model where the label fits, pooled over languages (n = %s)", counted(n, "answer"))),
		Option:  o}}, nil
}

// ProtocolBars is IndicQuest's three protocols per model: the judge's,
// exact substring's and word overlap's accuracy per language (bars), with
// the lexical shortfall in the caption, from the accuracy table.
func ProtocolBars(acc *tables.Table) ([]Figure, error) {
	type key struct{ model, lang string }
	rate := map[key]map[string]float64{}
	var models, langs []string
	n := map[string]int{}
	for _, r := range acc.Rows {
		m := acc.Str(r, "metric")
		if m != "correct" && m != "substring" && m != "overlap" {
			continue
		}
		k := key{acc.Str(r, "model"), acc.Str(r, "language")}
		if rate[k] == nil {
			rate[k] = map[string]float64{}
		}
		rate[k][m] = acc.Num(r, "rate")
		if m == "correct" {
			n[k.model] += int(acc.Num(r, "n"))
		}
		if !slices.Contains(models, k.model) {
			models = append(models, k.model)
		}
		if !slices.Contains(langs, k.lang) {
			langs = append(langs, k.lang)
		}
	}
	sort.Strings(langs)
	var out []Figure
	for _, m := range models {
		bar := charts.NewBar()
		bar.SetGlobalOptions(append(globals(m+" — accuracy by protocol"), charts.WithYAxisOpts(opts.YAxis{Name: "accuracy", Min: 0, Max: 1}))...)
		bar.SetXAxis(langs)
		short, cells := 0.0, 0
		for _, p := range []struct{ metric, label string }{{"correct", "LLM judge"}, {"substring", "exact substring"}, {"overlap", "word overlap"}} {
			data := make([]opts.BarData, len(langs))
			for i, l := range langs {
				v, ok := rate[key{m, l}][p.metric]
				if !ok {
					data[i] = opts.BarData{Value: "-"}
					continue
				}
				data[i] = opts.BarData{Value: round(v)}
				if p.metric == "substring" {
					short += rate[key{m, l}]["correct"] - v
					cells++
				}
			}
			bar.AddSeries(p.label, data)
		}
		mean := math.NaN()
		if cells > 0 {
			mean = short / float64(cells)
		}
		o, err := optionOf(bar)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "protocols_" + m, Mirrors: "IndicQuest §5 (lexical shortfall)",
			Caption: simulated(acc, fmt.Sprintf("%s: the LLM judge's, exact substring's and word overlap's accuracy per language; mean shortfall of exact substring %s (n = %s)", m, num(mean), counted(n[m], "answer"))),
			Option:  o})
	}
	return out, nil
}

// SwitchRates is the distractor study's Table 4: the share of answers
// with a Devanagari or CJK character per condition, one bar per model,
// from the accuracy table.
func SwitchRates(acc *tables.Table, order []string) ([]Figure, error) {
	rate := map[string]map[string]float64{}
	var models []string
	n := 0
	for _, r := range acc.Rows {
		if acc.Str(r, "metric") != "distractor_switch" || acc.Str(r, "strategy") != "qa" {
			continue
		}
		m := acc.Str(r, "model")
		if rate[m] == nil {
			rate[m] = map[string]float64{}
			models = append(models, m)
		}
		rate[m][acc.Str(r, "condition")] = acc.Num(r, "rate")
		n += int(acc.Num(r, "n"))
	}
	if len(models) == 0 {
		return nil, nil
	}
	var conds []string
	for _, c := range order {
		if _, ok := rate[models[0]][c]; ok {
			conds = append(conds, c)
		}
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(globals("answers in Devanagari or CJK script, per condition"), charts.WithYAxisOpts(opts.YAxis{Name: "share", Min: 0, Max: 1}))...)
	bar.SetXAxis(conds)
	for _, m := range models {
		data := make([]opts.BarData, len(conds))
		for i, c := range conds {
			data[i] = opts.BarData{Value: round(rate[m][c])}
		}
		bar.AddSeries(m, data)
	}
	o, err := optionOf(bar)
	if err != nil {
		return nil, err
	}
	return []Figure{{Name: "switch_rates", Mirrors: "distractor study Table 4",
		Caption: simulated(acc, fmt.Sprintf("share of answers with a Devanagari or CJK character, per model and condition (n = %s)", counted(n, "answer"))),
		Option:  o}}, nil
}

// line is a fitted y = a + b·x drawn from x0 to x1.
type line struct{ a, b, x0, x1 float64 }

// leastSquares fits y = a + b·x by ordinary least squares (gonum's
// stat.LinearRegression) over the x range of the points; ok is false with
// fewer than two distinct x.
func leastSquares(xs, ys []float64) (line, bool) {
	if len(xs) < 2 || slices.Min(xs) == slices.Max(xs) {
		return line{}, false
	}
	a, b := stat.LinearRegression(xs, ys, nil, false)
	return line{a, b, slices.Min(xs), slices.Max(xs)}, true
}
