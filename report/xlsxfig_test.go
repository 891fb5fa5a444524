package report

import (
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/studies/indicklar"
)

// Every figure but the Sankey reaches the workbook's figures sheet as its
// data and a native chart of the same kind (the heatmap as a colour-scaled
// grid); the whisker segments of Fig. 2 are not a series.
func TestWorkbookFigures(t *testing.T) {
	acc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 2, 8, 0.25, 0.07, 0.59},
		[]any{"indicklar", "m", "eng", "english", "baseline", "", "correct", 4, 8, 0.5, 0.22, 0.78},
		[]any{"indicklar", "m", "ben", "native", "baseline", "", "correct", 1, 8, 0.125, 0.02, 0.47})
	mx := table("clc_matrix", []string{"model", "form", "upper", "lower", "row", "col", "jaccard"},
		[]any{"m", "native", "baseline", "tint-cm", "ben", "hin", 0.5}, []any{"m", "native", "baseline", "tint-cm", "hin", "ben", 0.75})
	rel := table("relations", []string{"model", "strategy", "language", "form", "relation", "k", "n"},
		[]any{"m", "baseline", "hin", "native", "capital", 1, 4}, []any{"m", "baseline", "hin", "native", "language", 2, 4}, []any{"m", "baseline", "hin", "native", "instrument", 3, 4})
	tok := table("tokenization", []string{"model", "language", "n", "mean_prompt_tokens", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"},
		[]any{"m", "hin", 8, 60.0, 0.5, nil, nil, nil, nil}, []any{"m", "tam", 8, 90.0, 0.25, nil, nil, nil, nil})
	fp := table("flip_points", []string{"model", "language", "path", "step", "from", "flipped"},
		[]any{"m", "hin", "strategy", "tint-cm", 5, 2}, []any{"m", "hin", "strategy", "tint-en", 3, 1})
	figs, err := figuresOf(indicklar.Figures([]*tables.Table{acc, mx, rel, tok, fp}))
	if err != nil {
		t.Fatal(err)
	}
	f := readBack(t, Page{Title: "figs", Simulated: true, Figures: figs})
	rows, err := f.GetRows("figures")
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, r := range rows {
		text = append(text, strings.Join(r, "|"))
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"category|english|native", "ben|0.500|0.125", "hin|0.500|0.250", "|ben|hin", "axis|baseline", "capital|0.250",
		"point|mean prompt tokens|languages", "hin|60|0.500", "(mirrors IndicKLAR Fig. 2)", "SIMULATED"} {
		if !strings.Contains(all, want) {
			t.Errorf("figures sheet lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "Fig. 8") {
		t.Errorf("the Sankey has no Excel chart, yet its caption is on the sheet")
	}
	kinds := map[string]int{}
	for _, s := range chartXML(f) {
		for _, k := range []string{"barChart", "radarChart", "scatterChart"} {
			if strings.Contains(s, "<"+k+">") {
				kinds[k]++
				if k == "barChart" && strings.Count(s, "<ser>") != 2 {
					t.Errorf("Fig. 2's column chart has %d series, want english and native", strings.Count(s, "<ser>"))
				}
			}
		}
		if !strings.Contains(s, "SIMULATED") {
			t.Errorf("a chart's title lacks SIMULATED: %.200s", s)
		}
	}
	if kinds["barChart"] != 1 || kinds["radarChart"] != 1 || kinds["scatterChart"] != 1 {
		t.Errorf("chart kinds %v, want one column, one radar and one scatter chart", kinds)
	}
	cf, err := f.GetConditionalFormats("figures")
	if err != nil || len(cf) != 1 {
		t.Errorf("the CLC heatmap's grid has %d colour scales (%v), want 1", len(cf), err)
	}
}
