package report

import (
	"strings"
	"testing"
)

// Every figure but the Sankey reaches the workbook's figures sheet as its
// data and a native chart of the same kind (the heatmap as a colour-scaled
// grid); the whisker segments of Fig. 2 are not a series.
func TestWorkbookFigures(t *testing.T) {
	figs := drawn(t, "workbook") // Fig. 2, CLC, relations, tokenization and flip points
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
