package tables

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/internal/parallel"
)

// Alternative is a named option's verdict on a scored row, compared by
// Sensitivity with the rule in force on the same measure.
type Alternative struct {
	Name string // the alternative's name, e.g. lenient_json
	// Option is how it is switched on (a YAML key), or "(beside)" for a
	// criterion always reported beside the one in force.
	Option string
	Rule   string // what it decides
	// Measure is what it changes ("correct" when empty); Base is the rule
	// in force on that measure (Row.Correct when nil); Of is the option's.
	Measure string
	Base    func(*score.Row) bool
	Of      func(*score.Row) bool
	// Applies, when not nil, limits it to the strategies it accepts.
	Applies func(strategy string) bool
}

func (a Alternative) measure() string { return cmp.Or(a.Measure, "correct") }

func (a Alternative) base(r *score.Row) bool {
	if a.Base == nil {
		return r.Correct
	}
	return a.Base(r)
}

// Sensitivity re-scores the same answers under each alternative, per
// model × strategy × condition (languages and forms pooled; failed
// requests count as wrong under both rules): n answers, k under the rule
// in force and k_alt under the alternative, both rates, diff = rate_alt −
// rate with its paired 95% Wald interval (stats.PairedDiffCI), gained
// (right only under the alternative), lost (right only under the rule in
// force) and McNemar's exact p on them. No new request is made.
func Sensitivity(alts []Alternative, rows []score.Row) *Table {
	t := New("sensitivity", "the same answers re-scored under each named option (lenient JSON, multilingual abstention, full normalisation, transliteration): both rates, the paired difference with its interval, answers gained and lost, McNemar p",
		Key("model"), Key("strategy"), Key("condition"), Text("measure", "what the alternative changes: correct, abstain, hallucination, ..."),
		Text("alternative", "the named alternative rule"), Text("option", "how the alternative is switched on (YAML key), or (beside) when always reported"),
		Key("n"), Key("k"), Count("k_alt", "answers meeting the measure under the alternative"), Key("rate"), Proportion("rate_alt", "k_alt / n"),
		Statistic("diff", "rate_alt − rate on the same answers (paired)"), Key("diff_lo"), Key("diff_hi"),
		Count("gained", "answers meeting the measure only under the alternative"), Count("lost", "answers meeting the measure only under the rule in force"), Key("mcnemar_p"))
	type cell struct {
		model, strategy, condition string
		alt                        int
	}
	by := map[cell]*rates{}
	for i, a := range alts { // failed answers count under both rules alike
		ms := []Metric{{Of: a.base}, {Of: a.Of}, {Of: func(r *score.Row) bool { return a.Of(r) && !a.base(r) }}, {Of: func(r *score.Row) bool { return a.base(r) && !a.Of(r) }}}
		maps.Copy(by, countRates(rows, ms, func(r *score.Row) (cell, bool) {
			return cell{r.Key.Model, r.Key.Strategy, r.Key.Condition, i}, a.Applies == nil || a.Applies(r.Key.Strategy)
		}))
	}
	keys := SortedKeysBy(by, func(c cell) []string { return []string{c.model, c.strategy, c.condition, string(rune('0' + c.alt))} })
	for _, c := range keys {
		x, a := by[c], alts[c.alt]
		k, kAlt, gained, lost := x.k[0], x.k[1], x.k[2], x.k[3]
		d, lo, hi := stats.PairedDiffCI(lost, gained, x.n, 0.95)
		t.Add(c.model, c.strategy, c.condition, a.measure(), a.Name, a.Option, x.n, k, kAlt, Frac(k, x.n), Frac(kAlt, x.n),
			d, lo, hi, gained, lost, stats.McNemarExact(lost, gained))
	}
	return t
}

// Claim is one of a paper's conclusions, as an effect that is positive
// when the conclusion holds (e.g. TinT-CM's accuracy minus Baseline's),
// computed from the rows with a verdict on Measure ("correct" when empty)
// given by v. Its functions only read what they are given: Conclusions
// calls those of several claims at once.
type Claim struct {
	Name    string
	Measure string
	// Eval is the claim on rows under the verdict v: its effect (NaN when
	// the run lacks what the claim compares), the effect's 95% interval
	// and its test's two-sided p-value, each NaN where the claim has none
	// (Effect gives an outcome with the effect alone). rows are the
	// answers On selects, pointing into the caller's.
	Eval func(rows []*score.Row, v func(*score.Row) bool) Outcome
	// On selects the answers the effect compares, the only ones Eval is
	// given (their count is the table's n; nil: every answer of the model).
	On func(*score.Row) bool
	// TestName says which test gives Eval's p, on which pairs ("": none).
	TestName string
	// Significant: the paper asserts the effect is statistically
	// significant, so the claim holds only when Eval's p is below Alpha
	// (0.05 when 0) as well; such a claim without a p never holds.
	Significant bool
	Alpha       float64
	// Models, when not nil, limits the claim to the models it accepts
	// (the paper claims it of some models only).
	Models func(model string) bool
	// Verdict is the rule in force on Measure when no alternative
	// changes that measure (nil: Row.Correct).
	Verdict func(*score.Row) bool
}

