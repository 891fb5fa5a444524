package distractors

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/study"
)

// The plan draws its figures (experiment.Figurer).
var _ study.Figurer = (*plan)(nil)

// Figures draws the paper's figures from the plan's tables (Figures).
func (p *plan) Figures(ts []*study.Table) ([]study.Figure, error) { return Figures(ts) }

// Figures are every figure of the distractor study the tables ts allow,
// in report order: the answers by condition (Tables 2–3) and the script
// switch rates (§5, §5.3) from accuracy, then the hallucination proxy's
// decomposition (§5.3) from script_decomposition; the conditions in the
// study's order (Conditions). A table absent from ts, or empty, draws
// nothing. The figures are not finished (chart.Finish).
func Figures(ts []*study.Table) ([]study.Figure, error) {
	return chart.Draw(chart.ByName(ts), []chart.Maker{
		{Table: "accuracy", Make: ConditionBars},
		{Table: "accuracy", Make: SwitchRates},
		{Table: "script_decomposition", Make: DecompositionWaterfall},
	})
}

// ConditionBars is the distractor study's Tables 2–3 as stacked bars: per
// model, exact match, abstention and the hallucination proxy per condition
// (TriviaQA answers) in the study's order (Conditions), from the accuracy
// table.
func ConditionBars(acc *study.Table) ([]study.Figure, error) {
	rate, n, _, models := qaRates(acc, "correct", "abstain", "hallucination")
	var out []study.Figure
	for _, model := range models {
		conds := conditionsOf(rate, model)
		total := 0
		for _, c := range conds {
			total += n[condCell{model, c}]
		}
		bar := shareBars(model+" — answers by condition", conds)
		for _, m := range []struct{ metric, label string }{{"correct", "exact match"}, {"abstain", "abstention"}, {"hallucination", "hallucination proxy"}} {
			bar.AddSeries(m.label, barData(conds, func(c string) float64 { return rate[condCell{model, c}][m.metric] }), charts.WithBarChartOpts(opts.BarChart{Stack: "answers"}))
		}
		o, err := chart.OptionOf(bar)
		if err != nil {
			return nil, err
		}
		stated := fmt.Sprintf("n = %s over %s", study.Counted(total, "answer"), study.Counted(len(conds), "condition"))
		out = append(out, study.FigureOf(acc, "conditions_"+model, "distractor study Tables 2–3",
			fmt.Sprintf("%s: exact match, abstention and hallucination proxy per condition (%s)", model, stated), stated, o))
	}
	return out, nil
}

// SwitchRates is the distractor study's switch rates (§5, §5.3: 58.2 %
// for Llama-3.1-8B under the Hindi note; the critique that quotes them
// names no table): the share of answers with a Devanagari or CJK
// character per condition (in the study's order), one bar per model, from
// the accuracy table.
func SwitchRates(acc *study.Table) ([]study.Figure, error) {
	rate, _, n, models := qaRates(acc, "distractor_switch")
	if len(models) == 0 {
		return nil, nil
	}
	conds := conditionsOf(rate, models[0])
	bar := shareBars("answers in Devanagari or CJK script, per condition", conds)
	for _, m := range models {
		bar.AddSeries(m, barData(conds, func(c string) float64 { return rate[condCell{m, c}]["distractor_switch"] }))
	}
	o, err := chart.OptionOf(bar)
	if err != nil {
		return nil, err
	}
	stated := "n = " + study.Counted(n, "answer")
	return []study.Figure{study.FigureOf(acc, "switch_rates", "distractor study §5, §5.3",
		fmt.Sprintf("share of answers with a Devanagari or CJK character, per model and condition (%s)", stated), stated, o)}, nil
}

// condCell is a model and a condition.
type condCell struct{ model, cond string }

// qaRates reads the accuracy table's TriviaQA rows of the metrics: each
// cell's rate per metric and n (its last row's), the n of every row
// summed, and the models in table order.
func qaRates(acc *study.Table, metrics ...string) (rate map[condCell]map[string]float64, n map[condCell]int, total int, models []string) {
	rate, n = map[condCell]map[string]float64{}, map[condCell]int{}
	for _, r := range acc.Rows {
		m := acc.Str(r, "metric")
		if acc.Str(r, "strategy") != StrategyQA || !slices.Contains(metrics, m) {
			continue
		}
		k := condCell{acc.Str(r, "model"), acc.Str(r, "condition")}
		if rate[k] == nil {
			rate[k] = map[string]float64{}
		}
		rate[k][m], n[k] = acc.Num(r, "rate"), int(acc.Num(r, "n"))
		total += n[k]
		if !slices.Contains(models, k.model) {
			models = append(models, k.model)
		}
	}
	return rate, n, total, models
}

// conditionsOf are the conditions model has rates for, in the study's order.
func conditionsOf(rate map[condCell]map[string]float64, model string) []string {
	return slices.DeleteFunc(conditionNames(), func(c string) bool { return rate[condCell{model, c}] == nil })
}

// shareBars is a bar chart over the conditions, its y axis a share from 0 to 1.
func shareBars(title string, conds []string) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(chart.Globals(title), charts.WithYAxisOpts(opts.YAxis{Name: "share", Min: 0, Max: 1}))...)
	bar.SetXAxis(conds)
	return bar
}

// barData is v of each condition, rounded.
func barData(conds []string, v func(c string) float64) []opts.BarData {
	data := make([]opts.BarData, len(conds))
	for i, c := range conds {
		data[i] = opts.BarData{Value: chart.Round(v(c))}
	}
	return data
}

// DecompositionWaterfall is the distractor study's §5.3 per model as a waterfall
// over the conditions: each bar climbs from the clean rate (or the
// adjusted rate, when lower) by the real-error rise to the paper's
// adjusted hallucination rate, then by the right-but-wrong-script answers
// the semantic judge recovers to the raw proxy; the broader rule's
// adjusted rate is a marker; the conditions in the study's order; from
// script_decomposition.
func DecompositionWaterfall(dec *study.Table) ([]study.Figure, error) {
	models, by := chart.GroupRows(dec, "model")
	order := conditionNames()
	var out []study.Figure
	for _, m := range models {
		rows := by[m]
		sort.SliceStable(rows, func(i, j int) bool {
			return slices.Index(order, dec.Str(rows[i], "condition")) < slices.Index(order, dec.Str(rows[j], "condition"))
		})
		clean := math.NaN()
		for _, r := range rows {
			if dec.Str(r, "condition") == string(Clean) {
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
			base = append(base, opts.BarData{Value: chart.Round(lo)})
			real = append(real, opts.BarData{Value: chart.Round(adj - lo)})
			script = append(script, opts.BarData{Value: chart.Round(math.Max(0, raw-adj))})
			broad = append(broad, opts.ScatterData{Value: chart.Round(dec.Num(r, "broad_adj_halluc")), Symbol: "diamond", SymbolSize: 12})
			n += int(dec.Num(r, "n"))
		}
		bar := charts.NewBar()
		bar.SetGlobalOptions(append(chart.Globals(m+" — hallucination proxy: clean → adjusted → raw"),
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
		o, err := chart.OptionOf(bar)
		if err != nil {
			return nil, err
		}
		stated := "n = " + study.Counted(n, "answer")
		out = append(out, study.FigureOf(dec, "decomposition_"+m, "distractor study §5.3 / Table 3",
			fmt.Sprintf("%s: per condition, the hallucination proxy from the clean rate up to the paper's adjusted rate (real errors) and on to the raw rate (right answers in the wrong script, recovered by the semantic judge); the diamond is Bhasha's broader rule (%s)", m, stated), stated, o))
	}
	return out, nil
}
