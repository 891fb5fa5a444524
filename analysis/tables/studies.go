package tables

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
)

// CLC is cross-lingual consistency, per model and strategy. clc lists
// every pair of language/form units: the Jaccard index |Cₐ ∩ C_b| /
// |Cₐ ∪ C_b| of the sets of items answered correctly (0 when the union is
// empty), over the items both units asked, with the pair's scope (the form
// both share, or "cross-form"). clc_mean is, per form and language, the
// mean over the other languages of the same form (the authors' CLC(L); the
// paper's is the native form's), and clc_overall the mean of those over
// the form's languages (the paper's overall CLC), per model × strategy ×
// form: forms are never mixed (a baseline run on three forms and TinT on
// the native one are compared on the native one).
func CLC(rows []score.Row) (pairs, means, overall *Table) { return clcFrom(index(rows)) }

func clcFrom(o outcomes) (pairs, means, overall *Table) {
	pairs = &Table{Name: "clc", Header: []string{"model", "strategy", "scope", "a", "b", "items", "correct_a", "correct_b", "intersection", "union", "jaccard"}}
	means = &Table{Name: "clc_mean", Header: []string{"model", "strategy", "form", "language", "others", "mean_jaccard"}}
	overall = &Table{Name: "clc_overall", Header: []string{"model", "strategy", "form", "languages", "clc"}}
	type ms struct{ model, strategy string }
	units := map[ms][][4]string{}
	for k := range o {
		units[ms{k[0], k[1]}] = append(units[ms{k[0], k[1]}], k)
	}
	keys := make([]ms, 0, len(units))
	for k := range units {
		keys = append(keys, k)
	}
	sortBy(keys, func(x ms) []string { return []string{x.model, x.strategy} })
	name := func(k [4]string) string { return k[2] + "/" + k[3] }
	for _, k := range keys {
		us := units[k]
		sort.Slice(us, func(i, j int) bool { return us[i][3] < us[j][3] || (us[i][3] == us[j][3] && us[i][2] < us[j][2]) })
		type lf struct{ lang, form string }
		sum, peers := map[lf]float64{}, map[lf]int{}
		for i, ua := range us {
			for _, ub := range us[i+1:] {
				common, ca, cb, onlyA, onlyB := paired(o[ua], o[ub])
				inter, union := ca-onlyA, ca+onlyB
				j := 0.0
				if union > 0 {
					j = float64(inter) / float64(union)
				}
				scope := "cross-form"
				if ua[3] == ub[3] {
					scope = ua[3]
					sum[lf{ua[2], ua[3]}] += j
					sum[lf{ub[2], ub[3]}] += j
					peers[lf{ua[2], ua[3]}]++
					peers[lf{ub[2], ub[3]}]++
				}
				pairs.add(k.model, k.strategy, scope, name(ua), name(ub), common, ca, cb, inter, union, j)
			}
		}
		type fs struct {
			sum float64
			n   int
		}
		byForm := map[string]*fs{}
		var forms []string
		for _, u := range us {
			x := lf{u[2], u[3]}
			if peers[x] == 0 {
				continue
			}
			m := sum[x] / float64(peers[x])
			means.add(k.model, k.strategy, u[3], u[2], peers[x], m)
			if byForm[u[3]] == nil {
				byForm[u[3]] = &fs{}
				forms = append(forms, u[3])
			}
			byForm[u[3]].sum += m
			byForm[u[3]].n++
		}
		for _, f := range forms {
			overall.add(k.model, k.strategy, f, byForm[f].n, byForm[f].sum/float64(byForm[f].n))
		}
	}
	noteCLC(o, pairs, means, overall)
	return pairs, means, overall
}

// StrategyTests compares each strategy with the reference (Reference) on
// the same items, per model × language × form (with both CLC(L) and the
// CLC gain beside the accuracy gain):
// the discordant counts b (reference right, strategy wrong) and c
// (reference wrong, strategy right), the accuracy difference over the
// paired items, McNemar's exact p, and Holm and BH adjustments over the
// tests of each model.
func StrategyTests(rows []score.Row, ref string) *Table {
	o := index(rows)
	_, means, _ := clcFrom(o)
	return strategyTestsFrom(o, reference(ref, o), means)
}

