package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// FamilyCLC is the other half of IndicKLAR's Fig. 5: cross-lingual
// consistency (clc_overall, the mean CLC(L) over the native languages)
// against model size, one line per family and strategy; sizes and
// families come from model_families. Models without a size have no
// point; n is the number of languages averaged.
func FamilyCLC(mf, co *tables.Table) ([]Figure, error) {
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
		if !ok || co.Str(r, "form") != "native" || math.IsNaN(co.Num(r, "clc")) {
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
	line := sizeLines("cross-lingual consistency against model size per family", "CLC")
	models2 := 0
	for _, k := range keys {
		ps := pts[k]
		sort.Slice(ps, func(i, j int) bool { return ps[i].size < ps[j].size })
		data := make([]opts.LineData, len(ps))
		for i, p := range ps {
			data[i] = opts.LineData{Name: p.model, Value: []any{p.size, round(p.clc)}}
		}
		models2 += len(ps)
		line.AddSeries(k.family+" "+k.strategy, data)
	}
	o, err := optionOf(line)
	if err != nil {
		return nil, err
	}
	return []Figure{{Name: "family_clc", Mirrors: "IndicKLAR Fig. 5",
		Caption: simulated(co, fmt.Sprintf("native cross-lingual consistency (mean CLC(L) over up to %s) against model size, one line per family and strategy (n = %s)", counted(langs, "language"), counted(models2, "model × strategy point"))),
		Option:  o}}, nil
}

// sizeLines is Fig. 5's frame: a line chart over model size (billions of
// parameters, log scale) with a 0–1 y axis named yName.
func sizeLines(title, yName string) *charts.Line {
	line := charts.NewLine()
	line.SetGlobalOptions(append(globals(title),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Name: "parameters (billions)", Type: "log", NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(opts.YAxis{Name: yName, Min: 0, Max: 1}))...)
	return line
}

// ProtocolRanks is IndicQuest's model rankings per protocol as a bump
// chart: the protocols along x, each model's rank (1 at the top, ties
// sharing the best rank) by its accuracy pooled over languages (Σk/Σn
// of the domains table's domain "*" rows), one line per model, the
// accuracy and n in the tooltip; Kendall's τ between the protocols'
// rankings over model × language cells (protocol_rankings, language "*")
// in the caption when the run has it.
func ProtocolRanks(dom, rankings *tables.Table) ([]Figure, error) {
	type kn struct{ k, n int }
	pooled := map[string]map[string]kn{} // model → protocol
	var models []string
	for _, r := range dom.Rows {
		m := dom.Str(r, "model")
		if m == "*" || dom.Str(r, "language") == "*" || dom.Str(r, "domain") != "*" {
			continue
		}
		if pooled[m] == nil {
			pooled[m] = map[string]kn{}
			models = append(models, m)
		}
		p := dom.Str(r, "protocol")
		c := pooled[m][p]
		pooled[m][p] = kn{c.k + int(dom.Num(r, "k")), c.n + int(dom.Num(r, "n"))}
	}
	protocols := []string{"judge", "substring", "overlap"}
	if len(models) < 2 {
		return nil, nil
	}
	sort.Strings(models)
	line := charts.NewLine()
	line.SetGlobalOptions(append(globals("model rankings by protocol"),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithYAxisOpts(opts.YAxis{Name: "rank", Type: "value", Min: 1, Max: len(models), Inverse: opts.Bool(true), SplitNumber: max(1, len(models)-1)}))...)
	line.SetXAxis(protocols)
	ranks := map[string]map[string]int{}
	n := 0
	for _, p := range protocols {
		rate := func(m string) float64 {
			c := pooled[m][p]
			if c.n == 0 {
				return math.NaN()
			}
			return float64(c.k) / float64(c.n)
		}
		for _, m := range models {
			if ranks[m] == nil {
				ranks[m] = map[string]int{}
			}
			r := 1
			for _, o := range models {
				if rate(o) > rate(m) {
					r++
				}
			}
			ranks[m][p] = r
			if p == "judge" {
				n += pooled[m][p].n
			}
		}
	}
	for _, m := range models {
		data := make([]opts.LineData, len(protocols))
		for i, p := range protocols {
			c := pooled[m][p]
			if c.n == 0 {
				data[i] = opts.LineData{Value: "-"}
				continue
			}
			data[i] = opts.LineData{Name: fmt.Sprintf("%s: %.3f of %d", p, float64(c.k)/float64(c.n), c.n), Value: ranks[m][p]}
		}
		line.AddSeries(m, data)
	}
	o, err := optionWith(line, func(o map[string]any) {
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
				taus = append(taus, fmt.Sprintf("%s vs %s τ = %s", rankings.Str(r, "a"), rankings.Str(r, "b"), num(rankings.Num(r, "kendall_tau"))))
			}
		}
	}
	slices.Sort(taus)
	tail := ""
	if len(taus) > 0 {
		tail = "; Kendall's " + strings.Join(taus, ", ")
	}
	return []Figure{{Name: "protocol_ranks", Mirrors: "IndicQuest §5 (ranking agreement)",
		Caption: simulated(dom, fmt.Sprintf("each model's rank under the LLM judge, exact substring and word overlap, by accuracy pooled over languages%s (n = %s per protocol)", tail, counted(n, "answer"))),
		Option:  o}}, nil
}
