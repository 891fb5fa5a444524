package tables

import (
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
)

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

// entry is m[k], a new zero V stored there first when m has none.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}

// sortedKeys is the keys of m ordered by key (SortBy).
func sortedKeys[K comparable, V any](m map[K]V, key func(K) []string) []K {
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