func strategyTestsFrom(o outcomes, ref string, clcMeans *Table) *Table {
	t := &Table{Name: "strategy_tests", Header: []string{"model", "language", "form", "strategy", "reference", "pairs", "ref_k", "k", "diff", "diff_lo", "diff_hi", "b", "c", "mcnemar_p", "p_holm", "p_bh",
		"clc_ref", "clc", "clc_gain"}}
	clc := map[[4]string]float64{} // model, strategy, language, form → CLC(L)
	for _, r := range clcMeans.Rows {
		clc[[4]string{clcMeans.Str(r, "model"), clcMeans.Str(r, "strategy"), clcMeans.Str(r, "language"), clcMeans.Str(r, "form")}] = clcMeans.Num(r, "mean_jaccard")
	}
	clcOf := func(k [4]string) float64 {
		if v, ok := clc[k]; ok {
			return v
		}
		return math.NaN()
	}
	var cells [][4]string
	for k := range o {
		if k[1] != ref {
			if _, ok := o[[4]string{k[0], ref, k[2], k[3]}]; ok {
				cells = append(cells, k)
			}
		}
	}
	sortBy(cells, func(c [4]string) []string { return []string{c[0], c[2], c[3], c[1]} })
	type line struct {
		c                  [4]string
		pairs, rk, k, b, d int
		p                  float64
	}
	byModel := map[string][]line{}
	var order []string
	for _, c := range cells {
		l := line{c: c}
		l.pairs, l.rk, l.k, l.b, l.d = paired(o[[4]string{c[0], ref, c[2], c[3]}], o[c])
		l.p = stats.McNemarExact(l.b, l.d)
		if byModel[c[0]] == nil {
			order = append(order, c[0])
		}
		byModel[c[0]] = append(byModel[c[0]], l)
	}
	for _, m := range order {
		ls := byModel[m]
		adjusted(ls, func(l line) float64 { return l.p }, func(l line, holm, bh float64) {
			d, lo, hi := stats.PairedDiffCI(l.b, l.d, l.pairs, 0.95)
			cr, cs := clcOf([4]string{m, ref, l.c[2], l.c[3]}), clcOf(l.c)
			t.add(m, l.c[2], l.c[3], l.c[1], ref, l.pairs, l.rk, l.k, d, lo, hi, l.b, l.d, l.p, holm, bh, cr, cs, cs-cr)
		})
	}
	noteStrategyTests(t, o, ref)
	return t
}

// adjusted passes each test of one family with its Holm and
// Benjamini–Hochberg adjusted p-values.
func adjusted[T any](tests []T, p func(T) float64, emit func(T, float64, float64)) {
	ps := make([]float64, len(tests))
	for i, x := range tests {
		ps[i] = p(x)
	}
	holm, bh := stats.Holm(ps), stats.BenjaminiHochberg(ps)
	for i, x := range tests {
		emit(x, holm[i], bh[i])
	}
}

// Reference is the strategy the others are compared with: want (the
// experiment's reference:) when given, else Baseline (the paper's Fig. 4
// and A.5 compare with it) when it was run, else Obj-Baseline, else the
// first strategy in name order.
func Reference(want string, rows []score.Row) string {
	has := map[string]bool{}
	for _, r := range rows {
		has[r.Key.Strategy] = true
	}
	return pickReference(want, has)
}

// reference is Reference over an outcome index.
func reference(want string, o outcomes) string {
	has := map[string]bool{}
	for k := range o {
		has[k[1]] = true
	}
	return pickReference(want, has)
}

