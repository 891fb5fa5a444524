package indicquest

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/study"
)

// The plan draws its figures (experiment.Figurer).
var _ study.Figurer = (*plan)(nil)

// Figures draws the paper's figures from the plan's tables (Figures).
func (p *plan) Figures(ts []*study.Table) ([]study.Figure, error) { return Figures(ts) }

// Figures are every IndicQuest figure the tables ts allow, in report
// order: accuracy by protocol from accuracy, the models' ranks by
// protocol from domains (with protocol_rankings' τ), accuracy against
// model size (native questions) from model_families, and accuracy by
// domain and language from domains. A table absent from ts draws
// nothing, and so does an empty one but domains' ranks. The figures are
// not finished (chart.Finish).
func Figures(ts []*study.Table) ([]study.Figure, error) {
	by := chart.ByName(ts)
	return chart.Draw(by, []chart.Maker{
		{Table: "accuracy", Empty: true, Make: ProtocolBars},
		{Table: "domains", Empty: true, Make: func(t *study.Table) ([]study.Figure, error) { return ProtocolRanks(t, by["protocol_rankings"]) }},
		{Table: "model_families", Make: func(t *study.Table) ([]study.Figure, error) {
			return chart.FamilyScaling(t, string(study.Native), "IndicKLAR Fig. 5")
		}},
		{Table: "domains", Make: DomainHeatmap},
	})
}

// ProtocolBars is IndicQuest's three protocols per model: the judge's,
// exact substring's and word overlap's accuracy per language (bars), with
// the lexical shortfall in the caption, from the accuracy table.
func ProtocolBars(acc *study.Table) ([]study.Figure, error) {
	type key struct{ model, lang string }
	rate := map[key]map[string]float64{}
	var models []string
	n, langSet := map[string]int{}, map[string]bool{}
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
		langSet[k.lang] = true
	}
	langs := study.SortedKeys(langSet)
	var out []study.Figure
	for _, m := range models {
		bar := charts.NewBar()
		bar.SetGlobalOptions(append(chart.Globals(m+" — accuracy by protocol"), charts.WithYAxisOpts(opts.YAxis{Name: "accuracy", Min: 0, Max: 1}))...)
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
				data[i] = opts.BarData{Value: chart.Round(v)}
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
		o, err := chart.OptionOf(bar)
		if err != nil {
			return nil, err
		}
		stated := "n = " + study.Counted(n[m], "answer")
		out = append(out, study.FigureOf(acc, "protocols_"+m, "IndicQuest §5 (lexical shortfall)",
			fmt.Sprintf("%s: the LLM judge's, exact substring's and word overlap's accuracy per language; mean shortfall of exact substring %s (%s)", m, chart.Num(mean), stated), stated, o))
	}
	return out, nil
}

// ProtocolRanks is IndicQuest's model rankings per protocol as a bump
// chart: the protocols along x, each model's rank (1 at the top, ties
// sharing the best rank) by its accuracy pooled over languages (Σk/Σn
// of the domains table's domain "*" rows), one line per model, the
// accuracy and n in the tooltip; Kendall's τ between the protocols'
// rankings over model × language cells (protocol_rankings, language "*")
// in the caption when the run has it.
func ProtocolRanks(dom, rankings *study.Table) ([]study.Figure, error) {
	type kn struct{ k, n int }
	pooled := map[string]map[string]kn{} // model → protocol
	for _, r := range dom.Rows {
		m := dom.Str(r, "model")
		if m == "*" || dom.Str(r, "language") == "*" || dom.Str(r, "domain") != "*" {
			continue
		}
		if pooled[m] == nil {
			pooled[m] = map[string]kn{}
		}
		p := dom.Str(r, "protocol")
		c := pooled[m][p]
		pooled[m][p] = kn{c.k + int(dom.Num(r, "k")), c.n + int(dom.Num(r, "n"))}
	}
	protocols, models := []string{"judge", "substring", "overlap"}, study.SortedKeys(pooled)
	if len(models) < 2 {
		return nil, nil
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(chart.Globals("model rankings by protocol"),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "rank", Type: "value", Min: 1, Max: len(models), Inverse: opts.Bool(true), SplitNumber: max(1, len(models)-1)}))...)
	line.SetXAxis(protocols)
	rate := func(m, p string) float64 { return tables.Frac(pooled[m][p].k, pooled[m][p].n) }
	n := 0
	for _, m := range models {
		n += pooled[m]["judge"].n
		data := make([]opts.LineData, len(protocols))
		for i, p := range protocols {
			c := pooled[m][p]
			if c.n == 0 {
				data[i] = opts.LineData{Value: "-"}
				continue
			}
			rank := 1
			for _, o := range models {
				if rate(o, p) > rate(m, p) {
					rank++
				}
			}
			data[i] = opts.LineData{Name: fmt.Sprintf("%s: %.3f of %d", p, float64(c.k)/float64(c.n), c.n), Value: rank}
		}
		line.AddSeries(m, data)
	}
	o, err := chart.OptionWith(line, func(o map[string]any) {
		for _, s := range o["series"].([]any) { // the model's name at its line's end
			s.(map[string]any)["endLabel"] = map[string]any{"show": true, "formatter": "{a}"}
		}
		o["grid"] = map[string]any{"right": "18%"}
	})
	if err != nil {
		return nil, err
	}
	var taus []string
	if rankings != nil {
		for _, r := range rankings.Rows {
			if rankings.Str(r, "language") == "*" {
				taus = append(taus, fmt.Sprintf("%s vs %s τ = %s", rankings.Str(r, "a"), rankings.Str(r, "b"), chart.Num(rankings.Num(r, "kendall_tau"))))
			}
		}
	}
	slices.Sort(taus)
	tail := ""
	if len(taus) > 0 {
		tail = "; Kendall's " + strings.Join(taus, ", ")
	}
	stated := fmt.Sprintf("n = %s per protocol", study.Counted(n, "answer"))
	return []study.Figure{study.FigureOf(dom, "protocol_ranks", "IndicQuest §5 (ranking agreement)",
		fmt.Sprintf("each model's rank under the LLM judge, exact substring and word overlap, by accuracy pooled over languages%s (%s)", tail, stated), stated, o)}, nil
}

// DomainHeatmap is IndicQuest's domain × language accuracy per model and
// protocol, from domains (the pooled rows left out).
func DomainHeatmap(dom *study.Table) ([]study.Figure, error) {
	type key struct{ model, protocol string }
	cells := map[key][]chart.Cell{}
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
		cells[k] = append(cells[k], chart.Cell{X: l, Y: d, V: dom.Num(r, "rate")})
		ns[k] += int(dom.Num(r, "n"))
	}
	var out []study.Figure
	for _, k := range keys {
		o, err := chart.Heatmap(fmt.Sprintf("%s — accuracy by domain and language (%s)", k.model, k.protocol), "accuracy", langs[k], domains[k], cells[k], 0, 1)
		if err != nil {
			return nil, err
		}
		stated := "n = " + study.Counted(ns[k], "answer")
		out = append(out, study.FigureOf(dom, "domains_"+k.model+"_"+k.protocol, "IndicQuest Tables 4 and 7",
			fmt.Sprintf("%s, %s: accuracy per domain and language, each cell labelled with its value, the colour scale from 0 to 1 (%s)", k.model, k.protocol, stated), stated, o))
	}
	return out, nil
}
