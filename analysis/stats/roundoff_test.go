package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRoundoffZero(t *testing.T) {
	cases := []struct {
		name   string
		x, abs float64
		n      int
		want   float64
	}{
		{"a residue of 0.1 + 0.2 - 0.3", 0.1 + 0.2 - 0.3, 0.6, 3, 0},
		{"a negative residue", -1.85e-17, 0.5, 22, 0},
		{"a true small value", 1e-9, 0.6, 3, 1e-9},
		{"the smallest gap of two rates over a million answers", 1e-6, 2, 2, 1e-6},
		{"zero", 0, 0, 0, 0},
		{"no terms' magnitude: kept", 1e-300, 0, 1, 1e-300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RoundoffZero(c.x, c.abs, c.n); got != c.want {
				t.Errorf("RoundoffZero(%g, %g, %d) = %g, want %g", c.x, c.abs, c.n, got, c.want)
			}
		})
	}
}

// Two samples with equal means summed in different orders: the
// difference is 0, not a residue; a real difference is kept.
func TestTwoSamplePermutationDiffOfEqualMeans(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		a, b []float64
		want float64
	}{
		{"equal means, other terms", []float64{0.1, 0.2, -0.3, 0.0}, []float64{0.3, -0.1, -0.2}, 0},
		{"equal means, gains", []float64{0.7, 0.1, 0.2}, []float64{0.3, 0.6, 0.1}, 0},
		{"a real difference", []float64{0.5, 0.25}, []float64{0.25, 0.25}, 0.125},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			diff, p := TwoSamplePermutation(c.a, c.b, 100000, 1000, rng)
			if diff != c.want {
				t.Errorf("diff %g, want %g", diff, c.want)
			}
			if p < 0 || p > 1 {
				t.Errorf("p %g", p)
			}
		})
	}
}

// Differences that cancel give a mean and bounds of exactly 0 where every
// resample cancels, not a residue.
func TestPairedBootstrapOfCancellingDifferences(t *testing.T) {
	mean, lo, hi := PairedBootstrap([]float64{0.1, 0.2, -0.3}, 0.95, 2000, rand.New(rand.NewPCG(3, 4)))
	if mean != 0 {
		t.Errorf("mean %g, want 0", mean)
	}
	if lo > 0 || hi < 0 {
		t.Errorf("interval [%g, %g] does not hold 0", lo, hi)
	}
	for _, v := range []float64{lo, hi} {
		if v != 0 && math.Abs(v) < 1e-15 {
			t.Errorf("bound %g is a residue", v)
		}
	}
}
