package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestBootstrap(t *testing.T) {
	d := make([]float64, 200)
	for i := range d {
		if i%4 == 0 {
			d[i] = 1 // strategy right, baseline wrong on a quarter of the items
		}
	}
	m1, lo1, hi1 := PairedBootstrap(d, 0.95, 2000, rand.New(rand.NewPCG(1, 2)))
	m2, lo2, hi2 := PairedBootstrap(d, 0.95, 2000, rand.New(rand.NewPCG(1, 2)))
	if m1 != 0.25 || lo1 != lo2 || hi1 != hi2 || m1 != m2 {
		t.Fatalf("not deterministic or wrong mean: %v %v %v / %v %v %v", m1, lo1, hi1, m2, lo2, hi2)
	}
	// The normal-theory 95% half-width is 1.96·sqrt(.25·.75/200) ≈ 0.060.
	if !(lo1 < 0.25 && hi1 > 0.25) || math.Abs((hi1-lo1)/2-0.060) > 0.012 {
		t.Errorf("interval [%v, %v]", lo1, hi1)
	}
}

func TestPermutationMonteCarloNearExact(t *testing.T) {
	d := []float64{1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0}
	_, exact := PairedPermutation(d, 20, 0, nil)
	_, mc := PairedPermutation(d, 0, 20000, rand.New(rand.NewPCG(7, 7)))
	if math.Abs(exact-mc) > 0.02 {
		t.Errorf("exact %v, Monte Carlo %v", exact, mc)
	}
}

