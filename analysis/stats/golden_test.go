package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// golden.json is written by testdata/stats/make_golden.py with SciPy.
type golden struct {
	SciPy string                     `json:"scipy"`
	Cases map[string]json.RawMessage `json:"cases"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("../../testdata/stats/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if g.SciPy == "" || len(g.Cases) < 50 {
		t.Fatalf("golden file: scipy %q, %d cases", g.SciPy, len(g.Cases))
	}
	return g
}

// num reads a golden number: null is NaN, "inf" is +Inf.
type num float64

func (n *num) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*n = num(math.NaN())
		return nil
	case `"inf"`:
		*n = num(math.Inf(1))
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = num(f)
	return err
}

func close(t *testing.T, name string, got float64, want num) {
	t.Helper()
	w := float64(want)
	switch {
	case math.IsNaN(w) && math.IsNaN(got), math.IsInf(w, 1) && math.IsInf(got, 1):
		return
	case math.Abs(got-w) <= 1e-9*math.Max(1, math.Abs(w)):
		return
	}
	t.Errorf("%s: got %.15g, SciPy %.15g", name, got, w)
}

func TestAgainstSciPy(t *testing.T) {
	g := loadGolden(t)
	seen := map[string]int{}
	for name, raw := range g.Cases {
		kind := name[:strings.IndexByte(name, '/')]
		seen[kind]++
		switch kind {
		case "wilcoxon":
			var c struct {
				D     []float64
				T, P  num
				Error string
			}
			json.Unmarshal(raw, &c)
			mode := map[string]WilcoxonMethod{"auto": WilcoxonAuto, "exact": WilcoxonExact, "approx": WilcoxonNormal}[name[strings.LastIndexByte(name, '/')+1:]]
			r := Wilcoxon(c.D, mode)
			if c.Error != "" { // SciPy fails where the test is undefined: NaN here
				if r.N != 0 || !math.IsNaN(r.P) || !math.IsNaN(r.T) {
					t.Errorf("%s: SciPy fails (%s), Go gives %+v", name, c.Error, r)
				}
				continue
			}
			close(t, name+" T", r.T, c.T)
			close(t, name+" p", r.P, c.P)
		case "corr":
			var c struct {
				X, Y                       []float64
				Pearson, Spearman, Kendall [2]num
			}
			json.Unmarshal(raw, &c)
			for _, f := range []struct {
				n    string
				fn   func(x, y []float64) (float64, float64)
				want [2]num
			}{{"pearson", Pearson, c.Pearson}, {"spearman", Spearman, c.Spearman}, {"kendall", Kendall, c.Kendall}} {
				v, p := f.fn(c.X, c.Y)
				close(t, name+" "+f.n, v, f.want[0])
				close(t, name+" "+f.n+" p", p, f.want[1])
			}
		case "mcnemar":
			var c struct {
				B, C  int
				Exact num
				Chi2  map[string][2]num
			}
			json.Unmarshal(raw, &c)
			close(t, name+" exact", McNemarExact(c.B, c.C), c.Exact)
			for corr, want := range c.Chi2 {
				s, p := McNemarChi2(c.B, c.C, corr == "True")
				close(t, name+" chi2 "+corr, s, want[0])
				close(t, name+" chi2 p "+corr, p, want[1])
			}
		case "fisher":
			var c struct {
				Table   [4]int
				Odds, P num
			}
			json.Unmarshal(raw, &c)
			o, p := FisherExact(c.Table[0], c.Table[1], c.Table[2], c.Table[3])
			close(t, name+" odds", o, c.Odds)
			close(t, name+" p", p, c.P)
		case "twoprop":
			var c struct {
				K1, N1, K2, N2 int
				Z, P           num
			}
			json.Unmarshal(raw, &c)
			z, p := TwoProportionZ(c.K1, c.N1, c.K2, c.N2)
			close(t, name+" z", z, c.Z)
			close(t, name+" p", p, c.P)
		case "wilson":
			var c struct {
				K, N   int
				Lo, Hi num
			}
			json.Unmarshal(raw, &c)
			lo, hi := Wilson(c.K, c.N, 0.95)
			close(t, name+" lo", lo, c.Lo)
			close(t, name+" hi", hi, c.Hi)
		case "adjust":
			var c struct{ P, Holm, BH []float64 }
			json.Unmarshal(raw, &c)
			h, b := Holm(c.P), BenjaminiHochberg(c.P)
			for i := range c.P {
				close(t, name+" holm", h[i], num(c.Holm[i]))
				close(t, name+" bh", b[i], num(c.BH[i]))
			}
		case "perm":
			var c struct {
				D       []float64
				Mean, P num
			}
			json.Unmarshal(raw, &c)
			m, p := PairedPermutation(c.D, 20, 0, nil)
			close(t, name+" mean", m, c.Mean)
			close(t, name+" p", p, c.P)
		case "perm2":
			var c struct {
				A, B    []float64
				Diff, P num
			}
			json.Unmarshal(raw, &c)
			d, p := TwoSamplePermutation(c.A, c.B, 100000, 0, nil)
			close(t, name+" diff", d, c.Diff)
			close(t, name+" p", p, c.P)
		case "kappa":
			var c struct {
				A, B         []string
				Kappa, Agree num
			}
			json.Unmarshal(raw, &c)
			k, a := CohenKappa(c.A, c.B)
			close(t, name+" kappa", k, c.Kappa)
			close(t, name+" agree", a, c.Agree)
		default:
			t.Errorf("unknown golden case %s", name)
		}
	}
	for _, k := range []string{"wilcoxon", "corr", "mcnemar", "fisher", "twoprop", "wilson", "adjust", "perm", "perm2", "kappa"} {
		if seen[k] == 0 {
			t.Errorf("no golden cases of %s", k)
		}
	}
}

// Beyond the exact limit the random reassignments approximate the exact p.
func TestTwoSamplePermutationMonteCarlo(t *testing.T) {
	a := []float64{0.12, 0.05, 0.20, -0.02, 0.08, 0.15, 0.03, 0.10, 0.07, 0.01, 0.09}
	b := []float64{0.02, -0.05, 0.04, 0.00}
	_, exact := TwoSamplePermutation(a, b, 100000, 0, nil)
	_, mc := TwoSamplePermutation(a, b, 0, 20000, rand.New(rand.NewPCG(1, 2)))
	if math.Abs(mc-exact) > 0.01 {
		t.Errorf("Monte Carlo p %v, exact %v", mc, exact)
	}
}
