package indicklar

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// clcFrom is cross-lingual consistency per model and strategy: clc, the
// Jaccard index (0 for an empty union) of every pair of language/form units;
// clc_mean, CLC(L) within a form; clc_overall, its mean over a form's languages.
func clcFrom(o tables.Outcomes) (pairs, means, overall *study.Table) {
	pairs = study.NewTable("clc", "cross-lingual consistency: Jaccard of correct-item sets for every language/form pair, with its scope (the shared form, or cross-form)",
		append(keys("model", "strategy"),
			study.TextColumn("scope", "the form both units share, or cross-form"),
			study.TextColumn("a", "the first unit (language/form) of the pair"),
			study.TextColumn("b", "the second unit (language/form) of the pair"),
			study.CountColumn("items", "items both units asked"),
			study.CountColumn("correct_a", "items right under a"),
			study.CountColumn("correct_b", "items right under b"),
			study.CountColumn("intersection", "items right under both"),
			study.CountColumn("union", "items right under either"),
			study.ProportionColumn("jaccard", "intersection / union (cross-lingual consistency)"))...)
	pairs.Mirrors = "IndicKLAR Fig. 4 (pairs)"
	means = study.NewTable("clc_mean", "each language's mean Jaccard against the other languages of its form (CLC(L) as the paper's A.1 defines it, averaged within the form: Bhasha's aggregation)",
		append(keys("model", "strategy", "form", "language"),
			study.CountColumn("others", "other languages of the same form"),
			study.ProportionColumn("mean_jaccard", "mean Jaccard index against the other languages of the form (CLC(L), averaged within the form)"))...)
	means.Mirrors = "IndicKLAR Tables 2, 7–9 (CLC)"
	overall = study.NewTable("clc_overall", "the mean of CLC(L) over a form's languages, per model × strategy × form (forms never mixed)",
		append(keys("model", "strategy", "form"),
			study.CountColumn("languages", "languages pooled or tested"),
			study.StatisticColumn("clc", "mean of CLC(L) over the form's languages"))...)
	overall.Mirrors = "IndicKLAR §5.5, A.1"
	type ms struct{ model, strategy string }
	units := map[ms][][4]string{}
	for k := range o {
		units[ms{k[0], k[1]}] = append(units[ms{k[0], k[1]}], k)
	}
	keys := study.SortedKeysBy(units, func(x ms) []string { return []string{x.model, x.strategy} })
	name := func(k [4]string) string { return k[2] + "/" + k[3] }
	for _, k := range keys {
		us := units[k]
		sort.Slice(us, func(i, j int) bool { return us[i][3] < us[j][3] || (us[i][3] == us[j][3] && us[i][2] < us[j][2]) })
		sum, peers := map[[4]string]float64{}, map[[4]string]int{} // per unit
		for i, ua := range us {
			for _, ub := range us[i+1:] {
				common, ca, cb, onlyA, onlyB := tables.Paired(o[ua], o[ub])
				inter, union := ca-onlyA, ca+onlyB
				j := 0.0
				if union > 0 {
					j = float64(inter) / float64(union)
				}
				scope := "cross-form"
				if ua[3] == ub[3] {
					scope = ua[3]
					sum[ua], sum[ub] = sum[ua]+j, sum[ub]+j
					peers[ua]++
					peers[ub]++
				}
				pairs.Add(k.model, k.strategy, scope, name(ua), name(ub), common, ca, cb, inter, union, j)
			}
		}
		formSum, formN := map[string]float64{}, map[string]int{}
		var forms []string
		for _, u := range us {
			if peers[u] == 0 {
				continue
			}
			m := sum[u] / float64(peers[u])
			means.Add(k.model, k.strategy, u[3], u[2], peers[u], m)
			forms = appendNew(forms, u[3])
			formSum[u[3]] += m
			formN[u[3]]++
		}
		for _, f := range forms {
			overall.Add(k.model, k.strategy, f, formN[f], formSum[f]/float64(formN[f]))
		}
	}
	noteCLC(o, pairs, means, overall)
	return pairs, means, overall
}

// clcByUnit is clc_mean's CLC(L) by model, strategy, language and form.
func clcByUnit(means *study.Table) map[tables.Unit]float64 {
	clc := map[tables.Unit]float64{}
	for _, r := range means.Rows {
		clc[tables.Unit{means.Str(r, "model"), means.Str(r, "strategy"), means.Str(r, "language"), means.Str(r, "form")}] = means.Num(r, "mean_jaccard")
	}
	return clc
}

// orNaN is m[k], or NaN when m has no k.
func orNaN[K comparable](m map[K]float64, k K) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