// Outcome is a claim evaluated: the effect, its 95% interval [Lo, Hi]
// and the test's two-sided p-value, NaN where there is none.
type Outcome struct{ Effect, Lo, Hi, P float64 }

// Effect is the outcome of a claim with an effect and neither interval
// nor test.
func Effect(e float64) Outcome { return Outcome{e, math.NaN(), math.NaN(), math.NaN()} }

// alpha is the claim's significance level (0.05 unless set).
func (c Claim) alpha() float64 {
	if c.Alpha > 0 {
		return c.Alpha
	}
	return 0.05
}

// holds is the claim's verdict on an effect and its p-value: effect > 0,
// and, when the claim asserts significance, p < alpha (a NaN p fails).
func (c Claim) holds(effect, p float64) bool {
	return effect > 0 && (!c.Significant || p < c.alpha())
}

// NoAlternative names the conclusions row of a claim whose measure no
// named alternative changes: its _alt columns repeat the rule in force.
const NoAlternative = "(none)"

// Conclusions says whether each claim holds per model (the models its
// Models accepts) under the rule in force and under each alternative on
// the claim's measure (one row "(none)" when no alternative changes it):
// the effect, the test's p-value where the claim has a test, and holds =
// effect > 0 and, for a claim of significance, p < alpha, both ways (an
// alternative's Applies limits it: other strategies keep the verdict in
// force). NaN effects (the run lacks what the claim compares) are left
// out.
func Conclusions(claims []Claim, alts []Alternative, rows []score.Row) *Table {
	t := New("conclusions", "each of the paper's conclusions per model, under the rule in force and under each named alternative: the effect, the test's p where the claim has one, and whether it still holds (a claim of significance needs p < alpha)",
		Text("claim", "the paper's conclusion, as an effect that is positive when it holds"), Key("model"), Text("alternative", "the named alternative rule ((none): no alternative changes the claim's measure)"),
		Text("option", "how the alternative is switched on (YAML key), or (beside) when always reported"), Count("n", "answers the claim compares (both sides)"),
		Text("test", "the claim's test and what it pairs (empty: the claim has none)"),
		Flag("significance", "the paper asserts the effect is significant: holds needs p < alpha too"),
		Number("alpha", "the significance level a claim of significance is held to"),
		Statistic("effect", "the claim's effect under the rule in force (positive: in the claimed direction)"),
		Lower("effect_lo", "lower bound of the 95% interval of effect (paired claims: stats.PairedDiffCI; empty: none)"),
		Upper("effect_hi", "upper bound of the 95% interval of effect"),
		PValue("p", "the test's two-sided p-value under the rule in force (empty: no test)"),
		Flag("holds", "effect > 0 and, for a claim of significance, p < alpha: the conclusion holds under the rule in force"),
		Statistic("effect_alt", "the claim's effect under the alternative"),
		Lower("effect_alt_lo", "lower bound of the 95% interval of effect_alt"),
		Upper("effect_alt_hi", "upper bound of the 95% interval of effect_alt"),
		PValue("p_alt", "the test's two-sided p-value under the alternative (empty: no test)"),
		Flag("holds_alt", "effect_alt > 0 and, for a claim of significance, p_alt < alpha: the conclusion holds under the alternative"))
	t.Headline = true
	// The alternatives each claim is read under (the rule in force alone,
	// on both sides, when none changes its measure).
	ons := make([][]Alternative, len(claims))
	for ci, c := range claims {
		measure := cmp.Or(c.Measure, "correct")
		for _, a := range alts {
			if a.measure() == measure {
				ons[ci] = append(ons[ci], a)
			}
		}
		if len(ons[ci]) == 0 { // the verdict in force on both sides (base: Row.Correct when nil)
			a := Alternative{Name: NoAlternative, Measure: measure, Base: c.Verdict}
			a.Of = a.base
			ons[ci] = []Alternative{a}
		}
	}
	byModel := map[string][]*score.Row{}
	for i := range rows {
		byModel[rows[i].Key.Model] = append(byModel[rows[i].Key.Model], &rows[i])
	}
	// Each claim's rows come out in the models' order, the claims in theirs.
	out := make([][][]any, len(claims))
	for _, m := range SortedKeys(byModel) {
		rs := byModel[m]
		// The claims are evaluated at once, all reading rs.
		parallel.For(len(claims), func(ci int) {
			out[ci] = append(out[ci], conclude(claims[ci], ons[ci], m, rs)...)
		})
	}
	for _, cells := range out {
		for _, row := range cells {
			t.Add(row...)
		}
	}
	return t
}

