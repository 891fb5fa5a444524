package tables

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// outcomes indexes correctness by model × strategy × language × form → item.
type outcomes map[[4]string]map[string]bool

func index(rows []score.Row) outcomes {
	o := outcomes{}
	for _, r := range rows { // a failed answer is a wrong one (Correct is false), as the authors count it
		k := [4]string{r.Key.Model, r.Key.Strategy, r.Key.Language, r.Key.Form}
		if o[k] == nil {
			o[k] = map[string]bool{}
		}
		o[k][r.Key.Item] = r.Correct
	}
	return o
}

// paired compares two outcome sets on their common items: the number of
// pairs, the correct counts of each, the discordant counts b (a right, b
// wrong) and c (a wrong, b right).
func paired(a, b map[string]bool) (n, ka, kb, disA, disB int) {
	for it, x := range a {
		y, ok := b[it]
		if !ok {
			continue
		}
		n++
		if x {
			ka++
		}
		if y {
			kb++
		}
		if x && !y {
			disA++
		}
		if !x && y {
			disB++
		}
	}
	return
}

func frac(k, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

// FormGaps compares, per model × baseline strategy × language, the native,
// code-mixed and English forms of the same facts: accuracy over the items
// both forms answered, the gap with its paired Wald interval, and
// McNemar's exact p.
func FormGaps(rows []score.Row) *Table { return formGapsFrom(index(rows)) }

func formGapsFrom(o outcomes) *Table {
	t := &Table{Name: "form_gaps", Header: []string{"model", "strategy", "language", "a", "b", "pairs", "k_a", "k_b", "acc_a", "acc_b", "gap", "gap_lo", "gap_hi", "b_only_a", "b_only_b", "mcnemar_p"}}
	var keys [][4]string
	for k := range o {
		if (k[1] == "baseline" || k[1] == "baseline-cands") && k[3] == "native" {
			keys = append(keys, k)
		}
	}
	sortKeys(keys)
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
			n, ka, kb, da, db := paired(cmp.x, cmp.y)
			gap, lo, hi := stats.PairedDiffCI(db, da, n, 0.95) // (a right only − b right only)/n
			t.add(k[0], k[1], k[2], cmp.a, cmp.b, n, ka, kb, frac(ka, n), frac(kb, n), gap, lo, hi, da, db, stats.McNemarExact(da, db))
		}
	}
	return t
}

// FormGapSummary averages form_gaps' gaps (acc_a − acc_b on the same
// items) over languages, per model and over languages × models (model
// "*"), per baseline strategy and form pair (IndicKLAR §5.1: the
// English–native and code-mixed–English gaps), with a percentile
// bootstrap 95% interval over the language (× model) cells (10,000
// resamples, seed 12345).
func FormGapSummary(gaps *Table) *Table {
	t := &Table{Name: "form_gap_summary", Header: []string{"model", "strategy", "a", "b", "cells", "mean_gap", "mean_gap_lo", "mean_gap_hi"}}
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
	keys := make([]key, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sortBy(keys, func(k key) []string { return []string{k.model, k.strategy, k.a, k.b} })
	for _, k := range keys {
		v := vals[k]
		m, lo, hi, err := stats.PairedBootstrap(v, 0.95, 10000, rand.New(rand.NewPCG(12345, 3)))
		if err != nil {
			m, lo, hi = mean(v), math.NaN(), math.NaN()
		}
		t.add(k.model, k.strategy, k.a, k.b, len(v), m, lo, hi)
	}
	return t
}

func sortKeys(keys [][4]string) {
	sortBy(keys, func(k [4]string) []string { return k[:] })
}

// FlipPoints counts the transitions from wrong to right (IndicKLAR §5.7),
// per model × language over the native items: along the strategies (of the
// items wrong at the reference baseline, how many TinT-CM gets right; of
// those still wrong, how many TinT-EN gets right) and along the inputs (of
// the items wrong in native form, how many are right code-mixed; of the
// rest, how many in English). Each share carries its Wilson interval.
func FlipPoints(rows []score.Row) *Table { return flipPointsFrom(index(rows)) }

func flipPointsFrom(o outcomes) *Table {
	t := &Table{Name: "flip_points", Header: []string{"model", "language", "path", "step", "from", "flipped", "share", "share_lo", "share_hi"}}
	ref := reference("", o) // the paper's Baseline
	var keys [][4]string
	for k := range o {
		if k[1] == ref && k[3] == "native" && k[2] != "eng" {
			keys = append(keys, k)
		}
	}
	sortKeys(keys)
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
			wrong := map[string]bool{}
			for it, ok := range o[k] {
				if !ok {
					wrong[it] = true
				}
			}
			for i, set := range p.sets {
				if set == nil {
					break
				}
				from, flipped := 0, 0
				still := map[string]bool{}
				for it := range wrong {
					ok, seen := set[it]
					if !seen {
						continue
					}
					from++
					if ok {
						flipped++
					} else {
						still[it] = true
					}
				}
				pr := stats.NewProportion(flipped, from)
				t.add(model, l, p.name, p.steps[i], from, flipped, pr.P, pr.Lo, pr.Hi)
				wrong = still
			}
		}
	}
	noteFlipPoints(t, len(keys), ref)
	return t
}

