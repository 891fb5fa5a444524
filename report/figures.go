// Package report renders a run's typed tables for people: ECharts figures
// (go-echarts options, drawn by ECharts 5.6.0 inlined from the binary, no
// network) and a self-contained HTML report. Every figure states its n and,
// when the answers came from the simulator, that it is SIMULATED; model
// output and dataset text are escaped wherever they appear.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Figure is one chart: its name, the caption a reader sees (with n, and
// SIMULATED when it is), and the ECharts option as JSON.
type Figure struct {
	Name    string
	Caption string
	Mirrors string // the paper figure or table it mirrors ("" when Bhasha's own)
	Option  json.RawMessage
}

// palette is Okabe and Ito's colour-blind-safe set.
func palette() []string {
	return []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"}
}

// chart is what every go-echarts chart offers for marshalling.
type chart interface {
	Validate()
	JSON() map[string]interface{}
}

// optionOf is a chart's option as JSON, the series past the palette's
// colours told apart by a pattern or a symbol (distinguish).
func optionOf(c chart) (json.RawMessage, error) {
	c.Validate()
	o, err := json.Marshal(c.JSON())
	if err != nil {
		return nil, err
	}
	return distinguish(o)
}

func simulated(t *tables.Table, caption string) string {
	if t.Simulated {
		return caption + " — SIMULATED models"
	}
	return caption
}

func globals(title string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithTitleOpts(opts.Title{Title: title}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Top: "bottom"}),
		charts.WithColorsOpts(opts.Colors(palette())),
		charts.WithAnimation(false),
	}
}

// FormAccuracy is IndicKLAR's Fig. 2: per model, the baseline's accuracy
// on English, native and code-mixed questions per language (bars with
// 95% Wilson whiskers), from the accuracy table (metric correct).
func FormAccuracy(acc *tables.Table) ([]Figure, error) {
	type key struct{ model, strategy string }
	rates := map[key]map[string]map[string]estimate{} // → form → language → rate
	ns := map[key]int{}
	for _, r := range acc.Rows {
		s := acc.Str(r, "strategy")
		if acc.Str(r, "metric") != "correct" || (s != "baseline" && s != "baseline-cands") {
			continue
		}
		k := key{acc.Str(r, "model"), s}
		if rates[k] == nil {
			rates[k] = map[string]map[string]estimate{}
		}
		f := acc.Str(r, "form")
		if rates[k][f] == nil {
			rates[k][f] = map[string]estimate{}
		}
		rates[k][f][acc.Str(r, "language")] = estimateOf(acc, r)
		ns[k] += int(acc.Num(r, "n"))
	}
	var keys []key
	for k := range rates {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].model+keys[i].strategy < keys[j].model+keys[j].strategy })
	var out []Figure
	for _, k := range keys {
		var langs []string
		for f, m := range rates[k] {
			if f == "english" {
				continue
			}
			for l := range m {
				if !slices.Contains(langs, l) {
					langs = append(langs, l)
				}
			}
		}
		sort.Strings(langs)
		var names []string
		var values [][]estimate
		for _, f := range []string{"english", "native", "code-mixed"} {
			m, ok := rates[k][f]
			if !ok {
				continue
			}
			row := make([]estimate, len(langs))
			for i, l := range langs {
				if f == "english" { // one English score, the same for every language
					l = "eng"
				}
				row[i] = lookup(m, l)
			}
			names, values = append(names, f), append(values, row)
		}
		o, err := intervalBars(fmt.Sprintf("%s — %s accuracy by form", k.model, k.strategy), "accuracy", langs, names, values)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "form_accuracy_" + k.model + "_" + k.strategy, Mirrors: "IndicKLAR Fig. 2",
			Caption: simulated(acc, fmt.Sprintf("%s, %s: accuracy on %s questions per language, whiskers the 95%% Wilson interval (n = %s)", k.model, k.strategy, formList(names), counted(ns[k], "answer"))),
			Option:  o})
	}
	return out, nil
}

// estimateOf reads an accuracy row's rate, interval and n.
func estimateOf(t *tables.Table, r []any) estimate {
	return estimate{rate: t.Num(r, "rate"), lo: t.Num(r, "ci_lo"), hi: t.Num(r, "ci_hi"), n: int(t.Num(r, "n"))}
}

// lookup is m[k], or a missing estimate (NaN) when absent.
func lookup(m map[string]estimate, k string) estimate {
	if e, ok := m[k]; ok {
		return e
	}
	return estimate{rate: math.NaN(), lo: math.NaN(), hi: math.NaN()}
}

