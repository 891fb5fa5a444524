package stats

import (
	"math"
	"testing"
)

// A mean of gains that cancel is 0, not the residue of their sum; other
// means are the plain mean.
func TestMeanOfCancellingGains(t *testing.T) {
	cases := []struct {
		x    []float64
		want float64
	}{
		{[]float64{0.1, 0.2, -0.3}, 0},
		{[]float64{0.7, -0.1, -0.2, -0.4}, 0},
		{[]float64{0.25, 0.5}, 0.375},
		{[]float64{1e-9, 0}, 5e-10},
	}
	for _, c := range cases {
		if got := Mean(c.x); got != c.want {
			t.Errorf("Mean(%v) = %g, want %g", c.x, got, c.want)
		}
	}
	if !math.IsNaN(Mean(nil)) {
		t.Error("Mean(nil) is not NaN")
	}
}
