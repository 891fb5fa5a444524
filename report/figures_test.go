package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
)

var update = flag.Bool("update", false, "rewrite the golden option files under testdata/report")

func table(name string, header []string, rows ...[]any) *tables.Table {
	return &tables.Table{Name: name, Header: header, Rows: rows, Simulated: true}
}

// Each figure's ECharts option is compared with its golden file (go test
// ./report -update rewrites them after a deliberate change); captions
// carry n and SIMULATED.
func TestFigureGoldens(t *testing.T) {
	acc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 2, 8, 0.25, 0.0709, 0.5907},
		[]any{"indicklar", "m", "hin", "code-mixed", "baseline", "", "correct", 3, 8, 0.375, 0.1368, 0.6943},
		[]any{"indicklar", "m", "eng", "english", "baseline", "", "correct", 4, 8, 0.5, 0.2152, 0.7848},
		[]any{"indicklar", "m", "ben", "native", "baseline", "", "correct", 1, 8, 0.125, 0.0224, 0.4709},
		[]any{"indicklar", "m", "hin", "native", "2step-translit", "", "correct", 3, 8, 0.375, 0.1368, 0.6943},
		[]any{"indicklar", "m", "hin", "native", "ablation-romanized", "", "correct", 2, 8, 0.25, 0.0709, 0.5907},
		[]any{"indicklar", "m", "ben", "native", "ablation-romanized", "", "correct", 4, 8, 0.5, 0.2152, 0.7848})
	mdi := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"},
		[]any{"mdi", "m", "eng", "english", "qa", "clean", "correct", 7, 10, 0.7}, []any{"mdi", "m", "eng", "english", "qa", "clean", "abstain", 1, 10, 0.1},
		[]any{"mdi", "m", "eng", "english", "qa", "clean", "hallucination", 2, 10, 0.2}, []any{"mdi", "m", "eng", "english", "qa", "hi", "correct", 5, 10, 0.5},
		[]any{"mdi", "m", "eng", "english", "qa", "hi", "abstain", 1, 10, 0.1}, []any{"mdi", "m", "eng", "english", "qa", "hi", "hallucination", 4, 10, 0.4})
	mx := table("clc_matrix", []string{"model", "form", "upper", "lower", "row", "col", "jaccard"},
		[]any{"m", "native", "baseline", "tint-cm", "ben", "ben", 1.0}, []any{"m", "native", "baseline", "tint-cm", "ben", "hin", 0.5},
		[]any{"m", "native", "baseline", "tint-cm", "hin", "ben", 0.75}, []any{"m", "native", "baseline", "tint-cm", "hin", "hin", 1.0})
	dec := table("script_decomposition", []string{"model", "condition", "n", "halluc_rate", "adj_halluc", "broad_adj_halluc"},
		[]any{"m", "hi", 500, 0.71, 0.47, 0.46}, []any{"m", "clean", 500, 0.416, 0.416, 0.416})
	tok := table("tokenization", []string{"model", "language", "n", "mean_prompt_tokens", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"},
		[]any{"m", "hin", 8, 60.0, 0.5, nil, nil, nil, nil}, []any{"m", "tam", 8, 90.0, 0.25, nil, nil, nil, nil}, []any{"m", "*", 2, nil, nil, -1.0, 0.0, -1.0, 0.0})
	fp := table("flip_points", []string{"model", "language", "path", "step", "from", "flipped"},
		[]any{"m", "hin", "strategy", "tint-cm", 5, 2}, []any{"m", "hin", "strategy", "tint-en", 3, 1}, []any{"m", "hin", "input", "code-mixed", 5, 2})
	rel := table("relations", []string{"model", "strategy", "language", "form", "relation", "k", "n"},
		[]any{"m", "baseline", "hin", "native", "capital", 1, 4}, []any{"m", "baseline", "hin", "native", "language", 2, 4}, []any{"m", "baseline", "hin", "native", "instrument", 3, 4},
		[]any{"m", "tint-cm", "hin", "native", "capital", 2, 4}, []any{"m", "tint-cm", "hin", "native", "language", 3, 4}, []any{"m", "tint-cm", "hin", "native", "instrument", 4, 4})
	dom := table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"},
		[]any{"m", "hin", "History", "judge", 3, 4, 0.75}, []any{"m", "hin", "*", "judge", 3, 4, 0.75}, []any{"m", "eng", "History", "judge", 2, 4, 0.5})
	lat := table("latency", []string{"model", "strategy", "n_timed", "mean_ms", "median_ms", "p90_ms", "k", "n", "accuracy"},
		[]any{"m", "baseline", 8, 35.0, 30.0, 60.0, 2, 8, 0.25}, []any{"m", "tint-cm", 8, 120.0, 110.0, 200.0, 5, 8, 0.625})
	st := table("strategy_tests", []string{"model", "language", "form", "strategy", "reference", "pairs", "diff", "p_holm"},
		[]any{"m", "hin", "native", "tint-cm", "baseline", 8, 0.375, 0.03}, []any{"m", "ben", "native", "tint-cm", "baseline", 8, 0.125, 0.6})
	mf := table("model_families", []string{"family", "model", "size_b", "strategy", "form", "k", "n", "rate"},
		[]any{"Llama", "l1", 1.0, "baseline", "native", 2, 10, 0.2}, []any{"Llama", "l8", 8.0, "baseline", "native", 5, 10, 0.5},
		[]any{"Qwen", "q7", 7.0, "baseline", "native", 4, 10, 0.4})
	co := table("clc_overall", []string{"model", "strategy", "form", "languages", "clc"},
		[]any{"l1", "baseline", "native", 18, 0.21}, []any{"l8", "baseline", "native", 18, 0.44}, []any{"q7", "baseline", "native", 18, 0.38},
		[]any{"l8", "baseline", "code-mixed", 11, 0.6}, []any{"unsized", "baseline", "native", 18, 0.5})
	qdom := table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"},
		[]any{"a", "hin", "*", "judge", 6, 10, 0.6}, []any{"a", "tam", "*", "judge", 4, 10, 0.4}, []any{"a", "hin", "*", "substring", 2, 10, 0.2},
		[]any{"a", "tam", "*", "substring", 2, 10, 0.2}, []any{"a", "hin", "History", "judge", 3, 4, 0.75},
		[]any{"b", "hin", "*", "judge", 5, 10, 0.5}, []any{"b", "tam", "*", "judge", 3, 10, 0.3}, []any{"b", "hin", "*", "substring", 5, 10, 0.5},
		[]any{"b", "tam", "*", "substring", 4, 10, 0.4}, []any{"*", "*", "*", "judge", 18, 40, 0.45})
	qrank := table("protocol_rankings", []string{"language", "a", "b", "cells", "kendall_tau", "p"},
		[]any{"*", "judge", "substring", 4, -0.333, 0.5}, []any{"hin", "judge", "substring", 2, -1.0, 0.3})
	quest := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"},
		[]any{"indicquest", "m", "hin", "native", "", "", "correct", 6, 10, 0.6}, []any{"indicquest", "m", "hin", "native", "", "", "substring", 4, 10, 0.4},
		[]any{"indicquest", "m", "hin", "native", "", "", "overlap", 4, 10, 0.4})
	mdiSwitch := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"},
		[]any{"mdi", "m", "eng", "english", "qa", "clean", "distractor_switch", 0, 10, 0.0}, []any{"mdi", "m", "eng", "english", "qa", "hi", "distractor_switch", 6, 10, 0.6})
	cases := []struct {
		name string
		figs func() ([]Figure, error)
	}{
		{"form_accuracy", func() ([]Figure, error) { return FormAccuracy(acc) }},
		{"romanization", func() ([]Figure, error) { return Romanization(acc) }},
		{"family_clc", func() ([]Figure, error) { return FamilyCLC(mf, co) }},
		{"protocol_ranks", func() ([]Figure, error) { return ProtocolRanks(qdom, qrank) }},
		{"clc_heatmap", func() ([]Figure, error) { return CLCHeatmap(mx) }},
		{"conditions", func() ([]Figure, error) { return ConditionBars(mdi, []string{"clean", "hi"}) }},
		{"decomposition", func() ([]Figure, error) { return Decomposition(dec, []string{"clean", "hi"}) }},
		{"tokenization", func() ([]Figure, error) { return TokenizationScatter(tok) }},
		{"flip_sankey", func() ([]Figure, error) { return FlipSankey(fp) }},
		{"relations_radar", func() ([]Figure, error) { return RelationsRadar(rel) }},
		{"domain_heatmap", func() ([]Figure, error) { return DomainHeatmap(dom) }},
		{"latency", func() ([]Figure, error) { return LatencyScatter(lat) }},
		{"family_scaling", func() ([]Figure, error) { return FamilyScaling(mf) }},
		{"protocols", func() ([]Figure, error) { return ProtocolBars(quest) }},
		{"switch_rates", func() ([]Figure, error) { return SwitchRates(mdiSwitch, []string{"clean", "hi"}) }},
		{"strategy_gains", func() ([]Figure, error) { return StrategyGains(st) }},
	}
	for _, c := range cases {
		figs, err := c.figs()
		if err != nil || len(figs) != 1 {
			t.Fatalf("%s: %d figures, %v", c.name, len(figs), err)
		}
		f := figs[0]
		if !strings.Contains(f.Caption, "SIMULATED") || !strings.ContainsAny(f.Caption, "0123456789") {
			t.Errorf("%s: caption %q lacks n or SIMULATED", c.name, f.Caption)
		}
		var pretty bytes.Buffer
		json.Indent(&pretty, f.Option, "", " ")
		pretty.WriteString("\n")
		golden := filepath.Join("..", "testdata", "report", c.name+".json")
		if *update {
			os.WriteFile(golden, pretty.Bytes(), 0o644)
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%s: %v (go test ./report -update writes it)", c.name, err)
		}
		if !bytes.Equal(want, pretty.Bytes()) {
			t.Errorf("%s: option differs from %s:\n%s", c.name, golden, pretty.String())
		}
	}
}

