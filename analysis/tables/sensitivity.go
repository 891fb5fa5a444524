package tables

import (
	"math"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
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
	Base    func(score.Row) bool
	Of      func(score.Row) bool
	// Applies, when not nil, limits it to the strategies it accepts.
	Applies func(strategy string) bool
}

// Metric is the alternative as an accuracy metric.
func (a Alternative) Metric() Metric { return Metric{Name: a.Name, Of: a.Of, Applies: a.Applies} }

func (a Alternative) measure() string {
	if a.Measure == "" {
		return "correct"
	}
	return a.Measure
}

func (a Alternative) base(r score.Row) bool {
	if a.Base == nil {
		return r.Correct
	}
	return a.Base(r)
}

// Sensitivity re-scores the same answers under each alternative, per
// model × strategy × condition (languages and forms pooled; failed
// requests count as wrong under both rules): n answers, k under the rule in force and k_alt under
// the alternative, both rates, diff = rate_alt − rate with its paired 95%
// Wald interval (stats.PairedDiffCI), gained (right only under the
// alternative), lost (right only under the rule in force) and McNemar's
// exact p on them. No new request is made.
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
	type counts struct{ n, k, kAlt, gained, lost int }
	by := map[cell]*counts{}
	for _, r := range rows { // failed answers count under both rules alike
		for i, a := range alts {
			if a.Applies != nil && !a.Applies(r.Key.Strategy) {
				continue
			}
			c := cell{r.Key.Model, r.Key.Strategy, r.Key.Condition, i}
			x := by[c]
			if x == nil {
				x = &counts{}
				by[c] = x
			}
			b, o := a.base(r), a.Of(r)
			x.n++
			if b {
				x.k++
			}
			if o {
				x.kAlt++
			}
			switch {
			case o && !b:
				x.gained++
			case b && !o:
				x.lost++
			}
		}
	}
	keys := make([]cell, 0, len(by))
	for c := range by {
		keys = append(keys, c)
	}
	SortBy(keys, func(c cell) []string { return []string{c.model, c.strategy, c.condition, string(rune('0' + c.alt))} })
	for _, c := range keys {
		x, a := by[c], alts[c.alt]
		d, lo, hi := stats.PairedDiffCI(x.lost, x.gained, x.n, 0.95)
		t.Add(c.model, c.strategy, c.condition, a.measure(), a.Name, a.Option, x.n, x.k, x.kAlt, Frac(x.k, x.n), Frac(x.kAlt, x.n),
			d, lo, hi, x.gained, x.lost, stats.McNemarExact(x.lost, x.gained))
	}
	return t
}

// Claim is one of a paper's conclusions, as an effect that is positive
// when the conclusion holds (e.g. TinT-CM's accuracy minus Baseline's),
// computed from the rows with a verdict on Measure ("correct" when empty)
// given by v.
type Claim struct {
	Name    string
	Measure string
	Effect  func(rows []score.Row, v func(score.Row) bool) float64
	// On selects the answers the effect compares (their count is the
	// table's n; nil: every answer of the model).
	On func(score.Row) bool
}

// Conclusions says whether each claim holds per model under the rule in
// force and under each alternative on the claim's measure: the effect
// and holds (effect > 0) both ways. NaN effects (the run lacks what the
// claim compares) are left out.
func Conclusions(claims []Claim, alts []Alternative, rows []score.Row) *Table {
	t := New("conclusions", "each of the paper's conclusions per model, under the rule in force and under each named alternative: the effect and whether it still holds",
		Text("claim", "the paper's conclusion, as an effect that is positive when it holds"), Key("model"), Text("alternative", "the named alternative rule"),
		Text("option", "how the alternative is switched on (YAML key), or (beside) when always reported"), Count("n", "answers the claim compares (both sides)"),
		Statistic("effect", "the claim's effect under the rule in force (effect) and under the alternative (effect_alt)"),
		Flag("holds", "the effect is positive: the conclusion holds under that rule"),
		Statistic("effect_alt", "the claim's effect under the rule in force (effect) and under the alternative (effect_alt)"),
		Flag("holds_alt", "the effect is positive: the conclusion holds under that rule"))
	t.Headline = true
	byModel := map[string][]score.Row{}
	var models []string
	for _, r := range rows {
		if byModel[r.Key.Model] == nil {
			models = append(models, r.Key.Model)
		}
		byModel[r.Key.Model] = append(byModel[r.Key.Model], r)
	}
	SortBy(models, func(m string) []string { return []string{m} })
	for _, c := range claims {
		measure := c.Measure
		if measure == "" {
			measure = "correct"
		}
		for _, m := range models {
			for _, a := range alts {
				if a.measure() != measure {
					continue
				}
				e, ea := c.Effect(byModel[m], a.base), c.Effect(byModel[m], a.Of)
				if math.IsNaN(e) || math.IsNaN(ea) {
					continue
				}
				n := 0
				for _, r := range byModel[m] {
					if c.On == nil || c.On(r) {
						n++
					}
				}
				t.Add(c.Name, m, a.Name, a.Option, n, e, e > 0, ea, ea > 0)
			}
		}
	}
	return t
}

// Rate is the share of the rows selected by sel that v accepts (NaN when
// sel selects none).
func Rate(rows []score.Row, v, sel func(score.Row) bool) float64 {
	k, n := 0, 0
	for _, r := range rows {
		if sel(r) {
			n++
			if v(r) {
				k++
			}
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

// RateDiff is the effect "rate where a − rate where b" of a verdict over
// two selections of rows (NaN when either selects none).
func RateDiff(rows []score.Row, v func(score.Row) bool, a, b func(score.Row) bool) float64 {
	return Rate(rows, v, a) - Rate(rows, v, b)
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
