package stats

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/combin"
)

// Holm adjusts p-values for m tests by Holm–Bonferroni: with p sorted
// ascending, p̃₍ᵢ₎ = max over j ≤ i of min(1, (m − j)·p₍ⱼ₎) (j from 0),
// returned in the input order. No input panics; an empty p gives an
// empty slice.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := order(p)
	out := make([]float64, m)
	run := 0.0
	for j, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-j)*p[i]))
		out[i] = run
	}
	return out
}

// BenjaminiHochberg adjusts p-values for the false discovery rate: with p
// sorted ascending, p̃₍ᵢ₎ = min over j ≥ i of min(1, m·p₍ⱼ₎/(j+1)), returned
// in the input order. No input panics; an empty p gives an empty slice.
func BenjaminiHochberg(p []float64) []float64 {
	m := len(p)
	idx := order(p)
	out := make([]float64, m)
	run := 1.0
	for j := m - 1; j >= 0; j-- {
		i := idx[j]
		run = math.Min(run, math.Min(1, float64(m)*p[i]/float64(j+1)))
		out[i] = run
	}
	return out
}

// order is the indexes of p in ascending order of their values, ties in
// index order.
func order(p []float64) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	return idx
}

// PairedPermutation is the two-sided permutation test of the mean paired
// difference d (x − y): the null distribution of mean(±dᵢ) over sign
// flips — all 2ⁿ when n ≤ exactMax (exact; p = 2·min(P(≤), P(≥)) with
// SciPy's relative tolerance 10⁻¹⁴), otherwise `resamples` random flips
// from rng with SciPy's (count + 1)/(resamples + 1) rule. p is capped at 1.
//
// It panics when exactMax or resamples is negative, exactMax exceeds 30
// (2³⁰ sign flips), or, beyond the exact limit (n > exactMax), when
// resamples < 1 or rng is nil. No pairs give NaN for the mean and p.
func PairedPermutation(d []float64, exactMax, resamples int, rng *rand.Rand) (mean, p float64) {
	checkResampling("PairedPermutation", exactMax, resamples)
	if exactMax > 30 {
		panic(violation("PairedPermutation", "exactMax = %d above 30 (2^exactMax sign flips)", exactMax))
	}
	n := len(d)
	if n > exactMax {
		checkRandom("PairedPermutation", resamples, rng)
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	mean = sum(d) / float64(n)
	null := newNull(mean)
	if n <= exactMax {
		signFlips(d, func(s float64) { null.add(s / float64(n)) })
		return mean, null.exactP()
	}
	for range resamples {
		s := 0.0
		for _, v := range d {
			if rng.IntN(2) == 1 {
				s -= v
			} else {
				s += v
			}
		}
		null.add(s / float64(n))
	}
	return mean, null.randomP()
}

// signFlips calls visit with each of the 2ⁿ signed sums of d, each summed
// left to right from 0 (((0 ± d₀) ± d₁) ± …) down the tree of prefixes.
func signFlips(d []float64, visit func(s float64)) {
	var walk func(s float64, i int)
	walk = func(s float64, i int) {
		if i == len(d) {
			visit(s)
			return
		}
		walk(s+d[i], i+1)
		walk(s-d[i], i+1)
	}
	walk(0, 0)
}

// checkResampling panics when the exact limit or the resample count of a
// permutation test is negative.
func checkResampling(fn string, exactMax, resamples int) {
	if exactMax < 0 || resamples < 0 {
		panic(violation(fn, "negative exactMax = %d or resamples = %d", exactMax, resamples))
	}
}

// checkRandom panics unless a permutation test that must resample has at
// least one resample and a random source.
func checkRandom(fn string, resamples int, rng *rand.Rand) {
	if resamples < 1 || rng == nil {
		panic(violation(fn, "beyond the exact limit it needs resamples ≥ 1 (have %d) and a random source (nil: %t)", resamples, rng == nil))
	}
}

// null counts a permutation null distribution against the observed
// statistic: how many values are ≤ and ≥ it, within SciPy's relative
// tolerance 10⁻¹⁴.
type null struct {
	obs, gamma     float64
	le, ge, values float64
}

func newNull(obs float64) *null { return &null{obs: obs, gamma: math.Abs(1e-14 * obs)} }

func (c *null) add(s float64) {
	c.values++
	if s <= c.obs+c.gamma {
		c.le++
	}
	if s >= c.obs-c.gamma {
		c.ge++
	}
}

// exactP is 2·min(P(≤), P(≥)) over every value, capped at 1.
func (c *null) exactP() float64 { return math.Min(1, 2*math.Min(c.le, c.ge)/c.values) }

// randomP is SciPy's rule for random resamples: (count + 1)/(resamples + 1).
func (c *null) randomP() float64 {
	return math.Min(1, 2*math.Min((c.le+1)/(c.values+1), (c.ge+1)/(c.values+1)))
}

// sum is x summed left to right from 0.
func sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// absMean is the mean of the absolute values of x.
func absMean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += math.Abs(v)
	}
	return s / float64(len(x))
}