func pickReference(want string, has map[string]bool) string {
	if want != "" {
		return want
	}
	for _, s := range []string{"baseline", "baseline-cands"} {
		if has[s] {
			return s
		}
	}
	first := ""
	for s := range has {
		if first == "" || s < first {
			first = s
		}
	}
	return first
}

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
func ConditionTests(ms []Metric, rows []score.Row, unpaired bool) *Table {
	header := []string{"model", "strategy", "condition", "metric", "pairs", "k_clean", "k", "diff", "diff_lo", "diff_hi", "b", "c", "mcnemar_p", "p_holm", "p_bh", "family"}
	if unpaired {
		header = append(header, "n_clean", "n", "k_clean_all", "k_all", "z", "p_twoprop", "p_fisher")
	}
	t := &Table{Name: "condition_tests", Header: header}
	type cell struct{ model, strategy, cond string }
	// outcome[cell][metric][item]; a failed answer meets no metric but
	// hallucination, as the authors count it.
	outcome := map[cell][]map[string]bool{}
	for _, r := range rows {
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
	sortBy(cells, func(c cell) []string { return []string{c.model, c.strategy, c.cond} })
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
			if !m.applies(c.strategy) {
				continue
			}
			clean, cond := outcome[cell{c.model, c.strategy, cleanCondition}][mi], outcome[c][mi]
			l := line{c: c, metric: m.Name}
			l.pairs, l.k0, l.k, l.b, l.cc = paired(clean, cond)
			l.p = stats.McNemarExact(l.b, l.cc)
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
	sortBy(order, func(f fam) []string { return []string{f.model, f.metric} })
	for _, f := range order {
		ls := families[f]
		name := fmt.Sprintf("%s / %s: %d tests", f.model, f.metric, len(ls))
		adjusted(ls, func(l line) float64 { return l.p }, func(l line, holm, bh float64) {
			d, lo, hi := stats.PairedDiffCI(l.b, l.cc, l.pairs, 0.95)
			cells := []any{l.c.model, l.c.strategy, l.c.cond, l.metric, l.pairs, l.k0, l.k, d, lo, hi, l.b, l.cc, l.p, holm, bh, name}
			if unpaired {
				z, pz, _ := stats.TwoProportionZ(l.kaN, l.n, l.ka0, l.n0)
				_, pf := stats.FisherExact(l.kaN, l.n-l.kaN, l.ka0, l.n0-l.ka0)
				cells = append(cells, l.n0, l.n, l.ka0, l.kaN, z, pz, pf)
			}
			t.add(cells...)
		})
	}
	sortBy(t.Rows, func(r []any) []string {
		return []string{t.Str(r, "model"), t.Str(r, "strategy"), t.Str(r, "condition"), t.Str(r, "metric")}
	})
	return t
}

// JudgeAgreement compares the IndicQuest judge with each lexical
// criterion per model × language: Cohen's κ and raw agreement over the
// answers with a parsed verdict, both rates and the lexical shortfall
// (judge rate − criterion rate).
func JudgeAgreement(rows []score.Row) *Table {
	t := &Table{Name: "judge_agreement", Header: []string{"model", "language", "criterion", "n", "agree", "kappa", "judge_rate", "criterion_rate", "shortfall"}}
	type cell struct{ model, lang string }
	byCell := map[cell][]score.Row{}
	for _, r := range rows {
		if r.Failed || (r.Judge != score.VerdictCorrect && r.Judge != score.VerdictIncorrect) {
			continue
		}
		byCell[cell{r.Key.Model, r.Key.Language}] = append(byCell[cell{r.Key.Model, r.Key.Language}], r)
	}
	cells := make([]cell, 0, len(byCell))
	for c := range byCell {
		cells = append(cells, c)
	}
	sortBy(cells, func(c cell) []string { return []string{c.model, c.lang} })
	for _, c := range cells {
		rs := byCell[c]
		for _, crit := range []struct {
			name string
			of   func(score.Row) bool
		}{{"substring", func(r score.Row) bool { return r.Substring }}, {"overlap", func(r score.Row) bool { return r.Overlap }}, {"translit", func(r score.Row) bool { return r.Translit }}} {
			var a, l []string
			jk, ck := 0, 0
			for _, r := range rs {
				a, l = append(a, label(r.Correct)), append(l, label(crit.of(r)))
				if r.Correct {
					jk++
				}
				if crit.of(r) {
					ck++
				}
			}
			kappa, agree, _ := stats.CohenKappa(a, l)
			n := float64(len(rs))
			t.add(c.model, c.lang, crit.name, len(rs), agree, kappa, float64(jk)/n, float64(ck)/n, float64(jk-ck)/n)
		}
	}
	return t
}

// Standard builds the tables every study has: accuracy (its metrics),
// scoring (its criteria), and, when opt names model sizes or families,
// scaling and model_families. A
// study that reads human labels adds HumanAgreement with its criteria.
func Standard(study string, ms []Metric, cs []Criterion, rows []score.Row, opt Options) []*Table {
	ts := []*Table{Accuracy(study, ms, rows), Scoring(study, cs)}
	if len(opt.Sizes) > 0 {
		ts = append(ts, Scaling(rows, opt.Sizes))
	}
	if len(opt.Families) > 0 {
		ts = append(ts, ModelFamilies(rows, opt.Families, opt.Sizes))
	}
	return ts
}

// KLAR builds IndicKLAR's own tables: CLC (pairs, means, overall,
// matrix), the strategy tests, form gaps and their summary, flip points,
// families and their tests, relations, the language tests, the strategy
// families (family names a strategy's, "" for none), tokenization and
// latency; ref is the experiment's reference strategy ("" chooses, see
// Reference).
func KLAR(rows []score.Row, ref string, family func(string) string) []*Table {
	o := index(rows) // built once, shared by the paired analyses
	ref = reference(ref, o)
	p, m, ov := clcFrom(o)
	fam := Families(rows)
	gaps := formGapsFrom(o)
	g := languageGains(o, ref, m) // shared by the language, family and strategy-family tables
	return []*Table{p, m, ov, CLCMatrix(p, ref), strategyTestsFrom(o, ref, m), gaps, FormGapSummary(gaps), flipPointsFrom(o), fam, FamilyTests(fam),
		familyGainTestsFrom(g, ref), Relations(rows), languageTestsFrom(g, ref), strategyFamiliesFrom(rows, g, ref, family), Tokenization(rows), Latency(rows)}
}

// CLCMatrix lays the reference strategy and each other strategy in one
// square matrix per model and form, as IndicKLAR's Fig. 4 does: the cell
// (row, col) holds the reference's Jaccard index above the diagonal
// (row < col) and the strategy's below it (row > col), over the languages
// of that form both ran; the diagonal is 1.
func CLCMatrix(pairs *Table, ref string) *Table {
	t := &Table{Name: "clc_matrix", Header: []string{"model", "form", "upper", "lower", "row", "col", "jaccard"}}
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
		if langs[k] == nil {
			langs[k] = map[string]bool{}
		}
		langs[k][la], langs[k][lb] = true, true
	}
	jac := func(k key) float64 {
		if x, ok := j[k]; ok {
			return x
		}
		return math.NaN() // the pair was not computed
	}
	var ks []msf
	for k := range langs {
		if k.strategy != ref && langs[msf{k.model, ref, k.form}] != nil {
			ks = append(ks, k)
		}
	}
	sortBy(ks, func(k msf) []string { return []string{k.model, k.form, k.strategy} })
	for _, k := range ks {
		var ls []string
		for l := range langs[k] {
			if langs[msf{k.model, ref, k.form}][l] {
				ls = append(ls, l)
			}
		}
		sortBy(ls, func(u string) []string { return []string{u} })
		for r, rl := range ls {
			for c, cl := range ls {
				a, b := rl+"/"+k.form, cl+"/"+k.form
				v := 1.0
				switch {
				case r < c:
					v = jac(key{k.model, ref, a, b})
				case r > c:
					v = jac(key{k.model, k.strategy, a, b})
				}
				t.add(k.model, k.form, ref, k.strategy, rl, cl, v)
			}
		}
	}
	noteCLCMatrix(t, pairs, ref)
	return t
}
