package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/combin"
	"gonum.org/v1/gonum/stat/distuv"
)

var stdNormal = distuv.Normal{Mu: 0, Sigma: 1}

// Wilson returns the Wilson score interval for k successes in n trials at
// confidence level conf (e.g. 0.95):
//
//	centre = (k + z²/2) / (n + z²)
//	half   = z / (n + z²) · sqrt(k(n−k)/n + z²/4)
//
// with z = Φ⁻¹(1 − (1−conf)/2). n = 0 gives (0, 1). The bounds at the
// ends are exact: k = 0 gives lo = 0 and k = n gives hi = 1.
//
// It panics when n < 0, k is outside [0, n] or conf is outside (0, 1).
// Nothing gives NaN: no trials leave the whole range (0, 1) possible.
func Wilson(k, n int, conf float64) (lo, hi float64) {
	checkCount("Wilson", "k", k, n)
	z := checkLevel("Wilson", conf)
	if n == 0 {
		return 0, 1
	}
	fk, fn, z2 := float64(k), float64(n), z*z
	centre := (fk + z2/2) / (fn + z2)
	half := z / (fn + z2) * math.Sqrt(fk*(fn-fk)/fn+z2/4)
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	if k <= 0 {
		lo = 0
	}
	if k >= n {
		hi = 1
	}
	return lo, hi
}

// Proportion is a rate with its count, size and Wilson 95% interval.
type Proportion struct {
	K, N   int
	P      float64
	Lo, Hi float64
}

// NewProportion is k/n with its 95% Wilson interval. P is NaN when n = 0
// (the interval is then (0, 1)); it panics when n < 0 or k is outside
// [0, n].
func NewProportion(k, n int) Proportion {
	checkCount("NewProportion", "k", k, n)
	lo, hi := Wilson(k, n, 0.95)
	p := math.NaN()
	if n > 0 {
		p = float64(k) / float64(n)
	}
	return Proportion{K: k, N: n, P: p, Lo: lo, Hi: hi}
}

// BinomTwoSided is the exact two-sided binomial test of k successes in n
// trials with p = 1/2 (the case McNemar needs): min(1, 2·P(X ≤ min(k, n−k))),
// and 1 when n = 0 (no trials are no evidence against p = 1/2). It panics
// when n < 0 or k is outside [0, n]; nothing gives NaN.
func BinomTwoSided(k, n int) float64 {
	checkCount("BinomTwoSided", "k", k, n)
	if n == 0 {
		return 1
	}
	m := min(k, n-k)
	if 2*m == n {
		return 1
	}
	b := distuv.Binomial{N: float64(n), P: 0.5}
	return math.Min(1, 2*b.CDF(float64(m)))
}

// McNemarExact is McNemar's exact test on the discordant counts of a
// paired 2×2 table (b: right only under A, c: right only under B): the
// two-sided binomial test of b in b + c trials at p = 1/2, 1 when
// b + c = 0. It panics when b or c is negative; nothing gives NaN.
func McNemarExact(b, c int) float64 {
	checkDiscordant("McNemarExact", b, c)
	return BinomTwoSided(b, b+c)
}

// McNemarChi2 is McNemar's chi-square test: statistic
// (|b − c| − 1)² / (b + c) with the continuity correction, (b − c)²/(b + c)
// without, and p = P(χ²₁ ≥ statistic). b + c = 0 gives (0, 1). It panics
// when b or c is negative; nothing gives NaN.
func McNemarChi2(b, c int, correction bool) (stat, p float64) {
	checkDiscordant("McNemarChi2", b, c)
	if b+c == 0 {
		return 0, 1
	}
	d := math.Abs(float64(b - c))
	if correction {
		d = math.Max(0, d-1)
	}
	stat = d * d / float64(b+c)
	return stat, distuv.ChiSquared{K: 1}.Survival(stat)
}

