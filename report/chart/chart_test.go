package chart_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/report/chart/charttest"
)

var update = flag.Bool("update", false, "rewrite the golden option files under testdata/report")

var table = charttest.Table

// The shared scaling figure's option is compared with its golden file (go
// test ./report/chart -update rewrites it after a deliberate change).
func TestFamilyScalingGolden(t *testing.T) {
	mf := table("model_families", []string{"family", "model", "size_b", "strategy", "form", "k", "n", "rate"},
		[]any{"Llama", "l1", 1.0, "baseline", "native", 2, 10, 0.2}, []any{"Llama", "l8", 8.0, "baseline", "native", 5, 10, 0.5},
		[]any{"Qwen", "q7", 7.0, "baseline", "native", 4, 10, 0.4})
	figs, err := chart.FamilyScaling(mf, "native", "IndicKLAR Fig. 5")
	charttest.Golden(t, "family_scaling", filepath.Join("..", "..", "testdata", "report", "family_scaling.json"), *update, figs, err)
	if f := figs[0]; f.N != "n = 30 answers" || !f.Simulated || !strings.HasPrefix(f.Caption, "native accuracy against model size") || f.Mirrors != "IndicKLAR Fig. 5" {
		t.Errorf("figure %+v", f)
	}
}

// Finish stamps each figure's n (Figure.N), and SIMULATED when it is
// (Figure.Simulated), under its title, whatever its caption says; it
// makes room above an axis chart's plot, leaves a figure with nothing to
// stamp as it is, and shows control characters as their pictures.
func TestFinishStamps(t *testing.T) {
	axes := json.RawMessage(`{"title":{"text":"t"},"xAxis":[{}]}`)
	cases := []struct {
		name    string
		fig     chart.Figure
		subtext string
		top     bool
	}{
		{"n and simulated", chart.Figure{Name: "a", Caption: "no statement here", N: "n = 8 answers", Simulated: true, Option: axes}, "n = 8 answers · SIMULATED models", true},
		{"n only", chart.Figure{Name: "b", Caption: "(n = 2 items) SIMULATED", N: "n = 3 language pairs per triangle", Option: axes}, "n = 3 language pairs per triangle", true},
		{"nothing", chart.Figure{Name: "c", Caption: "x", Option: json.RawMessage(`{"title":{"text":"hand\u0000made"}}`)}, "", false},
	}
	var figs []chart.Figure
	for _, c := range cases {
		figs = append(figs, c.fig)
	}
	done, err := chart.Finish(figs)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		o := charttest.Option(t, done[i])
		title := o["title"].(map[string]any)
		if s, _ := title["subtext"].(string); s != c.subtext {
			t.Errorf("%s: subtext %q, want %q", c.name, s, c.subtext)
		}
		if _, ok := title["subtextStyle"]; ok != c.fig.Simulated {
			t.Errorf("%s: subtext style %v", c.name, title["subtextStyle"])
		}
		if g, _ := o["grid"].(map[string]any); (g != nil && g["top"] == 80.0) != c.top {
			t.Errorf("%s: grid %v", c.name, g)
		}
	}
	if s := done[2].Option; !strings.Contains(string(s), "hand␀made") {
		t.Errorf("a control character is not shown as its picture: %s", s)
	}
	if _, err := chart.Finish([]chart.Figure{{Name: "bad", Option: json.RawMessage(`[`)}}); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("a broken option: %v", err)
	}
}

// Of appends SIMULATED to a simulated table's figure's caption and keeps
// its n.
func TestOf(t *testing.T) {
	for _, sim := range []bool{true, false} {
		tb := table("t", []string{"a"})
		tb.Simulated = sim
		f := chart.Of(tb, "f", "Fig. 1", "caption (n = 2 answers)", "n = 2 answers", json.RawMessage(`{}`))
		want := "caption (n = 2 answers)"
		if sim {
			want += chart.SimulatedSuffix
		}
		if f.Caption != want || f.Simulated != sim || f.N != "n = 2 answers" || f.Mirrors != "Fig. 1" {
			t.Errorf("simulated %v: %+v", sim, f)
		}
	}
}

// A count's noun is in the number it needs.
func TestCounted(t *testing.T) {
	for n, c := range map[string]struct {
		n    int
		noun string
	}{
		"1 language": {1, "language"}, "2 language pairs": {2, "language pair"}, "3 strategies": {3, "strategy"}, "0 answers": {0, "answer"},
		"2 boxes": {2, "box"}, "4 days": {4, "day"},
	} {
		if got := chart.Counted(c.n, c.noun); got != n {
			t.Errorf("Counted(%d, %q) = %q, want %q", c.n, c.noun, got, n)
		}
	}
}

// An empty figure says why in its plot and its caption, n = 0.
func TestEmpty(t *testing.T) {
	tb := table("clc_matrix", []string{"model"})
	f, err := chart.Empty(tb, "clc", "Fig. 4", "CLC", "", "language pair")
	if err != nil {
		t.Fatal(err)
	}
	if f.Caption != "CLC: nothing to draw: the table clc_matrix has no rows (n = 0 language pairs)"+chart.SimulatedSuffix || f.N != "n = 0 language pairs" ||
		!strings.Contains(string(f.Option), "Nothing to draw: the table clc_matrix has no rows") {
		t.Errorf("figure %+v", f)
	}
}