// Families pools accuracy per model × strategy × form × language family
// (Indo-Aryan, Dravidian, ...), with Wilson intervals; language families
// come from the registry.
func Families(rows []score.Row) *Table {
	t := &Table{Name: "families", Header: []string{"model", "strategy", "form", "family", "languages", "k", "n", "rate", "ci_lo", "ci_hi", "failed"}}
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
		if langs[x] == nil {
			langs[x] = map[string]bool{}
		}
		langs[x][l.ISO3] = true
	}
	keys := make([]key, 0, len(n))
	for x := range n {
		keys = append(keys, x)
	}
	sortBy(keys, func(x key) []string { return []string{x.model, x.strategy, x.form, x.family} })
	for _, x := range keys {
		p := stats.NewProportion(k[x], n[x])
		t.add(x.model, x.strategy, x.form, x.family, len(langs[x]), k[x], n[x], p.P, p.Lo, p.Hi, failed[x])
	}
	return t
}

// Relations is accuracy per model × strategy × language × form × relation
// (the data of the per-relation radar charts).
func Relations(rows []score.Row) *Table {
	t := &Table{Name: "relations", Header: []string{"model", "strategy", "language", "form", "relation", "k", "n", "rate", "ci_lo", "ci_hi", "failed"}}
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
	keys := make([]key, 0, len(n))
	for x := range n {
		keys = append(keys, x)
	}
	sortBy(keys, func(x key) []string { return []string{x.model, x.strategy, x.language, x.form, x.rel} })
	for _, x := range keys {
		p := stats.NewProportion(k[x], n[x])
		t.add(x.model, x.strategy, x.language, x.form, x.rel, k[x], n[x], p.P, p.Lo, p.Hi, failed[x])
	}
	return t
}

// LanguageTests tests each strategy's gain over the reference across
// languages, per model and measure: acc (the per-language accuracy
// difference on the same native items) and clc (the difference of the
// native CLC(L)). As the paper's A.3/A.4 state them: the mean gain with its
// paired bootstrap 95% interval (10,000 resamples, seed 12345) and the
// exact sign-flip permutation p; the robust variant beside: the median
// gain and Wilcoxon's signed-rank test (SciPy's auto method); and the
// languages with a positive gain (A.4).
func LanguageTests(rows []score.Row, ref string) *Table {
	o := index(rows)
	_, means, _ := clcFrom(o)
	ref = reference(ref, o)
	return languageTestsFrom(languageGains(o, ref, means), ref)
}

// gainKey names one set of per-language gains.
type gainKey struct{ model, strategy, measure string }