// conclude is claim c's rows of the conclusions table for model m (rs: its
// answers), one per alternative in ons.
func conclude(c Claim, ons []Alternative, m string, rs []*score.Row) [][]any {
	var out [][]any
	if c.Models != nil && !c.Models(m) {
		return nil
	}
	if c.On != nil {
		rs = slices.DeleteFunc(slices.Clone(rs), func(r *score.Row) bool { return !c.On(r) })
	}
	for _, a := range ons {
		of := a.Of
		if a.Applies != nil { // the alternative leaves other strategies' verdicts as they are
			of = func(r *score.Row) bool {
				if a.Applies(r.Key.Strategy) {
					return a.Of(r)
				}
				return a.base(r)
			}
		}
		x, xa := c.Eval(rs, a.base), c.Eval(rs, of)
		if math.IsNaN(x.Effect) || math.IsNaN(xa.Effect) {
			continue
		}
		out = append(out, []any{c.Name, m, a.Name, a.Option, len(rs), c.TestName, c.Significant, c.alpha(), x.Effect, x.Lo, x.Hi, x.P, c.holds(x.Effect, x.P),
			xa.Effect, xa.Lo, xa.Hi, xa.P, c.holds(xa.Effect, xa.P)})
	}
	return out
}

// PairedClaim is the claim "the rate of the verdict where a selects
// exceeds the rate where b selects", on paired answers: each answer a
// selects is paired with the answer b selects of the same key(row) (a
// later answer of a key replaces an earlier one; keys on one side only
// are left out). With onlyA the pairs right only under a and onlyB those
// right only under b, out of pairs:
//
//	effect = (onlyA − onlyB) / pairs   (rate_a − rate_b on the pairs; NaN with no pair)
//	interval: its paired 95% Wald interval (stats.PairedDiffCI)
//	p      = McNemar's exact two-sided p on (onlyA, onlyB) (stats.McNemarExact)
//
// significant says whether the paper asserts the difference is
// significant (Claim.Significant); pairs names the pairing in the test's
// description.
func PairedClaim(name, measure string, a, b func(*score.Row) bool, key func(*score.Row) string, pairs string, significant bool) Claim {
	count := func(rows []*score.Row, v func(*score.Row) bool) (n, onlyA, onlyB int) {
		va, vb := map[string]bool{}, map[string]bool{}
		for _, r := range rows {
			if a(r) {
				va[key(r)] = v(r)
			}
			if b(r) {
				vb[key(r)] = v(r)
			}
		}
		n, _, _, onlyA, onlyB = Paired(va, vb)
		return n, onlyA, onlyB
	}
	return Claim{Name: name, Measure: measure, Significant: significant,
		On: func(r *score.Row) bool { return a(r) || b(r) },
		Eval: func(rows []*score.Row, v func(*score.Row) bool) Outcome {
			n, onlyA, onlyB := count(rows, v)
			if n == 0 {
				return Effect(math.NaN())
			}
			_, lo, hi := stats.PairedDiffCI(onlyB, onlyA, n, 0.95) // its d = (c − b)/n with b = onlyB, c = onlyA
			return Outcome{Frac(onlyA-onlyB, n), lo, hi, stats.McNemarExact(onlyA, onlyB)}
		},
		TestName: "McNemar exact, two-sided, paired by " + pairs}
}

// RateDiff is the effect "rate where a − rate where b" of a verdict over
// two selections of rows (NaN when either selects none).
func RateDiff(rows []*score.Row, v func(*score.Row) bool, a, b func(*score.Row) bool) float64 {
	var k, n [2]int
	for _, r := range rows {
		for i, sel := range [2]func(*score.Row) bool{a, b} {
			if sel(r) {
				n[i]++
				if v(r) {
					k[i]++
				}
			}
		}
	}
	return Frac(k[0], n[0]) - Frac(k[1], n[1])
}

