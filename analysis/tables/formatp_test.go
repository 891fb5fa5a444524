package tables

import (
	"math"
	"strings"
	"testing"
)

// A p-value is written for a reader with three significant digits,
// scientifically below 0.001, and never as zero.
func TestFormatP(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want string
	}{
		{0, "< 2.2e-16"}, // Spearman's t approximation at ρ = 1 (SciPy's 0)
		{1e-300, "< 2.2e-16"},
		{3e-17, "< 2.2e-16"},
		{1.86e-9, "1.86e-09"},
		{0.000999, "9.99e-04"},
		{0.0123456, "0.0123"},
		{1, "1"},
		{math.NaN(), ""},
	} {
		if got := FormatP(c.p); got != c.want {
			t.Errorf("FormatP(%g) = %q, want %q", c.p, got, c.want)
		}
	}
}

// The LaTeX export writes a p-value column with FormatP.
func TestLaTeXPValue(t *testing.T) {
	tb := New("scaling", "rank correlation", Key("strategy"), Statistic("spearman_rho", "ρ"), PValue("p", "two-sided p"))
	tb.Add("baseline", 1.0, 0.0)
	if tex := tb.LaTeX(); !strings.Contains(tex, "baseline & 1.000 & < 2.2e-16") {
		t.Errorf("LaTeX:\n%s", tex)
	}
}