// languageGains is each strategy's gain over the reference per model ×
// measure × native language: acc on the same items, clc of CLC(L).
func languageGains(o outcomes, ref string, clcMeans *Table) map[gainKey]map[string]float64 {
	gains := map[gainKey]map[string]float64{}
	put := func(k gainKey, lang string, v float64) {
		if gains[k] == nil {
			gains[k] = map[string]float64{}
		}
		gains[k][lang] = v
	}
	for k, set := range o {
		if k[1] == ref || k[3] != "native" {
			continue
		}
		base := o[[4]string{k[0], ref, k[2], "native"}]
		if base == nil {
			continue
		}
		n, kb, ks, _, _ := paired(base, set)
		if n > 0 {
			put(gainKey{k[0], k[1], "acc"}, k[2], float64(ks-kb)/float64(n))
		}
	}
	clc := map[[3]string]float64{} // model, strategy, language → native CLC(L)
	for _, r := range clcMeans.Rows {
		if clcMeans.Str(r, "form") == "native" {
			clc[[3]string{clcMeans.Str(r, "model"), clcMeans.Str(r, "strategy"), clcMeans.Str(r, "language")}] = clcMeans.Num(r, "mean_jaccard")
		}
	}
	for k, v := range clc {
		if k[1] == ref {
			continue
		}
		if b, ok := clc[[3]string{k[0], ref, k[2]}]; ok {
			put(gainKey{k[0], k[1], "clc"}, k[2], v-b)
		}
	}
	return gains
}

func languageTestsFrom(byLang map[gainKey]map[string]float64, ref string) *Table {
	t := &Table{Name: "language_tests", Header: []string{"model", "strategy", "reference", "measure", "languages", "positive", "mean_gain", "mean_gain_lo", "mean_gain_hi", "perm_p",
		"median_gain", "wilcoxon_T", "wilcoxon_p", "method"}}
	type msm = gainKey
	gains := map[msm][]float64{}
	for k, m := range byLang {
		for _, v := range m {
			gains[k] = append(gains[k], v)
		}
	}
	keys := make([]msm, 0, len(gains))
	for x := range gains {
		keys = append(keys, x)
	}
	sortBy(keys, func(x msm) []string { return []string{x.model, x.strategy, x.measure} })
	for _, x := range keys {
		g := gains[x]
		sort.Float64s(g) // a fixed order: the bootstrap draws from it
		pos := 0
		for _, v := range g {
			if v > 0 {
				pos++
			}
		}
		mean, lo, hi, err := stats.PairedBootstrap(g, 0.95, 10000, rand.New(rand.NewPCG(12345, 0)))
		if err != nil {
			mean, lo, hi = math.NaN(), math.NaN(), math.NaN()
		}
		_, pp, err := stats.PairedPermutation(g, 20, 10000, rand.New(rand.NewPCG(12345, 1)))
		if err != nil {
			pp = math.NaN()
		}
		med := quantileSorted(g, 0.5)
		res, err := stats.Wilcoxon(g, stats.WilcoxonAuto)
		method := "exact"
		if len(g) > 50 || hasZero(g) {
			method = "normal"
		}
		if err != nil {
			res.T, res.P, method = math.NaN(), math.NaN(), err.Error()
		}
		t.add(x.model, x.strategy, ref, x.measure, len(g), pos, mean, lo, hi, pp, med, res.T, res.P, method)
	}
	return t
}

func hasZero(x []float64) bool {
	for _, v := range x {
		if v == 0 {
			return true
		}
	}
	return false
}

func quantileSorted(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	h := q * float64(len(s)-1)
	i := int(math.Floor(h))
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}

