package report

import (
	"math"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// The page writes a p-value never as zero and a whole number in a column
// of numbers or statistics without decimals; rates keep three.
func TestDisplayCell(t *testing.T) {
	for _, c := range []struct {
		name string
		col  tables.Column
		v    any
		want string
	}{
		{"p of ρ = 1 over three models", tables.PValue("p", ""), 0.0, "< 2.2e-16"},
		{"small p", tables.PValue("p", ""), 1.86e-9, "1.86e-09"},
		{"p", tables.PValue("p", ""), 0.0412, "0.0412"},
		{"count in a number column", tables.Number("published", ""), 2619.0, "2619"},
		{"negative whole statistic", tables.Statistic("diff", ""), -2611.0, "-2611"},
		{"fraction in a number column", tables.Number("published", ""), 9.23, "9.230"},
		{"whole rate", tables.Proportion("rate", ""), 1.0, "1.000"},
		{"zero", tables.Statistic("diff", ""), 0.0, "0"},
		{"NaN", tables.Number("run", ""), math.NaN(), ""},
		{"int", tables.Count("n", ""), 8, "8"},
	} {
		if got := displayCell(c.col, c.v).Text; got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