// Compare sets two runs of the same items side by side (an option that
// changes the requests, such as shuffled candidates or the paper's
// prompt wording, needs a second run): per model × strategy × language ×
// form × condition, and pooled over languages and forms (language and
// form "*"), the items both runs answered, each run's correct count and
// accuracy, the paired difference b − a with its 95% Wald interval, and
// McNemar's exact p. A failed answer is a wrong one.
func Compare(a, b []score.Row) *Table {
	t := New("comparison", "two runs of the same items side by side (an option that changes the requests): accuracies, paired difference with interval, McNemar p (bhasha.Compare)",
		Key("model"), Key("strategy"), Key("language"), Key("form"), Key("condition"), Count("pairs", "items both runs answered"),
		Count("k_a", "answers right, of a"), Count("k_b", "answers right, of b"), Proportion("acc_a", "accuracy of a"), Proportion("acc_b", "accuracy of b"),
		Statistic("diff", "acc_b − acc_a on the items both runs answered (paired)"), Key("diff_lo"), Key("diff_hi"), Key("mcnemar_p"))
	type cell struct{ model, strategy, lang, form, cond string }
	outcomes := func(rows []score.Row) map[cell]map[string]bool {
		o := map[cell]map[string]bool{}
		for _, r := range rows {
			for _, c := range []cell{{r.Key.Model, r.Key.Strategy, r.Key.Language, r.Key.Form, r.Key.Condition}, {r.Key.Model, r.Key.Strategy, "*", "*", r.Key.Condition}} {
				if o[c] == nil {
					o[c] = map[string]bool{}
				}
				item := r.Key.Item
				if c.lang == "*" {
					item = r.Key.Language + "/" + r.Key.Form + "/" + item
				}
				o[c][item] = r.Correct
			}
		}
		return o
	}
	oa, ob := outcomes(a), outcomes(b)
	keys := make([]cell, 0, len(oa))
	for c := range oa {
		if ob[c] != nil {
			keys = append(keys, c)
		}
	}
	SortBy(keys, func(c cell) []string { return []string{c.model, c.strategy, c.cond, c.lang, c.form} })
	for _, c := range keys {
		n, ka, kb, onlyA, onlyB := Paired(oa[c], ob[c])
		if n == 0 {
			continue
		}
		d, lo, hi := stats.PairedDiffCI(onlyA, onlyB, n, 0.95)
		t.Add(c.model, c.strategy, c.lang, c.form, c.cond, n, ka, kb, Frac(ka, n), Frac(kb, n), d, lo, hi, stats.McNemarExact(onlyA, onlyB))
	}
	return t
}

// Unit names one set of outcomes: model, strategy, language, form.
type Unit [4]string

// Outcomes indexes correctness by unit (model × strategy × language ×
// form) and item: Outcomes[u][item] is Row.Correct (a failed answer is a
// wrong one, as the authors count it). A later row of the same unit and
// item replaces an earlier one.
type Outcomes map[Unit]map[string]bool

// Index builds the Outcomes of the rows.
func Index(rows []score.Row) Outcomes {
	o := Outcomes{}
	for _, r := range rows {
		k := Unit{r.Key.Model, r.Key.Strategy, r.Key.Language, r.Key.Form}
		if o[k] == nil {
			o[k] = map[string]bool{}
		}
		o[k][r.Key.Item] = r.Correct
	}
	return o
}

// Paired compares two outcome sets on the items both hold: n is the
// number of such pairs, ka and kb the items right under a and under b,
// onlyA the discordant pairs right under a only and onlyB those right
// under b only (McNemar's b and c). So ka − kb = onlyA − onlyB, the
// paired difference of the rates is (onlyB − onlyA)/n for b − a, and the
// Jaccard index of the right sets is (ka − onlyA)/(ka + onlyB).
func Paired(a, b map[string]bool) (n, ka, kb, onlyA, onlyB int) {
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
		switch {
		case x && !y:
			onlyA++
		case y && !x:
			onlyB++
		}
	}
	return
}

// Adjusted passes each test of one family (its p-value p(test)), in the
// tests' order, to emit with its adjusted p-values: with the m p-values
// sorted ascending (1-based ranks j), Holm's step-down
// p̃₍ᵢ₎ = max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎) (stats.Holm) and
// Benjamini–Hochberg's p̃₍ᵢ₎ = min over j ≥ i of min(1, m·p₍ⱼ₎/j)
// (stats.BenjaminiHochberg).
func Adjusted[T any](tests []T, p func(T) float64, emit func(test T, holm, bh float64)) {
	ps := make([]float64, len(tests))
	for i, x := range tests {
		ps[i] = p(x)
	}
	holm, bh := stats.Holm(ps), stats.BenjaminiHochberg(ps)
	for i, x := range tests {
		emit(x, holm[i], bh[i])
	}
}

// Frac is k / n, NaN when n is 0.
func Frac(k, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

// SortBy sorts s stably by the string tuple key(x), lexicographically:
// the tables' fixed row order.
func SortBy[T any](s []T, key func(T) []string) {
	sort.SliceStable(s, func(i, j int) bool { return slices.Compare(key(s[i]), key(s[j])) < 0 })
}

// SortedKeys is the keys of m in ascending order.
func SortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// SortedKeysBy is the keys of m ordered by key (SortBy).
func SortedKeysBy[K comparable, V any](m map[K]V, key func(K) []string) []K {
	keys := slices.Collect(maps.Keys(m))
	SortBy(keys, key)
	return keys
}

// Label writes a 0/1 verdict as a category for Cohen's κ ("1", "0").
func Label(v bool) string {
	if v {
		return "1"
	}
	return "0"
}