// CLCHeatmap is IndicKLAR's Fig. 4: one heatmap per model, form and
// strategy from clc_matrix, the reference above the diagonal (row <
// col) and the strategy below it, the first language at the top; each
// cell labelled with its Jaccard index, the colour scale spanning the
// off-diagonal cells and the diagonal (1) grey, off the scale. A matrix
// with no rows is one figure saying why (the table's note).
func CLCHeatmap(mx *tables.Table) ([]Figure, error) {
	if len(mx.Rows) == 0 {
		f, err := emptyFigure(mx, "clc", "IndicKLAR Fig. 4", "cross-lingual consistency (CLC) between languages", mx.Note, "language pair")
		return []Figure{f}, err
	}
	type key struct{ model, form, upper, lower string }
	cells := map[key][]hcell{}
	langs := map[key][]string{}
	var keys []key
	for _, r := range mx.Rows {
		k := key{mx.Str(r, "model"), mx.Str(r, "form"), mx.Str(r, "upper"), mx.Str(r, "lower")}
		if cells[k] == nil {
			keys = append(keys, k)
		}
		row, col := mx.Str(r, "row"), mx.Str(r, "col")
		if !slices.Contains(langs[k], row) {
			langs[k] = append(langs[k], row)
		}
		c := hcell{x: col, y: row, v: mx.Num(r, "jaccard")}
		if row == col {
			c.neutral = "1"
		}
		cells[k] = append(cells[k], c)
	}
	var out []Figure
	for _, k := range keys {
		var off []float64
		for _, c := range cells[k] {
			if c.neutral == "" {
				off = append(off, c.v)
			}
		}
		lo, hi := heatRange(off)
		title := fmt.Sprintf("%s — CLC, %s: %s above the diagonal, %s below", k.model, k.form, k.upper, k.lower)
		o, err := heatmap(title, "jaccard", langs[k], langs[k], cells[k], lo, hi)
		if err != nil {
			return nil, err
		}
		n := len(langs[k])
		out = append(out, Figure{Name: "clc_" + k.model + "_" + k.form + "_" + k.lower, Mirrors: "IndicKLAR Fig. 4",
			Caption: simulated(mx, fmt.Sprintf("%s: pairwise cross-lingual consistency (the Jaccard index of the items answered right) over %s, %s above the diagonal, %s below; "+
				"each cell labelled with its value, the colour scale spanning the off-diagonal values (%.2f to %.2f), the diagonal (a language against itself, 1) grey, off the scale (n = %s per triangle)",
				k.model, counted(n, k.form+" language"), k.upper, k.lower, lo, hi, counted(n*(n-1)/2, "language pair"))),
			Option: o})
	}
	return out, nil
}

// ConditionBars is the distractor study's Tables 2–3 as stacked bars: per
// model, exact match, abstention and the hallucination proxy per condition
// (TriviaQA answers), from the accuracy table.
func ConditionBars(acc *tables.Table, order []string) ([]Figure, error) {
	type key struct{ model, cond string }
	rate := map[key]map[string]float64{}
	n := map[key]int{}
	var models []string
	for _, r := range acc.Rows {
		if acc.Str(r, "strategy") != "qa" {
			continue
		}
		m := acc.Str(r, "metric")
		if m != "correct" && m != "abstain" && m != "hallucination" {
			continue
		}
		k := key{acc.Str(r, "model"), acc.Str(r, "condition")}
		if rate[k] == nil {
			rate[k] = map[string]float64{}
		}
		rate[k][m] = acc.Num(r, "rate")
		n[k] = int(acc.Num(r, "n"))
		if !slices.Contains(models, k.model) {
			models = append(models, k.model)
		}
	}
	var out []Figure
	for _, model := range models {
		var conds []string
		total := 0
		for _, c := range order {
			if _, ok := rate[key{model, c}]; ok {
				conds = append(conds, c)
				total += n[key{model, c}]
			}
		}
		bar := charts.NewBar()
		bar.SetGlobalOptions(append(globals(model+" — answers by condition"), charts.WithYAxisOpts(opts.YAxis{Name: "share", Min: 0, Max: 1}))...)
		bar.SetXAxis(conds)
		for _, m := range []struct{ metric, label string }{{"correct", "exact match"}, {"abstain", "abstention"}, {"hallucination", "hallucination proxy"}} {
			data := make([]opts.BarData, len(conds))
			for i, c := range conds {
				data[i] = opts.BarData{Value: round(rate[key{model, c}][m.metric])}
			}
			bar.AddSeries(m.label, data, charts.WithBarChartOpts(opts.BarChart{Stack: "answers"}))
		}
		o, err := optionOf(bar)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: "conditions_" + model, Mirrors: "distractor study Tables 2–3",
			Caption: simulated(acc, fmt.Sprintf("%s: exact match, abstention and hallucination proxy per condition (n = %s over %s)", model, counted(total, "answer"), counted(len(conds), "condition"))),
			Option:  o})
	}
	return out, nil
}

// round keeps three decimals (a chart label, not a number to compute with).
func round(v float64) any {
	if math.IsNaN(v) {
		return "-"
	}
	return math.Round(v*1000) / 1000
}

