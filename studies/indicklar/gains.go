package indicklar

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/parallel"
)

// gainKey names one set of per-language gains.
type gainKey struct{ model, strategy, measure string }

// languageGains is each strategy's gain over the reference per model ×
// measure × native language: acc on the same items, clc of CLC(L).
func languageGains(o tables.Outcomes, ref string, clcMeans *study.Table) map[gainKey]map[string]float64 {
	gains := map[gainKey]map[string]float64{}
	for k, set := range o {
		base := o[[4]string{k[0], ref, k[2], "native"}]
		if k[1] == ref || k[3] != "native" || base == nil {
			continue
		}
		n, kb, ks, _, _ := tables.Paired(base, set)
		if n > 0 {
			put(gains, gainKey{k[0], k[1], "acc"}, k[2], float64(ks-kb)/float64(n))
		}
	}
	clc := clcByUnit(clcMeans)
	for k, v := range clc {
		if b, ok := clc[tables.Unit{k[0], ref, k[2], "native"}]; ok && k[1] != ref && k[3] == "native" {
			put(gains, gainKey{k[0], k[1], "clc"}, k[2], v-b)
		}
	}
	return gains
}

// languageTestsFrom tests each strategy's gain over the reference across
// languages per model and measure (A.3/A.4): mean with bootstrap interval
// and permutation p, median and Wilcoxon beside.
func languageTestsFrom(byLang map[gainKey]map[string]float64, ref string) *study.Table {
	t := study.NewTable("language_tests", "a strategy's gains across languages (accuracy and CLC): mean with bootstrap interval and permutation p as A.3/A.4, median and Wilcoxon beside, languages with a positive gain",
		append(keys("model", "strategy", "reference", "measure"),
			study.CountColumn("languages", "languages with a gain"),
			study.CountColumn("positive", "languages with a positive gain"),
			study.StatisticColumn("mean_gain", "mean per-language gain (as the paper states it)"),
			study.LowerColumn("mean_gain_lo", "lower bound of the 95% interval of mean_gain"),
			study.UpperColumn("mean_gain_hi", "upper bound of the 95% interval of mean_gain"),
			study.PValueColumn("perm_p", "two-sided permutation p (exact sign flips up to 20 languages, else 10,000 random ones)"),
			study.StatisticColumn("median_gain", "median per-language gain (of the measure: accuracy or CLC)"),
			study.StatisticColumn("wilcoxon_T", "Wilcoxon signed-rank statistic"),
			study.PValueColumn("wilcoxon_p", "two-sided p-value of the Wilcoxon signed-rank test"),
			study.TextColumn("method", "how the test or extraction was made"))...)
	t.Mirrors = "IndicKLAR A.3/A.4"
	keys := study.SortedKeysBy(byLang, func(x gainKey) []string { return []string{x.model, x.strategy, x.measure} })
	// Each row's tests draw from streams of their own (the same seeds for
	// every row), so the rows are made at once, and added in order.
	rows := make([][]any, len(keys))
	parallel.For(len(keys), func(i int) { rows[i] = languageTest(keys[i], slices.Collect(maps.Values(byLang[keys[i]])), ref) })
	for _, r := range rows {
		t.Add(r...)
	}
	return t
}

// languageTest is the language_tests row of x's gains g (sorted here).
func languageTest(x gainKey, g []float64, ref string) []any {
	mean, lo, hi := bootstrap(g, 0) // g sorted: the tests below read it so
	pos := len(g) - sort.Search(len(g), func(i int) bool { return g[i] > 0 })
	_, pp := stats.PairedPermutation(g, 20, 10000, rand.New(rand.NewPCG(12345, 1)))
	med := stats.QuantileSorted(g, 0.5)
	res := stats.Wilcoxon(g, stats.WilcoxonAuto)
	method := "exact"
	if len(g) > 50 || slices.Contains(g, 0) {
		method = "normal"
	}
	if res.N == 0 { // T and P are NaN; the cell says why
		method = "wilcoxon: every difference is zero"
	}
	return []any{x.model, x.strategy, ref, x.measure, len(g), pos, mean, lo, hi, pp, med, res.T, res.P, method}
}