// TwoSamplePermutation is the two-sided permutation test of the
// difference of means mean(a) − mean(b) of two independent samples: the
// null distribution over every reassignment of the pooled values to
// groups of the same sizes — all C(n, |a|) when that is at most exactMax
// (exact; p = 2·min(P(≤), P(≥)) with SciPy's relative tolerance 10⁻¹⁴, as
// scipy.stats.permutation_test with permutation_type "independent"),
// otherwise `resamples` random reassignments from rng with SciPy's
// (count + 1)/(resamples + 1) rule. p is capped at 1.
//
// It panics when exactMax or resamples is negative or, beyond the exact
// limit (C(n, |a|) > exactMax), when resamples < 1 or rng is nil. An
// empty a or b gives NaN for the difference and p. The difference
// returned is 0 when it is within its rounding error (RoundoffZero); the
// test compares the difference as computed.
func TwoSamplePermutation(a, b []float64, exactMax, resamples int, rng *rand.Rand) (diff, p float64) {
	checkResampling("TwoSamplePermutation", exactMax, resamples)
	na, nb := len(a), len(b)
	exact := math.Round(math.Exp(lchoose(na+nb, na))) <= float64(exactMax) // C(n, |a|)
	if !exact {
		checkRandom("TwoSamplePermutation", resamples, rng)
	}
	if na == 0 || nb == 0 {
		return math.NaN(), math.NaN()
	}
	pool := append(append([]float64(nil), a...), b...)
	total := sum(pool)
	meanDiff := func(sumA float64) float64 { return sumA/float64(na) - (total-sumA)/float64(nb) }
	diff = meanDiff(sum(a))
	null := newNull(diff)
	defer func() { diff = RoundoffZero(diff, absMean(a)+absMean(b), na+nb) }()
	n := na + nb
	if exact {
		gen, idx := combin.NewCombinationGenerator(n, na), make([]int, na)
		for gen.Next() { // every na-subset of the pool
			s := 0.0
			for _, i := range gen.Combination(idx) {
				s += pool[i]
			}
			null.add(meanDiff(s))
		}
		return diff, null.exactP()
	}
	perm := make([]float64, n)
	for range resamples {
		copy(perm, pool)
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		null.add(meanDiff(sum(perm[:na])))
	}
	return diff, null.randomP()
}

// PairedBootstrap is the percentile bootstrap interval of the mean paired
// difference: `resamples` resamples of the n pairs with replacement drawn
// from rng, the interval between the (1−conf)/2 and (1+conf)/2 quantiles
// of the resampled means (linear interpolation between order statistics).
// The mean and each resampled mean are 0 when within their rounding
// error (RoundoffZero).
//
// It panics when conf is outside (0, 1), resamples < 2 or rng is nil. No
// pairs give NaN for the mean, lo and hi.
func PairedBootstrap(d []float64, conf float64, resamples int, rng *rand.Rand) (mean, lo, hi float64) {
	checkLevel("PairedBootstrap", conf)
	if resamples < 2 || rng == nil {
		panic(violation("PairedBootstrap", "needs resamples ≥ 2 (have %d) and a random source (nil: %t)", resamples, rng == nil))
	}
	n := len(d)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	mean = Mean(d)
	means := make([]float64, resamples)
	for b := range means {
		s, abs := 0.0, 0.0
		for range n {
			v := d[rng.IntN(n)]
			s += v
			abs += math.Abs(v)
		}
		means[b] = RoundoffZero(s/float64(n), abs/float64(n), n)
	}
	sort.Float64s(means)
	return mean, QuantileSorted(means, (1-conf)/2), QuantileSorted(means, (1+conf)/2)
}

// Mean is the arithmetic mean of x, 0 when within its rounding error
// (RoundoffZero), NaN when x is empty.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return RoundoffZero(sum(x)/float64(len(x)), absMean(x), len(x))
}

// QuantileSorted is the q-quantile of the ascending s by linear
// interpolation between order statistics (h = q·(n−1), R's type 7 and
// NumPy's default), NaN when s is empty.
func QuantileSorted(s []float64, q float64) float64 {
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

// CohenKappa is Cohen's κ of two raters' labels over the same items:
// (pₒ − pₑ)/(1 − pₑ), with pₒ the observed agreement and pₑ = Σ_c p_a(c)·p_b(c);
// it also returns pₒ.
//
// It panics when a and b differ in length. No items give NaN for κ and
// pₒ; when pₑ = 1 (both raters use one and the same label) κ alone is NaN.
func CohenKappa(a, b []string) (kappa, agree float64) {
	if len(a) != len(b) {
		panic(violation("CohenKappa", "a has %d labels, b has %d", len(a), len(b)))
	}
	if len(a) == 0 {
		return math.NaN(), math.NaN()
	}
	n := float64(len(a))
	ca, cb := map[string]float64{}, map[string]float64{}
	for i := range a {
		if a[i] == b[i] {
			agree++
		}
		ca[a[i]]++
		cb[b[i]]++
	}
	agree /= n
	pe := 0.0
	for c, v := range ca {
		pe += v / n * cb[c] / n
	}
	if pe == 1 {
		return math.NaN(), agree
	}
	return (agree - pe) / (1 - pe), agree
}