// TwoProportionZ is the pooled two-proportion z test of k1/n1 against
// k2/n2: z = (p1 − p2) / sqrt(p̂(1−p̂)(1/n1 + 1/n2)) with p̂ = (k1+k2)/(n1+n2),
// two-sided p = 2·(1 − Φ(|z|)). When p̂ is 0 or 1 the proportions are equal
// and (0, 1) is returned.
//
// It panics when n1 or n2 is negative or a k is outside [0, its n]; an
// empty sample (n1 = 0 or n2 = 0) gives NaN for z and p.
func TwoProportionZ(k1, n1, k2, n2 int) (z, p float64) {
	checkCount("TwoProportionZ", "k1", k1, n1)
	checkCount("TwoProportionZ", "k2", k2, n2)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), math.NaN()
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	pool := float64(k1+k2) / float64(n1+n2)
	se := math.Sqrt(pool * (1 - pool) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return 0, 1
	}
	z = (p1 - p2) / se
	return z, 2 * stdNormal.Survival(math.Abs(z))
}

// FisherExact is Fisher's exact test of the 2×2 table [[a, b], [c, d]]:
// the sample odds ratio ad/(bc) and the two-sided p, the sum of the
// hypergeometric probabilities of every table with the same margins whose
// probability is at most (1 + 10⁻⁷) times the observed one (R's
// fisher.test tolerance).
//
// It panics when a cell is negative. The odds ratio is NaN when it is
// undefined (bc = ad = 0) and +Inf when only bc = 0; p is 1 when a margin
// is empty or full (the table is then the only one).
func FisherExact(a, b, c, d int) (oddsRatio, p float64) {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		panic(violation("FisherExact", "negative cell in [[%d, %d], [%d, %d]]", a, b, c, d))
	}
	switch {
	case b*c == 0 && a*d == 0:
		oddsRatio = math.NaN()
	case b*c == 0:
		oddsRatio = math.Inf(1)
	default:
		oddsRatio = float64(a) * float64(d) / (float64(b) * float64(c))
	}
	r1, c1, n := a+b, a+c, a+b+c+d
	if n == 0 || r1 == 0 || c1 == 0 || r1 == n || c1 == n {
		return oddsRatio, 1
	}
	lo, hi := max(0, r1+c1-n), min(r1, c1)
	logp := func(x int) float64 { // log hypergeometric pmf
		return lchoose(c1, x) + lchoose(n-c1, r1-x) - lchoose(n, r1)
	}
	obs := logp(a)
	threshold := obs + math.Log1p(1e-7)
	for x := lo; x <= hi; x++ {
		if lp := logp(x); lp <= threshold {
			p += math.Exp(lp)
		}
	}
	return oddsRatio, math.Min(1, p)
}

func lchoose(n, k int) float64 { return combin.LogGeneralizedBinomial(float64(n), float64(k)) }

// Ranks returns the 1-based ranks of x, ties given their average rank
// (an empty x gives an empty slice). No input panics.
func Ranks(x []float64) []float64 {
	idx := order(x)
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// Pearson is Pearson's r with the two-sided p of t = r·sqrt((n−2)/(1−r²))
// on n − 2 degrees of freedom (p = 1 when n = 2 or |r| = 1 with n = 2).
//
// It panics when x and y differ in length. Fewer than 2 pairs or a
// constant sample give NaN for r and p.
func Pearson(x, y []float64) (r, p float64) {
	checkPairs("Pearson", len(x), len(y))
	n := len(x)
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	mx, my := sum(x)/float64(n), sum(y)/float64(n)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN(), math.NaN()
	}
	r = sxy / math.Sqrt(sxx*syy)
	r = math.Max(-1, math.Min(1, r))
	return r, corrP(r, n)
}

// corrP is the two-sided p of a correlation r over n pairs via Student's t.
func corrP(r float64, n int) float64 {
	if n <= 2 {
		return 1
	}
	if math.Abs(r) >= 1 {
		return 0
	}
	df := float64(n - 2)
	t := r * math.Sqrt(df/((1-r)*(1+r)))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
}

// Spearman is Spearman's ρ (Pearson's r of the average ranks) with the
// two-sided p of t = ρ·sqrt((n−2)/((1+ρ)(1−ρ))) on n − 2 degrees of
// freedom.
//
// It panics when x and y differ in length. Fewer than 2 pairs or a
// constant sample give NaN for ρ and p; with n = 2 there are no degrees
// of freedom and p alone is NaN (as SciPy).
func Spearman(x, y []float64) (rho, p float64) {
	checkPairs("Spearman", len(x), len(y))
	rho, p = Pearson(Ranks(x), Ranks(y))
	if len(x) == 2 {
		p = math.NaN()
	}
	return rho, p
}

