package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBootstrap(t *testing.T) {
	d := make([]float64, 200)
	for i := range d {
		if i%4 == 0 {
			d[i] = 1 // strategy right, baseline wrong on a quarter of the items
		}
	}
	m1, lo1, hi1, err := PairedBootstrap(d, 0.95, 2000, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	m2, lo2, hi2, _ := PairedBootstrap(d, 0.95, 2000, rand.New(rand.NewPCG(1, 2)))
	if m1 != 0.25 || lo1 != lo2 || hi1 != hi2 || m1 != m2 {
		t.Fatalf("not deterministic or wrong mean: %v %v %v / %v %v %v", m1, lo1, hi1, m2, lo2, hi2)
	}
	// The normal-theory 95% half-width is 1.96·sqrt(.25·.75/200) ≈ 0.060.
	if !(lo1 < 0.25 && hi1 > 0.25) || math.Abs((hi1-lo1)/2-0.060) > 0.012 {
		t.Errorf("interval [%v, %v]", lo1, hi1)
	}
	if _, _, _, err := PairedBootstrap(nil, 0.95, 100, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("empty sample accepted")
	}
}

func TestPermutationMonteCarloNearExact(t *testing.T) {
	d := []float64{1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0}
	_, exact, _ := PairedPermutation(d, 20, 0, nil)
	_, mc, err := PairedPermutation(d, 0, 20000, rand.New(rand.NewPCG(7, 7)))
	if err != nil || math.Abs(exact-mc) > 0.02 {
		t.Errorf("exact %v, Monte Carlo %v (%v)", exact, mc, err)
	}
	if _, _, err := PairedPermutation(d, 0, 100, nil); err == nil {
		t.Error("Monte Carlo without a random source")
	}
}

func TestEdgeCases(t *testing.T) {
	if lo, hi := Wilson(0, 0, 0.95); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0,0) = %v %v", lo, hi)
	}
	// The bounds at the ends are exact, not 2.78e-17 (k = 0) or 1 − 1e-16.
	for _, n := range []int{1, 3, 7, 10, 36, 500, 6364170} {
		if lo, _ := Wilson(0, n, 0.95); lo != 0 {
			t.Errorf("Wilson(0, %d) lower bound %g, want 0", n, lo)
		}
		if _, hi := Wilson(n, n, 0.95); hi != 1 {
			t.Errorf("Wilson(%d, %d) upper bound %g, want 1", n, n, hi)
		}
	}
	if p := NewProportion(3, 0); !math.IsNaN(p.P) {
		t.Error("0/0 is not NaN")
	}
	if s := NewProportion(355, 500).String(); s != "0.710 [0.669, 0.748] (355/500)" {
		t.Errorf("String %q", s)
	}
	if _, _, err := Pearson([]float64{1, 1, 1}, []float64{1, 2, 3}); err == nil {
		t.Error("constant sample accepted")
	}
	if _, _, err := Kendall([]float64{1}, []float64{1}); err == nil {
		t.Error("one pair accepted")
	}
	if _, err := Wilcoxon([]float64{0, 0}, WilcoxonAuto); err == nil {
		t.Error("all-zero differences accepted")
	}
	if _, _, err := TwoProportionZ(1, 0, 1, 2); err == nil {
		t.Error("empty sample accepted")
	}
	if _, _, err := CohenKappa([]string{"a"}, nil); err == nil {
		t.Error("unequal label lists accepted")
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
	if d, _, _ := PairedDiffCI(0, 0, 0, 0.95); !math.IsNaN(d) {
		t.Error("n = 0")
	}
}