// Figures are every figure the run's tables allow, in report order. A
// figure whose table is empty (CLC of a one-language run, flip points
// without TinT-CM, gains without a strategy but the reference) is drawn
// as a short figure saying why (the table's Note), in its caption too.
//
// Each figure's n, and SIMULATED when it is, is also stamped under its
// title (stamp), for the exported images; and every text in its option
// and caption (model, language, domain names from a run) is shown as
// tables.Visible does, control characters as their pictures, so that
// the SVG drawn from it is XML.
func Figures(ts []*tables.Table) ([]Figure, error) {
	by := map[string]*tables.Table{}
	for _, t := range ts {
		by[t.Name] = t
	}
	var out []Figure
	add := func(fs []Figure, err error) error {
		out = append(out, fs...)
		return err
	}
	if t := by["accuracy"]; t != nil && strings.Contains(t.Str(firstRow(t), "study"), "indicklar") {
		if err := add(FormAccuracy(t)); err != nil {
			return nil, err
		}
		if err := add(Romanization(t)); err != nil {
			return nil, err
		}
	}
	if t := by["clc_matrix"]; t != nil {
		if err := add(CLCHeatmap(t)); err != nil {
			return nil, err
		}
	}
	conds := []string{"clean", "es", "hi", "zh", "es_long", "hi_long", "zh_long", "paragraph"}
	if t := by["accuracy"]; t != nil && t.Str(firstRow(t), "study") == "mdi" {
		if err := add(ConditionBars(t, conds)); err != nil {
			return nil, err
		}
		if err := add(SwitchRates(t, conds)); err != nil {
			return nil, err
		}
	}
	if t := by["accuracy"]; t != nil && t.Str(firstRow(t), "study") == "indicquest" {
		if err := add(ProtocolBars(t)); err != nil {
			return nil, err
		}
	}
	if t := by["domains"]; t != nil {
		if err := add(ProtocolRanks(t, by["protocol_rankings"])); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		table string
		make  func(*tables.Table) ([]Figure, error)
	}{
		{"script_decomposition", func(t *tables.Table) ([]Figure, error) { return Decomposition(t, conds) }},
		{"flip_points", FlipSankey},
		{"relations", RelationsRadar},
		{"tokenization", TokenizationScatter},
		{"latency", LatencyScatter},
		{"model_families", func(t *tables.Table) ([]Figure, error) { // accuracy, then CLC, against size
			acc, err := FamilyScaling(t)
			if err != nil || by["clc_overall"] == nil {
				return acc, err
			}
			clc, err := FamilyCLC(t, by["clc_overall"])
			return append(acc, clc...), err
		}},
		{"strategy_tests", StrategyGains},
		{"domains", DomainHeatmap},
	} {
		// an empty flip_points or strategy_tests is a figure saying why
		if t := by[f.table]; t != nil && (len(t.Rows) > 0 || f.table == "flip_points" || f.table == "strategy_tests") {
			if err := add(f.make(t)); err != nil {
				return nil, err
			}
		}
	}
	for i := range out {
		var err error
		if out[i].Option, err = stamp(out[i]); err != nil {
			return nil, err
		}
		if out[i].Option, err = visibleOption(out[i].Option); err != nil {
			return nil, fmt.Errorf("figure %s: %w", out[i].Name, err)
		}
		out[i].Caption = tables.Visible(out[i].Caption)
	}
	return out, nil
}

// stamp writes the figure's n, and SIMULATED when it is, under its title
// (ECharts' subtext), so that an exported SVG or PNG carries them without
// its caption: the caption's last "n = …" statement, then "SIMULATED
// models" in the study's warning colour.
func stamp(f Figure) (json.RawMessage, error) {
	var o map[string]any
	if err := json.Unmarshal(f.Option, &o); err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	var parts []string
	if ms := regexp.MustCompile(`n = [^);]*`).FindAllString(f.Caption, -1); len(ms) > 0 {
		parts = append(parts, ms[len(ms)-1])
	}
	sim := strings.Contains(f.Caption, "SIMULATED")
	if sim {
		parts = append(parts, "SIMULATED models")
	}
	if len(parts) == 0 {
		return f.Option, nil
	}
	title, _ := o["title"].(map[string]any)
	if title == nil {
		title = map[string]any{}
	}
	title["subtext"] = strings.Join(parts, " · ")
	if sim {
		title["subtextStyle"] = map[string]any{"color": "#D55E00", "fontWeight": "bold"}
	}
	o["title"] = title
	grid, _ := o["grid"].(map[string]any)
	if grid == nil {
		grid = map[string]any{}
	}
	if _, ok := grid["top"]; !ok && o["xAxis"] != nil {
		grid["top"] = 80 // room for the subtext above the plot
		o["grid"] = grid
	}
	return json.Marshal(o)
}

func firstRow(t *tables.Table) []any {
	if len(t.Rows) == 0 {
		return nil
	}
	return t.Rows[0]
}

// formList names the forms a figure shows, as a caption says them
// ("English, native and code-mixed"; only those drawn).
func formList(forms []string) string {
	words := make([]string, len(forms))
	for i, f := range forms {
		words[i] = f
		if f == "english" {
			words[i] = "English"
		}
	}
	switch len(words) {
	case 0:
		return "no"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