// Tokenization relates prompt length to accuracy across languages (IndicKLAR
// A.9), per model: for each language, the mean prompt tokens of the
// reference baseline's native prompts — counted offline with the model's
// tokenizer.json when the experiment names one (source "tokenizer.json"),
// else as the server counted them (source "server") — and that baseline's
// accuracy; then Pearson and Spearman correlations with two-sided p over
// the languages (rows with language "*").
func Tokenization(rows []score.Row) *Table {
	t := &Table{Name: "tokenization", Header: []string{"model", "language", "n", "mean_prompt_tokens", "source", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"}}
	ref := "baseline"
	for _, r := range rows {
		if r.Key.Strategy == "baseline-cands" {
			ref = "baseline-cands"
			break
		}
	}
	type ml struct{ model, lang string }
	tok, n, k := map[ml]float64{}, map[ml]int{}, map[ml]int{}
	offline := map[string]bool{}
	for _, r := range rows {
		if !r.Failed && r.Key.Strategy == ref && r.OfflineTokens > 0 {
			offline[r.Key.Model] = true
		}
	}
	for _, r := range rows {
		if r.Failed || r.Key.Strategy != ref || r.Key.Form != "native" {
			continue
		}
		c := r.PromptTokens
		if offline[r.Key.Model] {
			c = r.OfflineTokens
		}
		if c == 0 {
			continue
		}
		x := ml{r.Key.Model, r.Key.Language}
		tok[x] += float64(c)
		n[x]++
		if r.Correct {
			k[x]++
		}
	}
	models := map[string][]string{}
	for x := range n {
		models[x.model] = append(models[x.model], x.lang)
	}
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		src := "server"
		if offline[m] {
			src = "tokenizer.json"
		}
		ls := models[m]
		sort.Strings(ls)
		var xs, ys []float64
		for _, l := range ls {
			x := ml{m, l}
			mt, acc := tok[x]/float64(n[x]), frac(k[x], n[x])
			xs, ys = append(xs, mt), append(ys, acc)
			t.add(m, l, n[x], mt, src, acc, math.NaN(), math.NaN(), math.NaN(), math.NaN())
		}
		pr, pp, err1 := stats.Pearson(xs, ys)
		sr, sp, err2 := stats.Spearman(xs, ys)
		if err1 != nil {
			pr, pp = math.NaN(), math.NaN()
		}
		if err2 != nil {
			sr, sp = math.NaN(), math.NaN()
		}
		t.add(m, "*", len(xs), math.NaN(), src, math.NaN(), pr, pp, sr, sp)
	}
	return t
}

// Latency is the end-to-end time per answer of each strategy, per model
// (every stage's latency summed, so a two-step strategy's includes its
// first stage; answers with a stage served from the cache are not timed):
// count, mean, median and 90th percentile, with the accuracy, the
// accuracy–latency trade-off. It is client-observed latency under the
// run's concurrency and servers, not the paper's offline vLLM batch time.
func Latency(rows []score.Row) *Table {
	t := &Table{Name: "latency", Header: []string{"model", "strategy", "n_timed", "mean_ms", "median_ms", "p90_ms", "k", "n", "accuracy", "failed"}}
	type ms struct{ model, strategy string }
	lat := map[ms][]float64{}
	k, n, failed := map[ms]int{}, map[ms]int{}, map[ms]int{}
	for _, r := range rows {
		x := ms{r.Key.Model, r.Key.Strategy}
		n[x]++
		if r.Failed {
			failed[x]++
			continue
		}
		if r.Correct {
			k[x]++
		}
		if !r.Cached && r.LatencyMS > 0 {
			lat[x] = append(lat[x], r.LatencyMS)
		}
	}
	keys := make([]ms, 0, len(n))
	for x := range n {
		keys = append(keys, x)
	}
	sortBy(keys, func(x ms) []string { return []string{x.model, x.strategy} })
	for _, x := range keys {
		l := summarize(lat[x])
		t.add(x.model, x.strategy, l.n, l.mean, l.median, l.p90, k[x], n[x], frac(k[x], n[x]), failed[x])
	}
	return t
}

// timing summarises latencies: count, mean, median and 90th percentile
// (NaN when empty).
type timing struct {
	n                 int
	mean, median, p90 float64
}

func summarize(lat []float64) timing {
	s := append([]float64(nil), lat...)
	sort.Float64s(s)
	mean := math.NaN()
	if len(s) > 0 {
		mean = 0
		for _, v := range s {
			mean += v
		}
		mean /= float64(len(s))
	}
	return timing{len(s), mean, quantileSorted(s, 0.5), quantileSorted(s, 0.9)}
}

// Requests summarises a run without gold answers per model × strategy ×
// condition: answers, failed requests, empty and cached answers, the
// latency of the answers not served from the cache (count, mean, median,
// 90th percentile) and the mean prompt tokens the server counted.
func Requests(rows []score.Row) *Table {
	t := &Table{Name: "requests", Header: []string{"model", "strategy", "condition", "n", "failed", "empty", "cached", "n_timed", "mean_ms", "median_ms", "p90_ms", "mean_prompt_tokens"}}
	type cell struct{ model, strategy, condition string }
	type acc struct {
		n, failed, empty, cached, tokN int
		tok                            float64
		lat                            []float64
	}
	by := map[cell]*acc{}
	for _, r := range rows {
		c := cell{r.Key.Model, r.Key.Strategy, r.Key.Condition}
		a := by[c]
		if a == nil {
			a = &acc{}
			by[c] = a
		}
		if r.Failed {
			a.failed++
			continue
		}
		a.n++
		if r.EmptyResponse {
			a.empty++
		}
		if r.Cached {
			a.cached++
		} else if r.LatencyMS > 0 {
			a.lat = append(a.lat, r.LatencyMS)
		}
		if r.PromptTokens > 0 {
			a.tok += float64(r.PromptTokens)
			a.tokN++
		}
	}
	keys := make([]cell, 0, len(by))
	for c := range by {
		keys = append(keys, c)
	}
	sortBy(keys, func(c cell) []string { return []string{c.model, c.strategy, c.condition} })
	for _, c := range keys {
		a := by[c]
		l := summarize(a.lat)
		tok := math.NaN()
		if a.tokN > 0 {
			tok = a.tok / float64(a.tokN)
		}
		t.add(c.model, c.strategy, c.condition, a.n, a.failed, a.empty, a.cached, l.n, l.mean, l.median, l.p90, tok)
	}
	return t
}

// FamilyTests compares Indo-Aryan with Dravidian languages per model ×
// strategy × form on the pooled answers: both rates, their difference
// with its Wald interval, the two-proportion z test and Fisher's exact test.
func FamilyTests(fam *Table) *Table {
	t := &Table{Name: "family_tests", Header: []string{"model", "strategy", "form", "k_indo_aryan", "n_indo_aryan", "k_dravidian", "n_dravidian", "diff", "diff_lo", "diff_hi", "z", "p_twoprop", "p_fisher"}}
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
		d, lo, hi := stats.DiffCI(ia[0], ia[1], dr[0], dr[1], 0.95)
		z, p, _ := stats.TwoProportionZ(ia[0], ia[1], dr[0], dr[1])
		_, pf := stats.FisherExact(ia[0], ia[1]-ia[0], dr[0], dr[1]-dr[0])
		t.add(k.model, k.strategy, k.form, ia[0], ia[1], dr[0], dr[1], d, lo, hi, z, p, pf)
	}
	noteFamilyTests(t, fam)
	return t
}