// PairedDiffCI is the Wald interval of a paired difference in proportions
// over n pairs with discordant counts b (first right only) and c (second
// right only): d = (c − b)/n ± z·sqrt(b + c − (c − b)²/n)/n, clipped to
// [−1, 1].
//
// It panics when a count is negative, b + c > n or conf is outside
// (0, 1); no pairs (n = 0) give NaN for d, lo and hi.
func PairedDiffCI(b, c, n int, conf float64) (d, lo, hi float64) {
	if b < 0 || c < 0 || b+c > n {
		panic(violation("PairedDiffCI", "discordant counts b = %d, c = %d not within n = %d pairs", b, c, n))
	}
	z := checkLevel("PairedDiffCI", conf)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	fn := float64(n)
	d = float64(c-b) / fn
	se := math.Sqrt(math.Max(0, float64(b+c)-float64((c-b)*(c-b))/fn)) / fn
	return d, math.Max(-1, d-z*se), math.Min(1, d+z*se)
}

// DiffCI is the Wald interval of p1 − p2 for independent samples:
// p1 − p2 ± z·sqrt(p1(1−p1)/n1 + p2(1−p2)/n2), clipped to [−1, 1].
//
// It panics when n1 or n2 is negative, a k is outside [0, its n] or conf
// is outside (0, 1); an empty sample gives NaN for d, lo and hi.
func DiffCI(k1, n1, k2, n2 int, conf float64) (d, lo, hi float64) {
	checkCount("DiffCI", "k1", k1, n1)
	checkCount("DiffCI", "k2", k2, n2)
	z := checkLevel("DiffCI", conf)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	d = p1 - p2
	se := math.Sqrt(p1*(1-p1)/float64(n1) + p2*(1-p2)/float64(n2))
	return d, math.Max(-1, d-z*se), math.Min(1, d+z*se)
}

// RoundoffZero is x, the computed sum (or a mean or difference of sums)
// of n terms whose absolute values sum to abs, or exactly 0 when |x| is
// within the rounding error that summation may make: n·ε·abs (Higham's
// bound γ_n for recursive summation, ε = 2⁻⁵³), so that terms that cancel
// (0.1 + 0.2 − 0.3) give 0. For a mean, pass the mean of the absolute
// values as abs.
func RoundoffZero(x, abs float64, n int) float64 {
	if math.Abs(x) <= float64(max(n, 1))*0x1p-53*abs {
		return 0
	}
	return x
}

// violation is the panic message of a broken precondition of the named
// function: "stats.<fn>: <what>", built only on the failing branch.
func violation(fn, format string, args ...any) string {
	return "stats." + fn + ": " + fmt.Sprintf(format, args...)
}

// checkLevel panics unless conf, a confidence level, lies in (0, 1) (NaN
// does not); it returns the level's two-sided normal quantile z.
func checkLevel(fn string, conf float64) (z float64) {
	if !(conf > 0 && conf < 1) {
		panic(violation(fn, "confidence level %v outside (0, 1)", conf))
	}
	return stdNormal.Quantile(1 - (1-conf)/2)
}

// checkDiscordant panics when a discordant count b or c is negative.
func checkDiscordant(fn string, b, c int) {
	if b < 0 || c < 0 {
		panic(violation(fn, "negative discordant count b = %d, c = %d", b, c))
	}
}

// checkCount panics unless 0 ≤ k ≤ n: name is k's name in the caller's
// signature ("k", "k1"), of its n.
func checkCount(fn, name string, k, n int) {
	if n < 0 {
		panic(violation(fn, "negative sample size n%s = %d", name[1:], n))
	}
	if k < 0 || k > n {
		panic(violation(fn, "%s = %d outside [0, n%s = %d]", name, k, name[1:], n))
	}
}

// checkPairs panics unless x and y have the same length.
func checkPairs(fn string, x, y int) {
	if x != y {
		panic(violation(fn, "x has %d values, y has %d", x, y))
	}
}
