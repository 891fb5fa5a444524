package indicquest

import (
	"math"
	"strconv"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// The lexical shortfall (§5: 17–25 pp) on 100 answers: the judge accepts
// 62 (the paper's Gemma4 31B English 62.2%), exact substring 40 of them,
// word overlap those 40 and 3 the judge rejects. Substring falls short by
// 0.22 with 22 answers split all one way (McNemar p = 2·2⁻²² = 2⁻²¹);
// overlap by (62 − 43)/100 = 0.19, split 22 against 3 (p = 2·P(X ≤ 3),
// X ~ Bin(25, ½) = 2·2626/2²⁵). No significance is asserted: both hold.
func TestClaims(t *testing.T) {
	var rows []score.Row
	for i := range 100 {
		r := row("m", "hin", "native", "", "", strconv.Itoa(i), i < 62)
		r.Marks.Set(MarkSubstring, i < 40)
		r.Marks.Set(MarkOverlap, i < 40 || (i >= 62 && i < 65))
		rows = append(rows, r)
	}
	c := tables.Conclusions(Claims(), nil, rows)
	want := map[string][2]float64{
		"exact substring falls short of the judge (§5: 17–25 pp)": {0.22, math.Pow(2, -21)},
		"word overlap falls short of the judge (§5: 17–25 pp)":    {0.19, 2 * 2626 / math.Pow(2, 25)},
	}
	if len(c.Rows) != len(want) {
		t.Fatalf("rows %v", c.Rows)
	}
	for _, r := range c.Rows {
		w := want[c.Str(r, "claim")]
		if math.Abs(c.Num(r, "effect")-w[0]) > 1e-12 || math.Abs(c.Num(r, "p")-w[1]) > 1e-12 || r[c.Col("holds")] != true || r[c.Col("significance")] != false {
			t.Errorf("%v, want %v", r, w)
		}
	}
	// Substring's paired interval: 0.22 ± 1.96·√(22 − 22²/100)/100.
	half := 1.959963984540054 * math.Sqrt(22-4.84) / 100
	if r := c.Rows[0]; math.Abs(c.Num(r, "effect_lo")-(0.22-half)) > 1e-9 || math.Abs(c.Num(r, "effect_hi")-(0.22+half)) > 1e-9 {
		t.Errorf("substring interval %v", r)
	}
}
