package distractors

import (
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/report/chart/charttest"
)

var update = flag.Bool("update", false, "rewrite the golden option files under testdata/report")

var table = charttest.Table

// golden is the golden file of a figure's option (testdata/report at the
// module's root).
func golden(name string) string { return filepath.Join("..", "..", "testdata", "report", name+".json") }

// Each figure's ECharts option is compared with its golden file (go test
// ./studies/distractors -update rewrites them after a deliberate change);
// captions carry n and SIMULATED.
func TestFigureGoldens(t *testing.T) {
	mdi := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"},
		[]any{"mdi", "m", "eng", "english", "qa", "clean", "correct", 7, 10, 0.7}, []any{"mdi", "m", "eng", "english", "qa", "clean", "abstain", 1, 10, 0.1},
		[]any{"mdi", "m", "eng", "english", "qa", "clean", "hallucination", 2, 10, 0.2}, []any{"mdi", "m", "eng", "english", "qa", "hi", "correct", 5, 10, 0.5},
		[]any{"mdi", "m", "eng", "english", "qa", "hi", "abstain", 1, 10, 0.1}, []any{"mdi", "m", "eng", "english", "qa", "hi", "hallucination", 4, 10, 0.4})
	dec := table("script_decomposition", []string{"model", "condition", "n", "halluc_rate", "adj_halluc", "broad_adj_halluc"},
		[]any{"m", "hi", 500, 0.71, 0.47, 0.46}, []any{"m", "clean", 500, 0.416, 0.416, 0.416})
	mdiSwitch := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"},
		[]any{"mdi", "m", "eng", "english", "qa", "clean", "distractor_switch", 0, 10, 0.0}, []any{"mdi", "m", "eng", "english", "qa", "hi", "distractor_switch", 6, 10, 0.6})

	cases := []struct {
		name string
		figs func() ([]chart.Figure, error)
	}{
		{"conditions", func() ([]chart.Figure, error) { return ConditionBars(mdi) }},
		{"decomposition", func() ([]chart.Figure, error) { return DecompositionWaterfall(dec) }},
		{"switch_rates", func() ([]chart.Figure, error) { return SwitchRates(mdiSwitch) }},
	}
	for _, c := range cases {
		figs, err := c.figs()
		charttest.Golden(t, c.name, golden(c.name), *update, figs, err)
	}
}

// Figures draws the conditions in the study's order (Conditions), not
// the table's.
func TestFiguresOrderConditions(t *testing.T) {
	acc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"},
		[]any{"mdi", "m", "eng", "english", "qa", "paragraph", "correct", 5, 10, 0.5}, []any{"mdi", "m", "eng", "english", "qa", "hi", "correct", 5, 10, 0.5},
		[]any{"mdi", "m", "eng", "english", "qa", "clean", "correct", 7, 10, 0.7})
	figs, err := Figures([]*tables.Table{acc})
	if err != nil || len(figs) != 1 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	xa := charttest.Option(t, figs[0])["xAxis"].([]any)[0].(map[string]any)["data"]
	if got := fmt.Sprint(xa); got != "[clean hi paragraph]" {
		t.Errorf("conditions drawn in the order %s", got)
	}
	if figs[0].N != "n = 30 answers over 3 conditions" || !figs[0].Simulated {
		t.Errorf("n %q, simulated %v", figs[0].N, figs[0].Simulated)
	}
}
