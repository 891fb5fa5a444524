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
// Σ_d n_d·acc_d / Σ_d n_d (domain "*"), which equals the pooled rate.
func Domains(rows []score.Row) *Table {
	t := &Table{Name: "domains", Header: []string{"model", "language", "domain", "protocol", "k", "n", "rate", "ci_lo", "ci_hi", "failed"}}
	type key struct{ model, lang, domain string }
	by := map[key][]score.Row{}
	for _, r := range rows { // failed answers count as wrong
		by[key{r.Key.Model, r.Key.Language, r.Domain}] = append(by[key{r.Key.Model, r.Key.Language, r.Domain}], r)
		by[key{r.Key.Model, r.Key.Language, "*"}] = append(by[key{r.Key.Model, r.Key.Language, "*"}], r)
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

// Rankings measures whether the protocols rank the same way: over the
// model × language cells, Kendall's τ-b (and its p) between the judge's
// accuracies and each lexical protocol's.
func Rankings(rows []score.Row) *Table {
	t := &Table{Name: "protocol_rankings", Header: []string{"a", "b", "cells", "kendall_tau", "p"}}
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
	series := make([][]float64, len(protocols))
	for _, k := range keys {
		for i := range protocols {
			series[i] = append(series[i], frac(acc[k][i][0], acc[k][i][1]))
		}
	}
	for i := 1; i < len(protocols); i++ {
		tau, p, err := stats.Kendall(series[0], series[i])
		if err != nil {
			tau, p = math.NaN(), math.NaN()
		}
		t.add(protocols[0].Name, protocols[i].Name, len(keys), tau, p)
	}
	return t
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
		for crit, v := range r.JudgeScores {
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
