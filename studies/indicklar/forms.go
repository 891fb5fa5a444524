package indicklar

import (
	"maps"
	"math"
	"math/rand/v2"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// formGapsFrom compares the native, code-mixed and English forms of the
// same facts per model × baseline strategy × language (paired gap, McNemar).
func formGapsFrom(o tables.Outcomes) *study.Table {
	t := study.NewTable("form_gaps", "native, code-mixed and English accuracy on the same items, gaps with intervals and McNemar p",
		append(keys("model", "strategy", "language"),
			study.TextColumn("a", "the first unit (language/form) of the pair"),
			study.TextColumn("b", "the second unit (language/form) of the pair"),
			study.KeyColumn("pairs"),
			study.CountColumn("k_a", "answers right, of a"),
			study.CountColumn("k_b", "answers right, of b"),
			study.ProportionColumn("acc_a", "accuracy of a"),
			study.ProportionColumn("acc_b", "accuracy of b"),
			study.StatisticColumn("gap", "accuracy of a minus accuracy of b on the same items"),
			study.LowerColumn("gap_lo", "lower bound of the 95% interval of gap"),
			study.UpperColumn("gap_hi", "upper bound of the 95% interval of gap"),
			study.CountColumn("b_only_a", "items right only under a"),
			study.CountColumn("b_only_b", "items right only under b"),
			study.KeyColumn("mcnemar_p"))...)
	t.Mirrors = "IndicKLAR Fig. 2 / §5.1"
	var keys [][4]string
	for k := range o {
		if (k[1] == "baseline" || k[1] == "baseline-cands") && k[3] == "native" {
			keys = append(keys, k)
		}
	}
	study.SortBy(keys, func(k [4]string) []string { return k[:] })
	for _, k := range keys {
		nat := o[k]
		cm := o[[4]string{k[0], k[1], k[2], "code-mixed"}]
		en := o[[4]string{k[0], k[1], "eng", "english"}]
		for _, cmp := range []struct {
			a, b string
			x, y map[string]bool
		}{{"english", "native", en, nat}, {"english", "code-mixed", en, cm}, {"code-mixed", "native", cm, nat}} {
			if cmp.x == nil || cmp.y == nil {
				continue
			}
			n, ka, kb, da, db := tables.Paired(cmp.x, cmp.y)
			gap, lo, hi := study.PairedDiffCI(db, da, n, 0.95) // (a right only − b right only)/n
			t.Add(k[0], k[1], k[2], cmp.a, cmp.b, n, ka, kb, tables.Frac(ka, n), tables.Frac(kb, n), gap, lo, hi, da, db, study.McNemarExact(da, db))
		}
	}
	return t
}

// FormGapSummary averages form_gaps' gaps over languages, per model and
// over languages × models (model "*"), per baseline strategy and form
// pair (§5.1), with a percentile bootstrap 95% interval (10,000
// resamples, seed 12345).
func FormGapSummary(gaps *study.Table) *study.Table {
	t := study.NewTable("form_gap_summary", "the form gaps (English − native, English − code-mixed, code-mixed − native) averaged over languages, per model and over models, with bootstrap intervals",
		append(keys("model", "strategy"),
			study.TextColumn("a", "the forms compared (gap = accuracy of a − accuracy of b)"),
			study.TextColumn("b", "the forms compared (gap = accuracy of a − accuracy of b)"),
			study.CountColumn("cells", "language (× model) cells averaged"),
			study.StatisticColumn("mean_gap", "mean of the per-language gaps"),
			study.LowerColumn("mean_gap_lo", "lower bound of the 95% interval of mean_gap"),
			study.UpperColumn("mean_gap_hi", "upper bound of the 95% interval of mean_gap"))...)
	t.Mirrors = "IndicKLAR §5.1 / Fig. 2"
	type key struct{ model, strategy, a, b string }
	vals := map[key][]float64{}
	for _, r := range gaps.Rows {
		g := gaps.Num(r, "gap")
		if math.IsNaN(g) {
			continue
		}
		for _, m := range []string{gaps.Str(r, "model"), "*"} {
			k := key{m, gaps.Str(r, "strategy"), gaps.Str(r, "a"), gaps.Str(r, "b")}
			vals[k] = append(vals[k], g)
		}
	}
	keys := study.SortedKeysBy(vals, func(k key) []string { return []string{k.model, k.strategy, k.a, k.b} })
	for _, k := range keys {
		v := vals[k]
		m, lo, hi := stats.PairedBootstrap(v, 0.95, 10000, rand.New(rand.NewPCG(12345, 3))) // v is never empty (empty: NaN, as the plain mean it fell back to)
		t.Add(k.model, k.strategy, k.a, k.b, len(v), m, lo, hi)
	}
	return t
}

// flipPointsFrom counts the native items that flip from wrong to right
// (§5.7) per model × language, from the reference baseline along the
// strategies and along the inputs, each step over the items still wrong.
func flipPointsFrom(o tables.Outcomes, ref string) *study.Table {
	t := study.NewTable("flip_points", "where answers flip from wrong to right along Baseline → TinT-CM → TinT-EN and native → code-mixed → English",
		append(keys("model", "language"),
			study.TextColumn("path", "the sequence of strategies or forms followed"),
			study.TextColumn("step", "the step along the path"),
			study.CountColumn("from", "answers wrong at the step's start"),
			study.CountColumn("flipped", "answers that turn from wrong to right at the step"),
			study.CountColumn("base_wrong", "the baseline-incorrect items the path starts from (wrong at the baseline, answered at the first step)"),
			study.ProportionColumn("share", "flipped / base_wrong: the share of the baseline-incorrect instances recovered at the step (the project page's)"),
			study.LowerColumn("share_lo", "lower bound of the 95% interval of share"),
			study.UpperColumn("share_hi", "upper bound of the 95% interval of share"),
			study.ProportionColumn("share_of_from", "flipped / from: the share of the answers still wrong at the step's start (Bhasha's, beside)"),
			study.LowerColumn("share_of_from_lo", "lower bound of the 95% interval of share_of_from"),
			study.UpperColumn("share_of_from_hi", "upper bound of the 95% interval of share_of_from"),
			study.TextColumn("baseline", "the reference baseline the path starts from (the experiment's reference: when it is a baseline)"))...)
	t.Mirrors = "IndicKLAR Table 15 / Fig. 8"
	has := map[string]bool{}
	for k := range o {
		has[k[1]] = true
	}
	ref = baselineReference(ref, has)
	var keys [][4]string
	for k := range o {
		if k[1] == ref && k[3] == "native" && k[2] != "eng" {
			keys = append(keys, k)
		}
	}
	study.SortBy(keys, func(k [4]string) []string { return k[:] })
	for _, k := range keys {
		model, l := k[0], k[2]
		paths := []struct {
			name  string
			steps []string
			sets  []map[string]bool
		}{
			{"strategy", []string{"tint-cm", "tint-en"}, []map[string]bool{o[[4]string{model, "tint-cm", l, "native"}], o[[4]string{model, "tint-en", l, "native"}]}},
			{"input", []string{"code-mixed", "english"}, []map[string]bool{o[[4]string{model, ref, l, "code-mixed"}], o[[4]string{model, ref, "eng", "english"}]}},
		}
		for _, p := range paths {
			wrong := maps.Clone(o[k]) // the items wrong so far, answered at each step
			maps.DeleteFunc(wrong, func(_ string, ok bool) bool { return ok })
			base := -1 // the first step's from
			for i, set := range p.sets {
				if set == nil {
					break
				}
				from, flipped := 0, 0
				maps.DeleteFunc(wrong, func(it string, _ bool) bool {
					ok, seen := set[it]
					if seen {
						from++
					}
					if ok {
						flipped++
					}
					return !seen || ok
				})
				if base < 0 {
					base = from
				}
				sh, of := study.NewProportion(flipped, base), study.NewProportion(flipped, from)
				t.Add(model, l, p.name, p.steps[i], from, flipped, base, sh.P, sh.Lo, sh.Hi, of.P, of.Lo, of.Hi, ref)
			}
		}
	}
	noteFlipPoints(t, len(keys), ref)
	return t
}