// The published numbers beside a run's: matched by served name, with the
// difference and whether the published value is inside the interval.
func TestVersus(t *testing.T) {
	pub, err := Published()
	if err != nil || len(pub) < 70 {
		t.Fatalf("%d published values, %v", len(pub), err)
	}
	acc := table("accuracy", []string{"model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"llama", "eng", "english", "qa", "hi", "hallucination", 133, 200, 0.665, 0.597, 0.727},
		[]any{"llama", "eng", "english", "qa", "clean", "correct", 120, 200, 0.6, 0.531, 0.665})
	clc := table("clc_mean", []string{"model", "strategy", "form", "language", "others", "mean_jaccard"},
		[]any{"llama", "baseline", "native", "hin", 17, 0.5})
	v := Versus(pub, acc, clc, map[string]string{"llama": "meta-llama/Llama-3.1-8B-Instruct"})
	found := map[string][]any{}
	for _, r := range v.Rows {
		found[v.Str(r, "metric")+"/"+v.Str(r, "condition")+v.Str(r, "language")] = r
	}
	h := found["hallucination/hieng"]
	if h == nil || h[v.Col("published")] != 0.710 || h[v.Col("inside")] != true || math.Abs(h[v.Col("diff")].(float64)+0.045) > 1e-9 {
		t.Errorf("hallucination row %v", h)
	}
	c := found["correct/cleaneng"]
	if c == nil || c[v.Col("inside")] != false { // 0.518 is below [0.531, 0.665]
		t.Errorf("clean accuracy row %v", c)
	}
	if l := found["clc/hin"]; l == nil || l[v.Col("published")] != 0.539 || l[v.Col("n")] != 17 {
		t.Errorf("CLC row %v", l)
	}
}

// Figures stamps each chart with its n, and SIMULATED when it is, under
// the title, so that an exported image carries them.
func TestStamp(t *testing.T) {
	acc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 2, 8, 0.25, 0.07, 0.59})
	for _, sim := range []bool{true, false} {
		acc.Simulated = sim
		figs, err := Figures([]*tables.Table{acc})
		if err != nil || len(figs) != 1 {
			t.Fatalf("%d figures, %v", len(figs), err)
		}
		var o struct {
			Title struct {
				Subtext string `json:"subtext"`
			} `json:"title"`
			Grid struct {
				Top int `json:"top"`
			} `json:"grid"`
		}
		if err := json.Unmarshal(figs[0].Option, &o); err != nil {
			t.Fatal(err)
		}
		want := "n = 8 answers"
		if sim {
			want += " · SIMULATED models"
		}
		if o.Title.Subtext != want || o.Grid.Top != 80 {
			t.Errorf("simulated %v: subtext %q (want %q), grid top %d", sim, o.Title.Subtext, want, o.Grid.Top)
		}
	}
}

// Fig. 2's caption names the forms it draws, not all three.
func TestFormAccuracyCaptionNamesItsForms(t *testing.T) {
	acc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 3, 10, 0.3, 0.1, 0.6},
		[]any{"indicklar", "m", "eng", "english", "baseline", "", "correct", 8, 10, 0.8, 0.5, 0.9})
	figs, err := FormAccuracy(acc)
	if err != nil || len(figs) != 1 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	if c := figs[0].Caption; !strings.Contains(c, "accuracy on English and native questions") || strings.Contains(c, "code-mixed") {
		t.Errorf("caption %q", c)
	}
}
