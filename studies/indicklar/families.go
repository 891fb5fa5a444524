package indicklar

import (
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// Families pools accuracy per model × strategy × form × language family
// (Indo-Aryan, Dravidian, ...), with Wilson intervals; language families
// come from the registry.
func Families(rows []study.Row) *study.Table {
	t := study.NewTable("families", "accuracy pooled by language family", slices.Concat(keys("model", "strategy", "form"),
		[]study.Column{study.TextColumn("family", "language family"), study.CountColumn("languages", "languages pooled or tested")}, rateColumns)...)
	t.Mirrors = "IndicKLAR §5.4"
	reg := lang.New()
	type key struct{ model, strategy, form, family string }
	k, n, failed := map[key]int{}, map[key]int{}, map[key]int{}
	langs := map[key]map[string]bool{}
	for _, r := range rows {
		l, ok := reg.Find(r.Key.Language)
		if !ok {
			continue
		}
		x := key{r.Key.Model, r.Key.Strategy, r.Key.Form, string(l.Family)}
		n[x]++
		if r.Failed {
			failed[x]++
		}
		if r.Correct {
			k[x]++
		}
		put(langs, x, l.ISO3, true)
	}
	keys := study.SortedKeysBy(n, func(x key) []string { return []string{x.model, x.strategy, x.form, x.family} })
	for _, x := range keys {
		p := study.NewProportion(k[x], n[x])
		t.Add(x.model, x.strategy, x.form, x.family, len(langs[x]), k[x], n[x], p.P, p.Lo, p.Hi, failed[x])
	}
	return t
}

// Relations is accuracy per model × strategy × language × form × relation
// (the data of the per-relation radar charts).
func Relations(rows []study.Row) *study.Table {
	t := study.NewTable("relations", "accuracy per relation", slices.Concat(keys("model", "strategy", "language", "form"),
		[]study.Column{study.TextColumn("relation", "the fact's relation (KLAR)")}, rateColumns)...)
	t.Mirrors = "IndicKLAR Fig. 6 (radar)"
	type key struct{ model, strategy, language, form, rel string }
	k, n, failed := map[key]int{}, map[key]int{}, map[key]int{}
	for _, r := range rows {
		x := key{r.Key.Model, r.Key.Strategy, r.Key.Language, r.Key.Form, r.Domain}
		n[x]++
		if r.Failed {
			failed[x]++
		}
		if r.Correct {
			k[x]++
		}
	}
	keys := study.SortedKeysBy(n, func(x key) []string { return []string{x.model, x.strategy, x.language, x.form, x.rel} })
	for _, x := range keys {
		p := study.NewProportion(k[x], n[x])
		t.Add(x.model, x.strategy, x.language, x.form, x.rel, k[x], n[x], p.P, p.Lo, p.Hi, failed[x])
	}
	return t
}

// rateColumns are a pooled rate's columns.
var rateColumns = keys("k", "n", "rate", "ci_lo", "ci_hi", "failed")

// FamilyTests compares Indo-Aryan with Dravidian languages per model ×
// strategy × form on the pooled answers: both rates, their difference
// with its Wald interval, the two-proportion z test and Fisher's exact test.
func FamilyTests(fam *study.Table) *study.Table {
	t := study.NewTable("family_tests", "Indo-Aryan against Dravidian accuracy levels: difference interval, z and Fisher p",
		slices.Concat(keys("model", "strategy", "form"), []study.Column{
			study.CountColumn("k_indo_aryan", "answers right, of indo aryan"),
			study.CountColumn("n_indo_aryan", "answers scored, of indo aryan"),
			study.CountColumn("k_dravidian", "answers right, of dravidian"),
			study.CountColumn("n_dravidian", "answers scored, of dravidian"),
			study.StatisticColumn("diff", "Indo-Aryan rate minus Dravidian rate (levels)")},
			keys("diff_lo", "diff_hi", "z", "p_twoprop", "p_fisher"))...)
	t.Mirrors = "IndicKLAR §5.4 (levels; the section's claim is about gains: family_gain_tests)"
	type key struct{ model, strategy, form string }
	counts := map[key]map[string][2]int{}
	var order []key
	for _, r := range fam.Rows {
		k := key{fam.Str(r, "model"), fam.Str(r, "strategy"), fam.Str(r, "form")}
		if counts[k] == nil {
			counts[k] = map[string][2]int{}
			order = append(order, k)
		}
		counts[k][fam.Str(r, "family")] = [2]int{int(fam.Num(r, "k")), int(fam.Num(r, "n"))}
	}
	for _, k := range order {
		ia, okA := counts[k]["Indo-Aryan"]
		dr, okD := counts[k]["Dravidian"]
		if !okA || !okD {
			continue
		}
		d, lo, hi := study.DiffCI(ia[0], ia[1], dr[0], dr[1], 0.95)
		z, p := study.TwoProportionZ(ia[0], ia[1], dr[0], dr[1])
		_, pf := study.FisherExact(ia[0], ia[1]-ia[0], dr[0], dr[1]-dr[0])
		t.Add(k.model, k.strategy, k.form, ia[0], ia[1], dr[0], dr[1], d, lo, hi, z, p, pf)
	}
	noteFamilyTests(t, fam)
	return t
}

// familyGainTestsFrom compares Indo-Aryan and Dravidian gains (§5.4) per
// model × strategy × measure (permutation p of the means' difference).
func familyGainTestsFrom(gains map[gainKey]map[string]float64, ref string) *study.Table {
	t := study.NewTable("family_gain_tests", "Indo-Aryan against Dravidian on the strategies' gains (accuracy and CLC): mean gains, difference, exact permutation p; medians beside",
		append(keys("model", "strategy", "reference", "measure"),
			study.CountColumn("n_indo_aryan", "languages of the family with a gain"),
			study.StatisticColumn("mean_gain_indo_aryan", "mean gain of the family: indo aryan"),
			study.CountColumn("n_dravidian", "languages of the family with a gain"),
			study.StatisticColumn("mean_gain_dravidian", "mean gain of the family: dravidian"),
			study.StatisticColumn("diff", "Indo-Aryan mean gain minus Dravidian mean gain"),
			study.PValueColumn("perm_p", "two-sided two-sample permutation p of diff (exact over every reassignment of the languages to the two families up to 200,000 of them, else 10,000 random ones)"),
			study.StatisticColumn("median_gain_indo_aryan", "median gain of the family: indo aryan"),
			study.StatisticColumn("median_gain_dravidian", "median gain of the family: dravidian"))...)
	t.Mirrors = "IndicKLAR §5.4"
	reg := lang.New()
	keys := study.SortedKeysBy(gains, func(k gainKey) []string { return []string{k.model, k.strategy, k.measure} })
	for _, k := range keys {
		var ia, dr []float64
		for code, v := range gains[k] {
			l, ok := reg.Find(code)
			if !ok {
				continue
			}
			switch l.Family {
			case lang.IndoAryan:
				ia = append(ia, v)
			case lang.Dravidian:
				dr = append(dr, v)
			}
		}
		if len(ia) == 0 || len(dr) == 0 {
			continue
		}
		sort.Float64s(ia)
		sort.Float64s(dr)
		diff, p := stats.TwoSamplePermutation(ia, dr, 200000, 10000, rand.New(rand.NewPCG(12345, 2)))
		t.Add(k.model, k.strategy, ref, k.measure, len(ia), stats.Mean(ia), len(dr), stats.Mean(dr), diff, p, stats.QuantileSorted(ia, 0.5), stats.QuantileSorted(dr, 0.5))
	}
	noteFamilyGainTests(t, gains, ref)
	return t
}