// TestPolicy checks the package's precondition policy function by
// function: a programmer error panics with a message naming the function
// and the precondition; undefined results are NaN, and the results that
// stay defined keep their values.
func TestPolicy(t *testing.T) {
	nan := math.NaN()
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
	d3 := []float64{1, -2, 3}
	two := func(a, b float64) []float64 { return []float64{a, b} }
	three := func(a, b, c float64) []float64 { return []float64{a, b, c} }
	wilcoxon := func(r WilcoxonResult) []float64 { return []float64{r.T, r.P, r.Z, float64(r.N)} }
	prop := func(p Proportion) []float64 { return []float64{p.P, p.Lo, p.Hi} }
	for _, c := range []struct {
		name  string
		call  func() []float64
		panic string    // a part of the panic message; "" when the call must not panic
		want  []float64 // the results when it does not panic (NaN: must be NaN)
	}{
		// Wilson and NewProportion: counts and level panic; no trials give (0, 1).
		{"Wilson k < 0", func() []float64 { return two(Wilson(-1, 3, 0.95)) }, "stats.Wilson: k = -1 outside [0, n = 3]", nil},
		{"Wilson k > n", func() []float64 { return two(Wilson(4, 3, 0.95)) }, "stats.Wilson: k = 4 outside [0, n = 3]", nil},
		{"Wilson n < 0", func() []float64 { return two(Wilson(0, -1, 0.95)) }, "stats.Wilson: negative sample size n = -1", nil},
		{"Wilson conf 1", func() []float64 { return two(Wilson(1, 3, 1)) }, "stats.Wilson: confidence level 1 outside (0, 1)", nil},
		{"Wilson conf NaN", func() []float64 { return two(Wilson(1, 3, nan)) }, "stats.Wilson: confidence level NaN", nil},
		{"Wilson no trials", func() []float64 { return two(Wilson(0, 0, 0.95)) }, "", []float64{0, 1}},
		{"NewProportion k > n", func() []float64 { return prop(NewProportion(3, 0)) }, "stats.NewProportion: k = 3 outside [0, n = 0]", nil},
		{"NewProportion 0/0", func() []float64 { return prop(NewProportion(0, 0)) }, "", []float64{nan, 0, 1}},
		// Binomial and McNemar: negative or excess counts panic; no trials give p = 1.
		{"BinomTwoSided k > n", func() []float64 { return []float64{BinomTwoSided(3, 2)} }, "stats.BinomTwoSided: k = 3 outside [0, n = 2]", nil},
		{"BinomTwoSided no trials", func() []float64 { return []float64{BinomTwoSided(0, 0)} }, "", []float64{1}},
		{"McNemarExact b < 0", func() []float64 { return []float64{McNemarExact(-1, 2)} }, "stats.McNemarExact: negative discordant count b = -1, c = 2", nil},
		{"McNemarExact no discordant pairs", func() []float64 { return []float64{McNemarExact(0, 0)} }, "", []float64{1}},
		{"McNemarChi2 c < 0", func() []float64 { return two(McNemarChi2(1, -2, true)) }, "stats.McNemarChi2: negative discordant count b = 1, c = -2", nil},
		{"McNemarChi2 no discordant pairs", func() []float64 { return two(McNemarChi2(0, 0, true)) }, "", []float64{0, 1}},
		// TwoProportionZ: counts panic; an empty sample is NaN.
		{"TwoProportionZ k1 > n1", func() []float64 { return two(TwoProportionZ(3, 2, 1, 2)) }, "stats.TwoProportionZ: k1 = 3 outside [0, n1 = 2]", nil},
		{"TwoProportionZ n2 < 0", func() []float64 { return two(TwoProportionZ(1, 2, 0, -1)) }, "stats.TwoProportionZ: negative sample size n2 = -1", nil},
		{"TwoProportionZ empty sample", func() []float64 { return two(TwoProportionZ(0, 0, 1, 2)) }, "", []float64{nan, nan}},
		{"TwoProportionZ equal pooled 0", func() []float64 { return two(TwoProportionZ(0, 5, 0, 5)) }, "", []float64{0, 1}},
		// FisherExact: a negative cell panics; an undefined odds ratio is NaN.
		{"FisherExact negative cell", func() []float64 { return two(FisherExact(1, -1, 2, 3)) }, "stats.FisherExact: negative cell in [[1, -1], [2, 3]]", nil},
		{"FisherExact odds 0/0", func() []float64 { return two(FisherExact(0, 5, 0, 5)) }, "", []float64{nan, 1}},
		// Correlations: unequal lengths panic; too few pairs or a constant sample are NaN.
		{"Pearson lengths", func() []float64 { return two(Pearson([]float64{1, 2}, []float64{1})) }, "stats.Pearson: x has 2 values, y has 1", nil},
		{"Pearson no pairs", func() []float64 { return two(Pearson(nil, nil)) }, "", []float64{nan, nan}},
		{"Pearson one pair", func() []float64 { return two(Pearson([]float64{1}, []float64{2})) }, "", []float64{nan, nan}},
		{"Pearson constant", func() []float64 { return two(Pearson([]float64{1, 1, 1}, []float64{1, 2, 3})) }, "", []float64{nan, nan}},
		{"Spearman lengths", func() []float64 { return two(Spearman([]float64{1}, []float64{1, 2})) }, "stats.Spearman: x has 1 values, y has 2", nil},
		{"Spearman one pair", func() []float64 { return two(Spearman([]float64{1}, []float64{2})) }, "", []float64{nan, nan}},
		{"Spearman constant", func() []float64 { return two(Spearman([]float64{1, 2, 3}, []float64{4, 4, 4})) }, "", []float64{nan, nan}},
		{"Spearman two pairs: ρ, no p", func() []float64 { return two(Spearman([]float64{1, 2}, []float64{3, 1})) }, "", []float64{-1, nan}},
		{"Kendall lengths", func() []float64 { return two(Kendall([]float64{1, 2, 3}, []float64{1})) }, "stats.Kendall: x has 3 values, y has 1", nil},
		{"Kendall one pair", func() []float64 { return two(Kendall([]float64{1}, []float64{1})) }, "", []float64{nan, nan}},
		{"Kendall constant", func() []float64 { return two(Kendall([]float64{2, 2, 2}, []float64{1, 2, 3})) }, "", []float64{nan, nan}},
		// Difference intervals: counts and level panic; no pairs or an empty sample are NaN.
		{"PairedDiffCI b + c > n", func() []float64 { return three(PairedDiffCI(3, 2, 4, 0.95)) }, "stats.PairedDiffCI: discordant counts b = 3, c = 2 not within n = 4 pairs", nil},
		{"PairedDiffCI b < 0", func() []float64 { return three(PairedDiffCI(-1, 2, 4, 0.95)) }, "stats.PairedDiffCI: discordant counts b = -1", nil},
		{"PairedDiffCI conf 0", func() []float64 { return three(PairedDiffCI(1, 1, 4, 0)) }, "stats.PairedDiffCI: confidence level 0 outside (0, 1)", nil},
		{"PairedDiffCI no pairs", func() []float64 { return three(PairedDiffCI(0, 0, 0, 0.95)) }, "", []float64{nan, nan, nan}},
		{"DiffCI k1 > n1", func() []float64 { return three(DiffCI(1, 0, 1, 2, 0.95)) }, "stats.DiffCI: k1 = 1 outside [0, n1 = 0]", nil},
		{"DiffCI conf 1.5", func() []float64 { return three(DiffCI(1, 2, 1, 2, 1.5)) }, "stats.DiffCI: confidence level 1.5 outside (0, 1)", nil},
		{"DiffCI empty sample", func() []float64 { return three(DiffCI(1, 2, 0, 0, 0.95)) }, "", []float64{nan, nan, nan}},
		// Permutation tests: bad counts, or no random source where one is needed, panic; no values are NaN.
		{"PairedPermutation negative resamples", func() []float64 { return two(PairedPermutation(d3, 20, -1, nil)) }, "stats.PairedPermutation: negative exactMax = 20 or resamples = -1", nil},
		{"PairedPermutation exactMax above 30", func() []float64 { return two(PairedPermutation(d3, 31, 0, nil)) }, "stats.PairedPermutation: exactMax = 31 above 30", nil},
		{"PairedPermutation no resamples beyond the exact limit", func() []float64 { return two(PairedPermutation(d3, 2, 0, rng())) }, "stats.PairedPermutation: beyond the exact limit it needs resamples ≥ 1 (have 0)", nil},
		{"PairedPermutation nil rng beyond the exact limit", func() []float64 { return two(PairedPermutation(d3, 0, 100, nil)) }, "stats.PairedPermutation: beyond the exact limit it needs resamples ≥ 1 (have 100) and a random source (nil: true)", nil},
		{"PairedPermutation exact needs no rng", func() []float64 { return two(PairedPermutation([]float64{1}, 20, 0, nil)) }, "", []float64{1, 1}},
		{"PairedPermutation no pairs", func() []float64 { return two(PairedPermutation(nil, 20, 0, nil)) }, "", []float64{nan, nan}},
		{"TwoSamplePermutation negative exactMax", func() []float64 { return two(TwoSamplePermutation(d3, d3, -1, 10, rng())) }, "stats.TwoSamplePermutation: negative exactMax = -1", nil},
		{"TwoSamplePermutation nil rng beyond the exact limit", func() []float64 { return two(TwoSamplePermutation(d3, d3, 10, 100, nil)) }, "stats.TwoSamplePermutation: beyond the exact limit it needs resamples ≥ 1 (have 100) and a random source (nil: true)", nil},
		{"TwoSamplePermutation empty sample", func() []float64 { return two(TwoSamplePermutation(d3, nil, 10, 0, nil)) }, "", []float64{nan, nan}},
		// PairedBootstrap: level, resamples and rng panic; no pairs are NaN.
		{"PairedBootstrap one resample", func() []float64 { return three(PairedBootstrap(d3, 0.95, 1, rng())) }, "stats.PairedBootstrap: needs resamples ≥ 2 (have 1) and a random source (nil: false)", nil},
		{"PairedBootstrap nil rng", func() []float64 { return three(PairedBootstrap(d3, 0.95, 100, nil)) }, "stats.PairedBootstrap: needs resamples ≥ 2 (have 100) and a random source (nil: true)", nil},
		{"PairedBootstrap conf -0.5", func() []float64 { return three(PairedBootstrap(d3, -0.5, 100, rng())) }, "stats.PairedBootstrap: confidence level -0.5 outside (0, 1)", nil},
		{"PairedBootstrap no pairs", func() []float64 { return three(PairedBootstrap(nil, 0.95, 100, rng())) }, "", []float64{nan, nan, nan}},
		// CohenKappa: unequal lengths panic; no items are NaN; one shared label leaves agreement defined.
		{"CohenKappa lengths", func() []float64 { return two(CohenKappa([]string{"a"}, nil)) }, "stats.CohenKappa: a has 1 labels, b has 0", nil},
		{"CohenKappa no items", func() []float64 { return two(CohenKappa(nil, nil)) }, "", []float64{nan, nan}},
		{"CohenKappa one label", func() []float64 { return two(CohenKappa([]string{"x", "x"}, []string{"x", "x"})) }, "", []float64{nan, 1}},
		// Wilcoxon: an unknown method panics; no non-zero difference is NaN.
		{"Wilcoxon unknown method", func() []float64 { return wilcoxon(Wilcoxon(d3, WilcoxonMethod(7))) }, "stats.Wilcoxon: unknown method 7", nil},
		{"Wilcoxon all zero", func() []float64 { return wilcoxon(Wilcoxon([]float64{0, 0}, WilcoxonAuto)) }, "", []float64{nan, nan, nan, 0}},
		{"Wilcoxon empty", func() []float64 { return wilcoxon(Wilcoxon(nil, WilcoxonExact)) }, "", []float64{nan, nan, nan, 0}},
		{"Wilcoxon exact has no z", func() []float64 { return wilcoxon(Wilcoxon([]float64{1, 2}, WilcoxonExact)) }, "", []float64{0, 0.5, nan, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, msg := callPolicy(c.call)
			switch {
			case c.panic != "":
				if !strings.Contains(msg, c.panic) {
					t.Fatalf("panic %q (results %v), want one containing %q", msg, got, c.panic)
				}
				return
			case msg != "":
				t.Fatalf("panics: %s", msg)
			case len(got) != len(c.want):
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i, w := range c.want {
				if math.IsNaN(w) != math.IsNaN(got[i]) || !math.IsNaN(w) && math.Abs(got[i]-w) > 1e-12 {
					t.Errorf("result %d: got %v, want %v (all: %v)", i, got[i], w, got)
				}
			}
		})
	}
}

// callPolicy runs call and returns its results or, when it panics, the
// panic's message.
func callPolicy(call func() []float64) (got []float64, msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	return call(), ""
}

func TestEdgeCases(t *testing.T) {
	// The bounds at the ends are exact, not 2.78e-17 (k = 0) or 1 − 1e-16.
	for _, n := range []int{1, 3, 7, 10, 36, 500, 6364170} {
		if lo, _ := Wilson(0, n, 0.95); lo != 0 {
			t.Errorf("Wilson(0, %d) lower bound %g, want 0", n, lo)
		}
		if _, hi := Wilson(n, n, 0.95); hi != 1 {
			t.Errorf("Wilson(%d, %d) upper bound %g, want 1", n, n, hi)
		}
	}
	if p := NewProportion(355, 500); p.K != 355 || p.N != 500 || p.P != 0.71 || math.Abs(p.Lo-0.669) > 5e-4 || math.Abs(p.Hi-0.748) > 5e-4 {
		t.Errorf("NewProportion(355, 500) = %+v", p)
	}
	r := Ranks([]float64{10, 20, 20, 5})
	if r[0] != 2 || r[1] != 3.5 || r[2] != 3.5 || r[3] != 1 {
		t.Errorf("ranks %v", r)
	}
}

func TestDiffCIs(t *testing.T) {
	d, lo, hi := PairedDiffCI(1, 6, 10, 0.95)
	// d = 0.5; se = sqrt(7 − 25/10)/10 = sqrt(4.5)/10
	want := 1.959963984540054 * math.Sqrt(4.5) / 10
	if d != 0.5 || math.Abs(hi-d-want) > 1e-12 || math.Abs(d-lo-want) > 1e-12 {
		t.Errorf("paired %v %v %v", d, lo, hi)
	}
	d, lo, hi = DiffCI(14, 20, 6, 20, 0.95)
	want = 1.959963984540054 * math.Sqrt(0.7*0.3/20+0.3*0.7/20)
	if math.Abs(d-0.4) > 1e-12 || math.Abs(hi-d-want) > 1e-12 {
		t.Errorf("unpaired %v %v %v", d, lo, hi)
	}
}

// TestSignFlipsSumsInOrder: the prefix walk gives each signed sum as
// the left-to-right loop does, bit for bit (the exact test's ties hang
// on the last bit), on data with many ties and on data with none.
func TestSignFlipsSumsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	cases := []struct {
		name string
		d    []float64
	}{
		{"one", []float64{0.25}},
		{"sevenths", func() []float64 {
			d := make([]float64, 13)
			for i := range d {
				d[i] = float64(rng.IntN(15)-7) / 7
			}
			return d
		}()},
		{"uniform", func() []float64 {
			d := make([]float64, 12)
			for i := range d {
				d[i] = rng.Float64()*2 - 1
			}
			return d
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []uint64
			for mask := 0; mask < 1<<len(c.d); mask++ {
				s := 0.0
				for i, v := range c.d {
					if mask&(1<<i) != 0 {
						s -= v
					} else {
						s += v
					}
				}
				want = append(want, math.Float64bits(s))
			}
			var got []uint64
			signFlips(c.d, func(s float64) { got = append(got, math.Float64bits(s)) })
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("the walk's %d sums differ from the loop's %d", len(got), len(want))
			}
		})
	}
}
