package stats

import (
	"math"
	"slices"
)

// tieSums describes the tie groups of x (group sizes t):
// t2 = Σ t(t−1)/2, t3 = Σ t(t−1)(t−2), t5 = Σ t(t−1)(2t+5).
func tieSums(x []float64) (t2, t3, t5 float64) {
	s := slices.Sorted(slices.Values(x))
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[i] {
			j++
		}
		t := float64(j - i + 1)
		t2 += t * (t - 1) / 2
		t3 += t * (t - 1) * (t - 2)
		t5 += t * (t - 1) * (2*t + 5)
		i = j + 1
	}
	return
}

// Kendall is Kendall's τ-b, (C − D) / sqrt((n₀ − n₁)(n₀ − n₂)) with
// n₀ = n(n−1)/2 and n₁, n₂ the pairs tied in x and in y, and its two-sided
// p-value as SciPy computes it: exact (Kendall's recurrence for the number
// of inversions) when neither sample has ties and n ≤ 33 or min(D, n₀−D) ≤ 1,
// otherwise the normal approximation of C − D with variance
//
//	(m(2n+5) − Σx − Σy)/18 + 2·n₁·n₂/m + X₃·Y₃/(9m(n−2)),  m = n(n−1),
//
// where Σ = Σ t(t−1)(2t+5) and X₃, Y₃ = Σ t(t−1)(t−2) over tie groups.
//
// It panics when x and y differ in length. Fewer than 2 pairs or a
// constant sample give NaN for τ and p.
func Kendall(x, y []float64) (tau, p float64) {
	checkPairs("Kendall", len(x), len(y))
	n := len(x)
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	var con, dis float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s := sign(x[i]-x[j]) * sign(y[i]-y[j])
			switch {
			case s > 0:
				con++
			case s < 0:
				dis++
			}
		}
	}
	tot := float64(n) * float64(n-1) / 2
	xt, x3, x5 := tieSums(x)
	yt, y3, y5 := tieSums(y)
	if xt == tot || yt == tot {
		return math.NaN(), math.NaN()
	}
	cmd := con - dis
	tau = cmd / math.Sqrt(tot-xt) / math.Sqrt(tot-yt)
	// SciPy counts discordant pairs after breaking x ties by y order; with
	// no ties D is the plain discordant count used here.
	if xt == 0 && yt == 0 && (n <= 33 || math.Min(dis, tot-dis) <= 1) {
		return tau, kendallExact(n, int(tot-dis))
	}
	fn := float64(n)
	m := fn * (fn - 1)
	v := (m*(2*fn+5)-x5-y5)/18 + 2*xt*yt/m
	if n > 2 {
		v += x3 * y3 / (9 * m * (fn - 2))
	}
	z := cmd / math.Sqrt(v)
	return tau, 2 * stdNormal.Survival(math.Abs(z))
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// kendallExact is the two-sided exact p of c concordant pairs among n
// untied observations (Kendall 1970; SciPy's _kendall_p_exact).
func kendallExact(n, c int) float64 {
	tot := n * (n - 1) / 2
	c = min(c, tot-c)
	var prob float64
	switch {
	case n <= 2:
		return 1
	case c == 0:
		prob = 2 / factorial(n)
	case c == 1:
		prob = 2 / factorial(n-1)
	case 4*c == n*(n-1):
		return 1
	default:
		cur := make([]float64, c+1)
		cur[0], cur[1] = 1, 1
		for j := 3; j <= n; j++ {
			for k := 1; k <= c; k++ { // cumulative sum
				cur[k] += cur[k-1]
			}
			if j <= c {
				old := append([]float64(nil), cur...)
				for k := j; k <= c; k++ {
					cur[k] -= old[k-j]
				}
			}
		}
		prob = 2 * sum(cur) / factorial(n)
	}
	return math.Min(1, math.Max(0, prob))
}

func factorial(n int) float64 {
	f := 1.0
	for i := 2; i <= n; i++ {
		f *= float64(i)
	}
	return f
}

