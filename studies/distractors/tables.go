package distractors

import (
	"fmt"
	"slices"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/study"
)

// ConditionTests compares every distractor condition with the clean one
// on the same items, per model × strategy × condition and metric: the
// paired items, both counts, the paired difference (condition − clean)
// with its 95% Wald interval (stats.PairedDiffCI), the discordant counts
// b (right clean only) and c (right under the condition only), McNemar's
// exact p, and Holm and Benjamini–Hochberg adjustments within each
// family: one model and one metric, over its strategies and conditions
// (family names it and its size). With unpaired, the two-proportion z
// test and Fisher's exact test over all answers are added (the paper's
// Table 2 does not say which test it used).
func ConditionTests(ms []study.Metric, rows []study.Row, unpaired bool) *study.Table {
	cols := []study.Column{study.KeyColumn("model"), key("strategy"), key("condition"), study.KeyColumn("metric"),
		study.CountColumn("pairs", "items asked both clean and under the condition"), study.CountColumn("k_clean", "answers right, of clean"), study.KeyColumn("k"),
		study.StatisticColumn("diff", "the condition's rate minus the clean rate on the same items (paired)"), study.KeyColumn("diff_lo"), study.KeyColumn("diff_hi"),
		study.CountColumn("b", "items meeting the metric clean only"), study.CountColumn("c", "items meeting the metric under the condition only"),
		study.KeyColumn("mcnemar_p"), study.KeyColumn("p_holm"), study.KeyColumn("p_bh"),
		study.TextColumn("family", "the multiple-testing family the Holm and BH adjustments run over, and its size")}
	if unpaired {
		cols = append(cols, study.CountColumn("n_clean", "answers scored, of clean"), study.KeyColumn("n"),
			study.CountColumn("k_clean_all", "answers meeting the metric over all answers (clean, condition), for the unpaired tests"),
			study.CountColumn("k_all", "answers meeting the metric over all answers (clean, condition), for the unpaired tests"),
			study.KeyColumn("z"), study.KeyColumn("p_twoprop"), study.KeyColumn("p_fisher"))
	}
	t := study.NewTable("condition_tests", "each distractor condition against clean on the same items: paired difference interval, McNemar p, Holm and BH per model and metric (z and Fisher with scoring.unpaired_tests)", cols...)
	t.Mirrors = "distractor study Table 2"
	type cell struct{ model, strategy, cond string }
	// outcome[cell][metric][item]; a failed answer meets no metric but
	// hallucination, as the authors count it.
	outcome := map[cell][]map[string]bool{}
	for ri := range rows {
		r := &rows[ri]
		c := cell{r.Key.Model, r.Key.Strategy, r.Key.Condition}
		if outcome[c] == nil {
			outcome[c] = make([]map[string]bool, len(ms))
			for i := range ms {
				outcome[c][i] = map[string]bool{}
			}
		}
		for i, m := range ms {
			outcome[c][i][r.Key.Item] = m.Of(r)
		}
	}
	var cells []cell
	for c := range outcome {
		if _, ok := outcome[cell{c.model, c.strategy, cleanCondition}]; ok && c.cond != cleanCondition {
			cells = append(cells, c)
		}
	}
	study.SortBy(cells, func(c cell) []string { return []string{c.model, c.strategy, c.cond} })
	type test struct {
		head, tail []any // the cells before p_holm and after family
		p          float64
	}
	families := map[[2]string][]test{} // by model and metric
	for _, c := range cells {
		for mi, m := range ms {
			if !m.AppliesTo(c.strategy) {
				continue
			}
			clean, cond := outcome[cell{c.model, c.strategy, cleanCondition}][mi], outcome[c][mi]
			pairs, k0, k, b, cc := tables.Paired(clean, cond)
			d, lo, hi := study.PairedDiffCI(b, cc, pairs, 0.95)
			x := test{head: []any{c.model, c.strategy, c.cond, m.Name, pairs, k0, k, d, lo, hi, b, cc}, p: study.McNemarExact(b, cc)}
			if unpaired {
				n0, n := len(clean), len(cond)
				ka0, kaN := countTrue(clean), countTrue(cond)
				z, pz := study.TwoProportionZ(kaN, n, ka0, n0)
				_, pf := study.FisherExact(kaN, n-kaN, ka0, n0-ka0)
				x.tail = []any{n0, n, ka0, kaN, z, pz, pf}
			}
			f := [2]string{c.model, m.Name}
			families[f] = append(families[f], x)
		}
	}
	order := study.SortedKeysBy(families, func(f [2]string) []string { return f[:] })
	for _, f := range order {
		ls := families[f]
		name := fmt.Sprintf("%s / %s: %d tests", f[0], f[1], len(ls))
		tables.Adjusted(ls, func(x test) float64 { return x.p }, func(x test, holm, bh float64) {
			t.Add(slices.Concat(x.head, []any{x.p, holm, bh, name}, x.tail)...)
		})
	}
	study.SortBy(t.Rows, func(r []any) []string {
		return []string{t.Str(r, "model"), t.Str(r, "strategy"), t.Str(r, "condition"), t.Str(r, "metric")}
	})
	return t
}

// countTrue counts the true values of m.
func countTrue(m map[string]bool) int {
	k := 0
	for _, v := range m {
		if v {
			k++
		}
	}
	return k
}

// cleanCondition is the condition without a distractor, the one every
// other is compared with.
const cleanCondition = string(Clean)

// key declares a key column of the distractor study's tables: strategy
// and condition with what they hold in this study, the others as
// tables.Key.
func key(name string) study.Column {
	switch name {
	case "strategy":
		return study.TextColumn(name, "prompting strategy (IndicKLAR), answer format (distractor study: qa, mc1), or empty")
	case "condition":
		return study.TextColumn(name, "distractor condition (clean, es, hi, zh, *_long, paragraph), or empty")
	}
	return study.KeyColumn(name)
}
