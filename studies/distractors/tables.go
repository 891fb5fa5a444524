package distractors

import (
	"fmt"

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
		if c.cond != cleanCondition {
			if _, ok := outcome[cell{c.model, c.strategy, cleanCondition}]; ok {
				cells = append(cells, c)
			}
		}
	}
	study.SortBy(cells, func(c cell) []string { return []string{c.model, c.strategy, c.cond} })
	type line struct {
		c                                    cell
		metric                               string
		pairs, k0, k, b, cc, n0, n, ka0, kaN int
		p                                    float64
	}
	type fam struct{ model, metric string }
	families := map[fam][]line{}
	var order []fam
	for _, c := range cells {
		for mi, m := range ms {
			if !m.AppliesTo(c.strategy) {
				continue
			}
			clean, cond := outcome[cell{c.model, c.strategy, cleanCondition}][mi], outcome[c][mi]
			l := line{c: c, metric: m.Name}
			l.pairs, l.k0, l.k, l.b, l.cc = tables.Paired(clean, cond)
			l.p = study.McNemarExact(l.b, l.cc)
			l.n0, l.n = len(clean), len(cond)
			for _, v := range clean {
				if v {
					l.ka0++
				}
			}
			for _, v := range cond {
				if v {
					l.kaN++
				}
			}
			f := fam{c.model, m.Name}
			if families[f] == nil {
				order = append(order, f)
			}
			families[f] = append(families[f], l)
		}
	}
	study.SortBy(order, func(f fam) []string { return []string{f.model, f.metric} })
	for _, f := range order {
		ls := families[f]
		name := fmt.Sprintf("%s / %s: %d tests", f.model, f.metric, len(ls))
		tables.Adjusted(ls, func(l line) float64 { return l.p }, func(l line, holm, bh float64) {
			d, lo, hi := study.PairedDiffCI(l.b, l.cc, l.pairs, 0.95)
			cells := []any{l.c.model, l.c.strategy, l.c.cond, l.metric, l.pairs, l.k0, l.k, d, lo, hi, l.b, l.cc, l.p, holm, bh, name}
			if unpaired {
				z, pz := study.TwoProportionZ(l.kaN, l.n, l.ka0, l.n0)
				_, pf := study.FisherExact(l.kaN, l.n-l.kaN, l.ka0, l.n0-l.ka0)
				cells = append(cells, l.n0, l.n, l.ka0, l.kaN, z, pz, pf)
			}
			t.Add(cells...)
		})
	}
	study.SortBy(t.Rows, func(r []any) []string {
		return []string{t.Str(r, "model"), t.Str(r, "strategy"), t.Str(r, "condition"), t.Str(r, "metric")}
	})
	return t
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