// WilcoxonMethod selects how Wilcoxon computes p.
type WilcoxonMethod int

// Methods, as SciPy's mode argument.
const (
	WilcoxonAuto   WilcoxonMethod = iota // exact when n ≤ 50 and no zero differences, else normal
	WilcoxonExact                        // exact distribution of the signed-rank sum
	WilcoxonNormal                       // normal approximation with the tie correction
)

// WilcoxonResult holds the statistic T = min(R⁺, R⁻), the two-sided p and
// the number of non-zero differences used (0 when the test is undefined:
// T, P and Z are then NaN).
type WilcoxonResult struct {
	T, P float64
	N    int
	Z    float64 // the normal z (normal method only; NaN under the exact one)
}

// Wilcoxon is the two-sided Wilcoxon signed-rank test of the differences
// d (SciPy's default zero_method "wilcox": zero differences are dropped,
// which forces the normal method). Ranks are of |d| with ties averaged.
//
// Exact: the distribution of R⁺ over all 2ⁿ sign assignments, p =
// 2·min(P(R⁺ ≤ r), P(R⁺ ≥ r)) with r = ⌊R⁺⌋ (as SciPy; with ties the exact
// method is only approximate — prefer the normal one), 1 at the centre.
// Normal: z = (T − n(n+1)/4) / sqrt((n(n+1)(2n+1) − ½·Σ t(t²−1)) / 24)
// over tie groups t of |d|, no continuity correction, p = 2·(1 − Φ(|z|)).
//
// It panics on a method other than the three. No non-zero difference (d
// empty or all zero) gives N = 0 and NaN for T, P and Z. Z is NaN under
// the exact method too, where no z is computed.
func Wilcoxon(d []float64, method WilcoxonMethod) WilcoxonResult {
	if method != WilcoxonAuto && method != WilcoxonExact && method != WilcoxonNormal {
		panic(violation("Wilcoxon", "unknown method %d", method))
	}
	nz := slices.DeleteFunc(slices.Clone(d), func(v float64) bool { return v == 0 })
	// Zero differences: the exact distribution does not apply.
	if method == WilcoxonAuto && len(d) > 50 || len(nz) < len(d) {
		method = WilcoxonNormal
	}
	n := len(nz)
	if n == 0 {
		return WilcoxonResult{T: math.NaN(), P: math.NaN(), Z: math.NaN()}
	}
	abs := make([]float64, n)
	for i, v := range nz {
		abs[i] = math.Abs(v)
	}
	r := Ranks(abs)
	var rp, rm float64
	for i, v := range nz {
		if v > 0 {
			rp += r[i]
		} else {
			rm += r[i]
		}
	}
	res := WilcoxonResult{T: math.Min(rp, rm), N: n, Z: math.NaN()}
	fn := float64(n)
	if method == WilcoxonNormal {
		mn := fn * (fn + 1) / 4
		se := fn * (fn + 1) * (2*fn + 1)
		t2, t3, _ := tieSums(r) // Σ t(t²−1) = Σ t(t−1)(t−2) + 6·Σ t(t−1)/2
		se = math.Sqrt((se - 0.5*(t3+6*t2)) / 24)
		res.Z = (res.T - mn) / se
		res.P = 2 * stdNormal.Survival(math.Abs(res.Z))
		return res
	}
	pmf := signedRankPMF(n)
	k := int(rp)
	if k == (len(pmf)-1)/2 {
		res.P = 1
		return res
	}
	res.P = math.Min(1, 2*math.Min(sum(pmf[:k+1]), sum(pmf[k:])))
	return res
}

// signedRankPMF is P(R⁺ = r), r = 0 … n(n+1)/2, under the null.
func signedRankPMF(n int) []float64 {
	c := []float64{1}
	for k := 1; k <= n; k++ {
		next := make([]float64, k*(k+1)/2+1)
		for i, v := range c {
			next[i] += v / 2
			next[i+k] += v / 2
		}
		c = next
	}
	return c
}