// FamilyGainTests compares the gains of Indo-Aryan and Dravidian languages
// (IndicKLAR §5.4 is about gains, not levels), per model × strategy ×
// measure (acc, clc): each family's languages and mean gain (as the paper
// states them) with the difference and the exact two-sample permutation
// p (stats.TwoSamplePermutation), and each family's median gain (the
// robust variant).
func FamilyGainTests(rows []score.Row, ref string) *Table {
	o := index(rows)
	_, means, _ := clcFrom(o)
	ref = reference(ref, o)
	return familyGainTestsFrom(languageGains(o, ref, means), ref)
}

func familyGainTestsFrom(gains map[gainKey]map[string]float64, ref string) *Table {
	t := &Table{Name: "family_gain_tests", Header: []string{"model", "strategy", "reference", "measure", "n_indo_aryan", "mean_gain_indo_aryan", "n_dravidian", "mean_gain_dravidian",
		"diff", "perm_p", "median_gain_indo_aryan", "median_gain_dravidian"}}
	reg := lang.New()
	keys := make([]gainKey, 0, len(gains))
	for k := range gains {
		keys = append(keys, k)
	}
	sortBy(keys, func(k gainKey) []string { return []string{k.model, k.strategy, k.measure} })
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
		diff, p, err := stats.TwoSamplePermutation(ia, dr, 200000, 10000, rand.New(rand.NewPCG(12345, 2)))
		if err != nil {
			diff, p = math.NaN(), math.NaN()
		}
		t.add(k.model, k.strategy, ref, k.measure, len(ia), mean(ia), len(dr), mean(dr), diff, p, quantileSorted(ia, 0.5), quantileSorted(dr, 0.5))
	}
	noteFamilyGainTests(t, gains, ref)
	return t
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// DatasetStats describes the items a study asked (IndicKLAR Table 5), per
// form and language and per form pooled over languages (language "*"):
// the instances, and the average question and answer length in words
// (white-space separated, as the paper's "query" and "answer length"
// presumably count; the paper does not say).
func DatasetStats(set *item.Set, languages []string, forms []string) *Table {
	t := &Table{Name: "dataset_stats", Header: []string{"form", "language", "instances", "avg_query_words", "avg_answer_words"}}
	type cell struct{ form, lang string }
	type acc struct{ n, q, a int }
	by := map[cell]*acc{}
	wantL := map[string]bool{}
	for _, l := range languages {
		wantL[l] = true
	}
	wantF := map[string]bool{}
	for _, f := range forms {
		wantF[f] = true
	}
	for _, it := range set.Items {
		for _, v := range it.Variants {
			if (len(wantL) > 0 && !wantL[v.Language]) || (len(wantF) > 0 && !wantF[string(v.Form)]) || v.Question == "" {
				continue
			}
			for _, c := range []cell{{string(v.Form), v.Language}, {string(v.Form), "*"}} {
				x := by[c]
				if x == nil {
					x = &acc{}
					by[c] = x
				}
				x.n++
				x.q += len(strings.Fields(v.Question))
				x.a += len(strings.Fields(v.Answer))
			}
		}
	}
	keys := make([]cell, 0, len(by))
	for c := range by {
		keys = append(keys, c)
	}
	sortBy(keys, func(c cell) []string { return []string{c.form, c.lang} })
	for _, c := range keys {
		x := by[c]
		t.add(c.form, c.lang, x.n, float64(x.q)/float64(x.n), float64(x.a)/float64(x.n))
	}
	return t
}

