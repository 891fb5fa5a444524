package tables

import (
	"math"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
)

// protocols are IndicQuest's three scoring protocols.
var protocols = []Metric{
	{Name: "judge", Of: func(r score.Row) bool { return r.Correct }},
	{Name: "substring", Of: func(r score.Row) bool { return r.Substring }},
	{Name: "overlap", Of: func(r score.Row) bool { return r.Overlap }},
}

// Domains is IndicQuest accuracy per model × language × domain under each
// protocol (judge, exact substring, word overlap), with Wilson intervals,
// and per model × language the size-weighted accuracy over domains,
// Σ_d n_d·acc_d / Σ_d n_d (domain "*"), which equals the pooled rate; and
// each domain pooled over models and languages (model and language "*",
// the paper's "Commercial Studies ~70%, Sports ~41%").
func Domains(rows []score.Row) *Table {
	t := &Table{Name: "domains", Header: []string{"model", "language", "domain", "protocol", "k", "n", "rate", "ci_lo", "ci_hi", "failed"}}
	type key struct{ model, lang, domain string }
	by := map[key][]score.Row{}
	for _, r := range rows { // failed answers count as wrong
		for _, k := range []key{{r.Key.Model, r.Key.Language, r.Domain}, {r.Key.Model, r.Key.Language, "*"}, {"*", "*", r.Domain}} {
			by[k] = append(by[k], r)
		}
	}
	keys := make([]key, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sortBy(keys, func(x key) []string { return []string{x.model, x.lang, x.domain} })
	for _, k := range keys {
		for _, p := range protocols {
			c, failed := 0, 0
			for _, r := range by[k] {
				switch {
				case r.Failed:
					failed++
				case p.Of(r):
					c++
				}
			}
			pr := stats.NewProportion(c, len(by[k]))
			t.add(k.model, k.lang, k.domain, p.Name, c, len(by[k]), pr.P, pr.Lo, pr.Hi, failed)
		}
	}
	return t
}

// Rankings measures whether the protocols rank the same way: Kendall's
// τ-b (and its p) between the judge's accuracies and each lexical
// protocol's, over the model × language cells (language "*") and over
// the models within each language (the paper's per-language rankings).
func Rankings(rows []score.Row) *Table {
	t := &Table{Name: "protocol_rankings", Header: []string{"language", "a", "b", "cells", "kendall_tau", "p"}}
	type key struct{ model, lang string }
	acc := map[key][3][2]int{}
	for _, r := range rows { // failed answers count as wrong
		k := key{r.Key.Model, r.Key.Language}
		v := acc[k]
		for i, p := range protocols {
			v[i][1]++
			if p.Of(r) {
				v[i][0]++
			}
		}
		acc[k] = v
	}
	keys := make([]key, 0, len(acc))
	for k := range acc {
		keys = append(keys, k)
	}
	sortBy(keys, func(x key) []string { return []string{x.model, x.lang} })
	// Pooled over model × language cells (language "*"), then each
	// language's ranking of the models.
	groups := map[string][]key{"*": keys}
	langs := []string{"*"}
	for _, k := range keys {
		if groups[k.lang] == nil {
			langs = append(langs, k.lang)
		}
		groups[k.lang] = append(groups[k.lang], k)
	}
	sortBy(langs[1:], func(l string) []string { return []string{l} })
	for _, l := range langs {
		series := make([][]float64, len(protocols))
		for _, k := range groups[l] {
			for i := range protocols {
				series[i] = append(series[i], frac(acc[k][i][0], acc[k][i][1]))
			}
		}
		for i := 1; i < len(protocols); i++ {
			tau, p, err := stats.Kendall(series[0], series[i])
			if err != nil {
				tau, p = math.NaN(), math.NaN()
			}
			t.add(l, protocols[0].Name, protocols[i].Name, len(groups[l]), tau, p)
		}
	}
	return t
}

// ModelGaps compares every two models on the same questions, per language
// and protocol (judge, substring, overlap): both accuracies, the paired
// difference (a − b) with its 95% Wald interval and McNemar's exact p
// (IndicQuest §5: e.g. Gemma4 31B against Sarvam 30B per language). A
// failed answer is a wrong one.
func ModelGaps(rows []score.Row) *Table {
	t := &Table{Name: "model_gaps", Header: []string{"language", "protocol", "a", "b", "pairs", "acc_a", "acc_b", "diff", "diff_lo", "diff_hi", "mcnemar_p"}}
	type key struct{ model, lang string }
	out := make([]map[key]map[string]bool, len(protocols))
	for i := range out {
		out[i] = map[key]map[string]bool{}
	}
	models, langs := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		k := key{r.Key.Model, r.Key.Language}
		models[r.Key.Model], langs[r.Key.Language] = true, true
		for i, p := range protocols {
			if out[i][k] == nil {
				out[i][k] = map[string]bool{}
			}
			out[i][k][r.Key.Item] = !r.Failed && p.Of(r)
		}
	}
	ms, ls := sortedKeys(models), sortedKeys(langs)
	for _, l := range ls {
		for i, p := range protocols {
			for x, a := range ms {
				for _, b := range ms[x+1:] {
					oa, ob := out[i][key{a, l}], out[i][key{b, l}]
					if oa == nil || ob == nil {
						continue
					}
					n, ka, kb, onlyA, onlyB := paired(oa, ob)
					d, lo, hi := stats.PairedDiffCI(onlyB, onlyA, n, 0.95) // (a − b)
					t.add(l, p.Name, a, b, n, frac(ka, n), frac(kb, n), d, lo, hi, stats.McNemarExact(onlyA, onlyB))
				}
			}
		}
	}
	noteModelGaps(t, models)
	return t
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortBy(out, func(s string) []string { return []string{s} })
	return out
}

// JudgeGrades summarises a graded judge's scores (IndicQuest's v1 judge:
// Factual Accuracy, Relevance, Clarity, Language Consistency, Conciseness
// and Overall, each 1–5) per model × language × criterion: n graded
// answers, the mean with its 95% normal interval (mean ± 1.96·s/√n), and
// the share graded 3 or more.
func JudgeGrades(rows []score.Row) *Table {
	t := &Table{Name: "judge_grades", Header: []string{"model", "language", "criterion", "n", "mean", "mean_lo", "mean_hi", "share_ge3"}}
	type cell struct{ model, lang, crit string }
	vals := map[cell][]float64{}
	for _, r := range rows {
		if r.Failed {
			continue
		}
		if r.Detail == nil {
			continue
		}
		for crit, v := range r.Detail.JudgeScores {
			c := cell{r.Key.Model, r.Key.Language, crit}
			vals[c] = append(vals[c], v)
		}
	}
	keys := make([]cell, 0, len(vals))
	for c := range vals {
		keys = append(keys, c)
	}
	sortBy(keys, func(c cell) []string { return []string{c.model, c.lang, c.crit} })
	for _, c := range keys {
		v := vals[c]
		n := float64(len(v))
		mean, ge3 := 0.0, 0
		for _, x := range v {
			mean += x
			if x >= 3 {
				ge3++
			}
		}
		mean /= n
		sd := 0.0
		for _, x := range v {
			sd += (x - mean) * (x - mean)
		}
		half := math.NaN()
		if len(v) > 1 {
			sd = math.Sqrt(sd / (n - 1))
			half = 1.959963984540054 * sd / math.Sqrt(n)
		}
		t.add(c.model, c.lang, c.crit, len(v), mean, mean-half, mean+half, float64(ge3)/n)
	}
	return t
}