// strategyTestsFrom compares each strategy with the reference ref on the
// same items per model × language × form (McNemar, Holm and BH per model).
func strategyTestsFrom(o tables.Outcomes, ref string, clcMeans *study.Table) *study.Table {
	t := study.NewTable("strategy_tests", "each strategy against the reference on the same items: McNemar exact p, Holm and BH, difference interval",
		append(keys("model", "language", "form", "strategy", "reference", "pairs"),
			study.CountColumn("ref_k", "items right under the reference"),
			study.KeyColumn("k"),
			study.StatisticColumn("diff", "the strategy's accuracy minus the reference's on the same items"),
			study.KeyColumn("diff_lo"),
			study.KeyColumn("diff_hi"),
			study.CountColumn("b", "discordant pairs: right under the reference, wrong under the strategy"),
			study.CountColumn("c", "discordant pairs: wrong under the reference, right under the strategy"),
			study.KeyColumn("mcnemar_p"),
			study.KeyColumn("p_holm"),
			study.KeyColumn("p_bh"),
			study.StatisticColumn("clc_ref", "CLC(L) of the language under the reference (clc_ref) and the strategy (clc), same form"),
			study.StatisticColumn("clc", "CLC(L) of the language under the reference (clc_ref) and the strategy (clc), same form"),
			study.StatisticColumn("clc_gain", "clc − clc_ref"))...)
	t.Mirrors = "IndicKLAR Fig. 3 (significance)"
	clc := clcByUnit(clcMeans)
	var cells [][4]string
	for k := range o {
		if _, ok := o[[4]string{k[0], ref, k[2], k[3]}]; ok && k[1] != ref {
			cells = append(cells, k)
		}
	}
	study.SortBy(cells, func(c [4]string) []string { return []string{c[0], c[2], c[3], c[1]} })
	type line struct {
		c                  [4]string
		pairs, rk, k, b, d int
		p                  float64
	}
	byModel := map[string][]line{}
	for _, c := range cells {
		l := line{c: c}
		l.pairs, l.rk, l.k, l.b, l.d = tables.Paired(o[[4]string{c[0], ref, c[2], c[3]}], o[c])
		l.p = study.McNemarExact(l.b, l.d)
		byModel[c[0]] = append(byModel[c[0]], l)
	}
	for _, m := range study.SortedKeys(byModel) {
		ls := byModel[m]
		tables.Adjusted(ls, func(l line) float64 { return l.p }, func(l line, holm, bh float64) {
			d, lo, hi := study.PairedDiffCI(l.b, l.d, l.pairs, 0.95)
			cr, cs := orNaN(clc, tables.Unit{m, ref, l.c[2], l.c[3]}), orNaN(clc, tables.Unit(l.c))
			t.Add(m, l.c[2], l.c[3], l.c[1], ref, l.pairs, l.rk, l.k, d, lo, hi, l.b, l.d, l.p, holm, bh, cr, cs, cs-cr)
		})
	}
	noteStrategyTests(t, o, ref)
	return t
}

// CLCMatrix lays the reference strategy and each other strategy in one
// square matrix per model and form, as IndicKLAR's Fig. 4 does: the cell
// (row, col) holds the reference's Jaccard index above the diagonal
// (row < col) and the strategy's below it (row > col), over the languages
// of that form both ran; the diagonal is 1.
func CLCMatrix(pairs *study.Table, ref string) *study.Table {
	t := study.NewTable("clc_matrix", "pairwise CLC matrix per model and form: reference above, strategy below the diagonal",
		append(keys("model", "form"),
			study.TextColumn("upper", "the reference strategy, whose Jaccard indices fill the upper triangle (as Fig. 4)"),
			study.TextColumn("lower", "the strategy whose Jaccard indices fill the lower triangle"),
			study.TextColumn("row", "a language of the matrix's form"),
			study.TextColumn("col", "a language of the matrix's form"),
			study.ProportionColumn("jaccard", "intersection / union (cross-lingual consistency)"))...)
	t.Mirrors = "IndicKLAR Fig. 4"
	type key struct{ model, strategy, a, b string }
	j := map[key]float64{}
	type msf struct{ model, strategy, form string }
	langs := map[msf]map[string]bool{} // model, strategy, form → languages
	for _, r := range pairs.Rows {
		scope := pairs.Str(r, "scope")
		if scope == "cross-form" {
			continue
		}
		m, s, a, b := pairs.Str(r, "model"), pairs.Str(r, "strategy"), pairs.Str(r, "a"), pairs.Str(r, "b")
		la, lb := strings.TrimSuffix(a, "/"+scope), strings.TrimSuffix(b, "/"+scope)
		j[key{m, s, a, b}], j[key{m, s, b, a}] = pairs.Num(r, "jaccard"), pairs.Num(r, "jaccard")
		k := msf{m, s, scope}
		put(langs, k, la, true)
		put(langs, k, lb, true)
	}
	var ks []msf
	for k := range langs {
		if k.strategy != ref && langs[msf{k.model, ref, k.form}] != nil {
			ks = append(ks, k)
		}
	}
	study.SortBy(ks, func(k msf) []string { return []string{k.model, k.form, k.strategy} })
	for _, k := range ks {
		ls := slices.DeleteFunc(study.SortedKeys(langs[k]), func(l string) bool { return !langs[msf{k.model, ref, k.form}][l] })
		for r, rl := range ls {
			for c, cl := range ls {
				a, b := rl+"/"+k.form, cl+"/"+k.form
				v := 1.0
				switch {
				case r < c:
					v = orNaN(j, key{k.model, ref, a, b})
				case r > c:
					v = orNaN(j, key{k.model, k.strategy, a, b})
				}
				t.Add(k.model, k.form, ref, k.strategy, rl, cl, v)
			}
		}
	}
	noteCLCMatrix(t, pairs, ref)
	return t
}