// strategyFamiliesFrom sets each strategy family's variants side by side
// (A.3): mean accuracy and CLC gains with bootstrap intervals, latency, and
// the best variant; family names a strategy's family ("" for none).
func strategyFamiliesFrom(rows []study.Row, gains map[gainKey]map[string]float64, ref string, family func(string) string) *study.Table {
	t := study.NewTable("strategy_families", "each strategy family's variants (1Step, 2Step, TinT, CoT): mean accuracy and CLC gains over the reference across language × model cells with bootstrap intervals, against latency; the best variant marked",
		key("family"),
		key("strategy"),
		tables.Flag("best", "the family's variant with the highest mean accuracy gain over the cells (Bhasha's pick; the paper selects per cell: family_selection)"),
		key("reference"),
		study.CountColumn("cells", "language × model cells with an accuracy gain"),
		study.ProportionColumn("mean_acc_gain", "mean gain over the reference across language × model cells, in accuracy or in native CLC(L)"),
		study.LowerColumn("mean_acc_gain_lo", "lower bound of the 95% interval of mean_acc_gain"),
		study.UpperColumn("mean_acc_gain_hi", "upper bound of the 95% interval of mean_acc_gain"),
		study.CountColumn("clc_cells", "language × model cells with a CLC gain"),
		study.StatisticColumn("mean_clc_gain", "mean gain over the reference across language × model cells, in accuracy or in native CLC(L)"),
		study.LowerColumn("mean_clc_gain_lo", "lower bound of the 95% interval of mean_clc_gain"),
		study.UpperColumn("mean_clc_gain_hi", "upper bound of the 95% interval of mean_clc_gain"),
		tables.Millis("mean_ms", "client-observed latency in milliseconds (mean, median, 90th percentile)"),
		tables.Millis("ref_mean_ms", "the reference strategy's mean end-to-end latency (ms)"))
	t.Mirrors = "IndicKLAR A.3"
	acc, clc := map[string][]float64{}, map[string][]float64{}
	for k, byLang := range gains {
		if family(k.strategy) == "" {
			continue
		}
		to := clc
		if k.measure == "acc" {
			to = acc
		}
		to[k.strategy] = slices.AppendSeq(to[k.strategy], maps.Values(byLang))
	}
	lat := map[string][]float64{}
	for _, r := range rows {
		if !r.Failed && !r.Cached && r.LatencyMS > 0 {
			lat[r.Key.Strategy] = append(lat[r.Key.Strategy], r.LatencyMS)
		}
	}
	type variant struct {
		family, strategy string
		acc              float64
	}
	var vs []variant
	best := map[string]variant{}
	for s, v := range acc {
		// Summed in order: the gains came in map order, and two variants
		// of equal gains must tie exactly for the pick to be the same in
		// every report of the run.
		sort.Float64s(v)
		x := variant{family(s), s, stats.Mean(v)}
		vs = append(vs, x)
		if b, ok := best[x.family]; !ok || x.acc > b.acc || (x.acc == b.acc && x.strategy < b.strategy) {
			best[x.family] = x
		}
	}
	study.SortBy(vs, func(v variant) []string { return []string{v.family, v.strategy} })
	for _, v := range vs {
		am, alo, ahi := bootstrap(acc[v.strategy], 4)
		cm, clo, chi := bootstrap(clc[v.strategy], 5)
		t.Add(v.family, v.strategy, best[v.family].strategy == v.strategy, ref, len(acc[v.strategy]), am, alo, ahi,
			len(clc[v.strategy]), cm, clo, chi, stats.Mean(lat[v.strategy]), stats.Mean(lat[ref]))
	}
	return t
}

// familySelectionFrom is A.3's best variant per family and measure as the
// paper selects it, per language × model cell (a tie: the first by name):
// strategy "*" the mean selected gain, each variant how often it is picked.
func familySelectionFrom(gains map[gainKey]map[string]float64, ref string, family func(string) string) *study.Table {
	t := study.NewTable("family_selection", "A.3's best variant per family as the paper selects it: per language × model cell, separately for accuracy and CLC, the variant with the largest gain over the reference; how often each variant is selected, and the mean gain of the selected variants",
		append(keys("family", "measure", "strategy", "reference"),
			study.CountColumn("cells", "language × model cells where a variant of the family has a gain"),
			study.CountColumn("selected", "cells where the variant has the family's largest gain (strategy *: every cell)"),
			study.ProportionColumn("share", "selected / cells (strategy *: empty)"),
			study.LowerColumn("share_lo", "lower bound of the 95% interval of share"),
			study.UpperColumn("share_hi", "upper bound of the 95% interval of share"),
			study.StatisticColumn("mean_best_gain", "strategy *: the mean over the cells of the selected variant's gain (the paper's A.3 family gain); a variant: empty"),
			study.LowerColumn("mean_best_gain_lo", "lower bound of the 95% interval of mean_best_gain"),
			study.UpperColumn("mean_best_gain_hi", "upper bound of the 95% interval of mean_best_gain"))...)
	t.Mirrors = "IndicKLAR A.3"
	type fm struct{ family, measure string }
	type cell struct{ model, lang string }
	type pick struct {
		strategy string
		gain     float64
	}
	best := map[fm]map[cell]pick{}
	variants := map[fm]map[string]bool{}
	for k, byLang := range gains {
		f := family(k.strategy)
		if f == "" {
			continue
		}
		x := fm{f, k.measure}
		put(variants, x, k.strategy, true)
		for l, g := range byLang {
			c := cell{k.model, l}
			if b, ok := best[x][c]; !ok || g > b.gain || (g == b.gain && k.strategy < b.strategy) {
				put(best, x, c, pick{k.strategy, g})
			}
		}
	}
	keys := study.SortedKeysBy(best, func(x fm) []string { return []string{x.family, x.measure} })
	nan := math.NaN()
	for _, x := range keys {
		cells := study.SortedKeysBy(best[x], func(c cell) []string { return []string{c.model, c.lang} })
		selected := map[string]int{}
		var g []float64
		for _, c := range cells {
			b := best[x][c]
			selected[b.strategy]++
			g = append(g, b.gain)
		}
		m, lo, hi := bootstrap(g, 6)
		t.Add(x.family, x.measure, "*", ref, len(cells), len(cells), nan, nan, nan, m, lo, hi)
		for _, s := range slices.Sorted(maps.Keys(variants[x])) {
			pr := study.NewProportion(selected[s], len(cells))
			t.Add(x.family, x.measure, s, ref, len(cells), selected[s], pr.P, pr.Lo, pr.Hi, nan, nan, nan)
		}
	}
	if len(t.Rows) == 0 {
		t.Note = fmt.Sprintf("no family variant to select: the run has no strategy of a family (1Step, 2Step, TinT, CoT) with a native gain over the reference (%s)", ref)
	}
	return t
}

// bootstrap sorts v (a fixed order for the draws) and is its mean with
// the 95% percentile bootstrap interval (10,000 resamples from stream of seed 12345).
func bootstrap(v []float64, stream uint64) (m, lo, hi float64) {
	sort.Float64s(v)
	return stats.PairedBootstrap(v, 0.95, 10000, rand.New(rand.NewPCG(12345, stream)))
}