// StrategyFamilies sets each strategy family's variants side by side
// (IndicKLAR A.3: 1Step, 2Step, TinT): per variant, the mean gain over
// the reference across language × model cells in accuracy and in native
// CLC(L), each with a percentile bootstrap 95% interval (10,000
// resamples, seed 12345), and the mean end-to-end latency of the variant
// and of the reference; best marks the family's variant with the highest
// mean accuracy gain. family names a strategy's family ("" for none).
func StrategyFamilies(rows []score.Row, ref string, family func(strategy string) string) *Table {
	o := index(rows)
	ref = reference(ref, o)
	_, means, _ := clcFrom(o)
	return strategyFamiliesFrom(rows, languageGains(o, ref, means), ref, family)
}

func strategyFamiliesFrom(rows []score.Row, gains map[gainKey]map[string]float64, ref string, family func(string) string) *Table {
	t := &Table{Name: "strategy_families", Header: []string{"family", "strategy", "best", "reference", "cells", "mean_acc_gain", "mean_acc_gain_lo", "mean_acc_gain_hi",
		"clc_cells", "mean_clc_gain", "mean_clc_gain_lo", "mean_clc_gain_hi", "mean_ms", "ref_mean_ms"}}
	acc, clc := map[string][]float64{}, map[string][]float64{}
	for k, byLang := range gains {
		if family(k.strategy) == "" {
			continue
		}
		for _, v := range byLang {
			if k.measure == "acc" {
				acc[k.strategy] = append(acc[k.strategy], v)
			} else {
				clc[k.strategy] = append(clc[k.strategy], v)
			}
		}
	}
	lat := map[string][]float64{}
	for _, r := range rows {
		if !r.Failed && !r.Cached && r.LatencyMS > 0 {
			lat[r.Key.Strategy] = append(lat[r.Key.Strategy], r.LatencyMS)
		}
	}
	boot := func(v []float64, stream uint64) (m, lo, hi float64) {
		sort.Float64s(v)
		m, lo, hi, err := stats.PairedBootstrap(v, 0.95, 10000, rand.New(rand.NewPCG(12345, stream)))
		if err != nil {
			return math.NaN(), math.NaN(), math.NaN()
		}
		return m, lo, hi
	}
	type variant struct {
		family, strategy string
		acc              float64
	}
	var vs []variant
	best := map[string]variant{}
	for s, v := range acc {
		x := variant{family(s), s, mean(v)}
		vs = append(vs, x)
		if b, ok := best[x.family]; !ok || x.acc > b.acc || (x.acc == b.acc && x.strategy < b.strategy) {
			best[x.family] = x
		}
	}
	sortBy(vs, func(v variant) []string { return []string{v.family, v.strategy} })
	for _, v := range vs {
		am, alo, ahi := boot(acc[v.strategy], 4)
		cm, clo, chi := boot(clc[v.strategy], 5)
		t.add(v.family, v.strategy, best[v.family].strategy == v.strategy, ref, len(acc[v.strategy]), am, alo, ahi,
			len(clc[v.strategy]), cm, clo, chi, mean(lat[v.strategy]), mean(lat[ref]))
	}
	return t
}
