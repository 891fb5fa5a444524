package indicklar

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/report/chart/charttest"
	"github.com/bhashalab/bhasha/runtime/engine"
)

var update = flag.Bool("update", false, "rewrite the golden option files under testdata/report")

var table = charttest.Table

// golden is the golden file of a figure's option (testdata/report at the
// module's root).
func golden(name string) string { return filepath.Join("..", "..", "testdata", "report", name+".json") }

// Each figure's ECharts option is compared with its golden file (go test
// ./studies/indicklar -update rewrites them after a deliberate change);
// captions carry n and SIMULATED.
func TestFigureGoldens(t *testing.T) {
	acc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 2, 8, 0.25, 0.0709, 0.5907},
		[]any{"indicklar", "m", "hin", "code-mixed", "baseline", "", "correct", 3, 8, 0.375, 0.1368, 0.6943},
		[]any{"indicklar", "m", "eng", "english", "baseline", "", "correct", 4, 8, 0.5, 0.2152, 0.7848},
		[]any{"indicklar", "m", "ben", "native", "baseline", "", "correct", 1, 8, 0.125, 0.0224, 0.4709},
		[]any{"indicklar", "m", "hin", "native", "2step-translit", "", "correct", 3, 8, 0.375, 0.1368, 0.6943},
		[]any{"indicklar", "m", "hin", "native", "ablation-romanized", "", "correct", 2, 8, 0.25, 0.0709, 0.5907},
		[]any{"indicklar", "m", "ben", "native", "ablation-romanized", "", "correct", 4, 8, 0.5, 0.2152, 0.7848})
	mx := table("clc_matrix", []string{"model", "form", "upper", "lower", "row", "col", "jaccard"},
		[]any{"m", "native", "baseline", "tint-cm", "ben", "ben", 1.0}, []any{"m", "native", "baseline", "tint-cm", "ben", "hin", 0.5},
		[]any{"m", "native", "baseline", "tint-cm", "hin", "ben", 0.75}, []any{"m", "native", "baseline", "tint-cm", "hin", "hin", 1.0})
	tok := table("tokenization", []string{"model", "language", "n", "mean_prompt_tokens", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"},
		[]any{"m", "hin", 8, 60.0, 0.5, nil, nil, nil, nil}, []any{"m", "tam", 8, 90.0, 0.25, nil, nil, nil, nil}, []any{"m", "*", 2, nil, nil, -1.0, 0.0, -1.0, 0.0})
	fp := table("flip_points", []string{"model", "language", "path", "step", "from", "flipped"},
		[]any{"m", "hin", "strategy", "tint-cm", 5, 2}, []any{"m", "hin", "strategy", "tint-en", 3, 1}, []any{"m", "hin", "input", "code-mixed", 5, 2})
	rel := table("relations", []string{"model", "strategy", "language", "form", "relation", "k", "n"},
		[]any{"m", "baseline", "hin", "native", "capital", 1, 4}, []any{"m", "baseline", "hin", "native", "language", 2, 4}, []any{"m", "baseline", "hin", "native", "instrument", 3, 4},
		[]any{"m", "tint-cm", "hin", "native", "capital", 2, 4}, []any{"m", "tint-cm", "hin", "native", "language", 3, 4}, []any{"m", "tint-cm", "hin", "native", "instrument", 4, 4})
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
	cases := []struct {
		name string
		figs func() ([]chart.Figure, error)
	}{
		{"form_accuracy", func() ([]chart.Figure, error) { return FormAccuracy(acc) }},
		{"romanization", func() ([]chart.Figure, error) { return Romanization(acc) }},
		{"family_clc", func() ([]chart.Figure, error) { return FamilyCLC(mf, co) }},
		{"clc_heatmap", func() ([]chart.Figure, error) { return CLCHeatmap(mx) }},
		{"tokenization", func() ([]chart.Figure, error) { return TokenizationScatter(tok) }},
		{"flip_sankey", func() ([]chart.Figure, error) { return FlipSankey(fp) }},
		{"relations_radar", func() ([]chart.Figure, error) { return RelationsRadar(rel) }},
		{"latency", func() ([]chart.Figure, error) { return LatencyScatter(lat) }},
		{"strategy_gains", func() ([]chart.Figure, error) { return StrategyGains(st) }},
	}
	for _, c := range cases {
		figs, err := c.figs()
		charttest.Golden(t, c.name, golden(c.name), *update, figs, err)
	}
}

// Figures stamps each chart with its n, and SIMULATED when it is, under
// the title, so that an exported image carries them.
func TestStamp(t *testing.T) {
	acc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 2, 8, 0.25, 0.07, 0.59})
	for _, sim := range []bool{true, false} {
		acc.Simulated = sim
		figs, err := finished(Figures([]*tables.Table{acc}))
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

// flipTable is a flip_points table whose TinT-EN step flips nothing: its
// flow of 0 items comes before the largest one.
func flipTable() *tables.Table {
	return table("flip_points", []string{"model", "language", "path", "step", "from", "flipped"},
		[]any{"m", "hin", "strategy", "tint-cm", 7, 1}, []any{"m", "hin", "strategy", "tint-en", 6, 0},
		[]any{"m", "hin", "input", "code-mixed", 7, 1}, []any{"m", "hin", "input", "english", 6, 1})
}

// The flip-point Sankey exports every flow with its count, the flow of 0
// items included, and the flows after it as the table has them; every
// node's label says its count.
func TestFlipSankeyExportsEveryFlow(t *testing.T) {
	figs, err := finished(Figures([]*tables.Table{flipTable()}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := report.WriteExports(context.Background(), dir, report.Page{Figures: figs}, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "figures", "flip_points_m.json"))
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Series []struct {
			Data []struct {
				Name  string `json:"name"`
				Value *int   `json:"value"`
			} `json:"data"`
			Links []map[string]any `json:"links"`
			Label struct {
				Formatter string `json:"formatter"`
			} `json:"label"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	want := []string{"wrong at baseline→right under TinT-CM=1", "wrong at baseline→still wrong=6", "still wrong→right under TinT-EN=0", "still wrong→wrong throughout=6"}
	var got []string
	for _, l := range o.Series[0].Links {
		v, ok := l["value"]
		if !ok {
			t.Errorf("the link %v is exported without a value", l)
		}
		got = append(got, fmt.Sprintf("%v→%v=%v", l["source"], l["target"], v))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("links %q, want %q", got, want)
	}
	for _, n := range o.Series[0].Data {
		if n.Value == nil {
			t.Errorf("node %q has no count", n.Name)
		}
	}
	if o.Series[0].Label.Formatter != "{b}: {c}" {
		t.Errorf("node labels %q do not say their counts", o.Series[0].Label.Formatter)
	}
	if c := figs[0].Caption; !strings.Contains(c, "of 7 items wrong at the baseline, 1 right under TinT-CM; of the 6 still wrong, 0 right under TinT-EN") ||
		!strings.Contains(c, "1 flow of 0 items drawn as a hairline") {
		t.Errorf("caption %q", c)
	}
}

// clcTable is a clc_matrix over ben, hin, tam: the reference above the
// diagonal (row < col), the strategy below, one pair not computed.
func clcTable() *tables.Table {
	ls := []string{"ben", "hin", "tam"}
	v := [][]float64{{1, 0.25, 0.5}, {0.2, 1, 0.6}, {0, -1, 1}} // -1: NaN
	mx := table("clc_matrix", []string{"model", "form", "upper", "lower", "row", "col", "jaccard"})
	for r, rl := range ls {
		for c, cl := range ls {
			x := v[r][c]
			var cell any = x
			if x < 0 {
				cell = math.NaN()
			}
			mx.Rows = append(mx.Rows, []any{"m", "native", "baseline", "tint-cm", rl, cl, cell})
		}
	}
	return mx
}

// The CLC heatmap reads as its caption says: the first language at the
// top, so that the reference (row < col) is above the diagonal; every
// cell labelled to 2 decimals; the colour scale at the right of the plot,
// spanning the off-diagonal values, its ends written; the diagonal and
// the missing pair grey, off the scale.
func TestCLCHeatmapReadsAsCaption(t *testing.T) {
	figs, err := CLCHeatmap(clcTable())
	if err != nil || len(figs) != 1 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	o := charttest.Option(t, figs[0])
	ya := o["yAxis"].([]any)[0].(map[string]any)
	if ya["inverse"] != true {
		t.Errorf("the y axis runs bottom-up: the reference (upper) is drawn below the diagonal")
	}
	vm := o["visualMap"].([]any)[0].(map[string]any)
	if vm["right"] == nil || vm["orient"] != "vertical" || vm["calculable"] != true || vm["min"] != 0.0 || vm["max"] != 0.6 ||
		fmt.Sprint(vm["text"]) != "[jaccard ]" || vm["seriesIndex"] != 0.0 {
		t.Errorf("visualMap %v: want it at the right, calculable (its handles write 0 and 0.6), on the first series only", vm)
	}
	if g, _ := o["grid"].(map[string]any); g == nil || g["right"] == nil || g["right"].(float64) < 100 {
		t.Errorf("grid %v leaves no room for the scale at the right", g)
	}
	ss := o["series"].([]any)
	if len(ss) != 2 {
		t.Fatalf("%d series, want the cells on the scale and those off it", len(ss))
	}
	labels := map[string]string{}
	for i, s := range ss {
		for _, d := range s.(map[string]any)["data"].([]any) {
			dm := d.(map[string]any)
			v := dm["value"].([]any)
			labels[fmt.Sprint(v[0], "/", v[1])] = fmt.Sprint(i, ":", dm["label"].(map[string]any)["formatter"])
		}
	}
	want := map[string]string{"ben/ben": "1:1", "hin/ben": "0:0.25", "tam/ben": "0:0.50", "ben/hin": "0:0.20", "hin/hin": "1:1", "tam/hin": "0:0.60",
		"ben/tam": "0:0.00", "hin/tam": "1:n/a", "tam/tam": "1:1"}
	if fmt.Sprint(labels) != fmt.Sprint(want) {
		t.Errorf("cell labels (series:label by col/row) %v, want %v", labels, want)
	}
	if c := figs[0].Caption; !strings.Contains(c, "over 3 native languages, baseline above the diagonal, tint-cm below") || !strings.Contains(c, "(0.00 to 0.60)") ||
		!strings.Contains(c, "n = 3 language pairs per triangle") {
		t.Errorf("caption %q", c)
	}
}

// oneLanguageRows are an IndicKLAR run of one model on Hindi alone (and
// English): the baseline only.
func oneLanguageRows() []score.Row {
	var rows []score.Row
	for i, it := range []string{"a", "b", "c", "d"} {
		rows = append(rows, score.Row{Key: engine.Key{Model: "m", Language: "hin", Form: "native", Strategy: "baseline", Item: it}, Correct: i == 0},
			score.Row{Key: engine.Key{Model: "m", Language: "eng", Form: "english", Strategy: "baseline", Item: it}, Correct: true})
	}
	return rows
}

// A one-language run's CLC table and figure say why they are empty (no
// language pairs), as do its gains and flip points; no caption says "1
// languages".
func TestOneLanguageRunSaysWhy(t *testing.T) {
	ts := KLAR(oneLanguageRows(), "baseline", func(string) string { return "" })
	for _, tb := range ts {
		tb.Simulated = true
	}
	figs, err := finished(Figures(ts))
	if err != nil {
		t.Fatal(err)
	}
	for name, why := range map[string]string{
		"clc":            "no language pairs: CLC compares two languages of the same form, and each form was asked in one language only (english: eng; native: hin)",
		"strategy_gains": "no gains: the run has no strategy but the reference (baseline)",
		"flip_points":    "no flip point: the run has neither TinT-CM answers",
	} {
		f := charttest.Named(t, figs, name)
		if !strings.Contains(f.Caption, why) || !strings.Contains(f.Caption, "SIMULATED") {
			t.Errorf("%s: caption %q lacks %q", name, f.Caption, why)
		}
		if !strings.Contains(string(f.Option), "Nothing to draw: ") {
			t.Errorf("%s: the figure itself does not say why: %s", name, f.Option)
		}
	}
	var html bytes.Buffer
	if err := report.WriteHTML(&html, report.Page{Title: "one language", Tables: ts, Figures: figs}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"clc_matrix", "clc_mean", "clc_overall"} {
		i := strings.Index(html.String(), `<h3 id="table-`+name+`">`)
		if i < 0 {
			t.Fatalf("no table %s", name)
		}
		if sec := html.String()[i:]; !strings.Contains(sec[:strings.Index(sec, "</table>")], `<p class="note table-note">No rows: no language pairs: CLC compares two languages`) {
			t.Errorf("table %s does not say why it is empty", name)
		}
	}
	for _, f := range figs {
		if m := regexp.MustCompile(`(^|[^0-9.])1 [a-z -]*?(languages|answers|items|pairs|conditions|points)\b`).FindString(f.Caption); m != "" {
			t.Errorf("%s: %q in caption %q", f.Name, m, f.Caption)
		}
	}
	if got := chart.Counted(1, "language") + ", " + chart.Counted(2, "language pair") + ", " + chart.Counted(3, "strategy") + ", " + chart.Counted(0, "answer"); got != "1 language, 2 language pairs, 3 strategies, 0 answers" {
		t.Errorf("counted: %s", got)
	}
}

// Eleven strategies are eleven series told apart: the ninth and later
// share a colour with the first ones, so their bars are striped, their
// points another symbol; every scatter point is labelled.
func TestManySeriesToldApart(t *testing.T) {
	st := table("strategy_tests", []string{"model", "language", "form", "strategy", "reference", "pairs", "diff", "p_holm"})
	lat := table("latency", []string{"model", "strategy", "n_timed", "mean_ms", "median_ms", "p90_ms", "k", "n", "accuracy"})
	for i := range 11 {
		s := fmt.Sprintf("s%02d", i)
		st.Rows = append(st.Rows, []any{"m", "hin", "native", s, "baseline", 8, 0.125 * float64(i%3), 0.5})
		lat.Rows = append(lat.Rows, []any{"m", s, 8, 10.0 * float64(i+1), 10.0, 20.0, 2, 8, 0.25})
	}
	gains, err := StrategyGains(st)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i, s := range charttest.Option(t, gains[0])["series"].([]any) {
		sm := s.(map[string]any)
		is, _ := sm["itemStyle"].(map[string]any)
		if (i >= len(chart.Palette())) != (is != nil && is["decal"] != nil) {
			t.Errorf("series %d (%v): itemStyle %v", i, sm["name"], is)
		}
		keys = append(keys, fmt.Sprint(i%len(chart.Palette()), is != nil && is["decal"] != nil))
		if sm["barMinHeight"] != 2.0 {
			t.Errorf("series %d: a gain of 0 draws nothing (barMinHeight %v)", i, sm["barMinHeight"])
		}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("two series look alike (%s)", k)
		}
		seen[k] = true
	}
	if c := gains[0].Caption; !strings.Contains(c, "4 of the 11 gains are 0, drawn as slivers at 0") {
		t.Errorf("caption %q", c)
	}
	ls, err := LatencyScatter(lat)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range charttest.Option(t, ls[0])["series"].([]any) {
		sm := s.(map[string]any)
		if l, _ := sm["label"].(map[string]any); l["show"] != true || l["formatter"] != "{b}" {
			t.Errorf("latency series %d: point unlabelled (%v)", i, sm["label"])
		}
		if i >= len(chart.Palette()) && (sm["symbol"] == nil || sm["symbol"] == "circle") {
			t.Errorf("latency series %d: the same mark as series %d", i, i-len(chart.Palette()))
		}
	}
	tok, err := TokenizationScatter(table("tokenization", []string{"model", "language", "n", "mean_prompt_tokens", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"},
		[]any{"m", "hin", 8, 60.0, 0.5, nil, nil, nil, nil}))
	if err != nil {
		t.Fatal(err)
	}
	if l := charttest.Option(t, tok[0])["series"].([]any)[0].(map[string]any)["label"].(map[string]any); l["show"] != true || l["formatter"] != "{b}" {
		t.Errorf("tokenization points unlabelled: %v", l)
	}
	if c := tok[0].Caption; !strings.Contains(c, "m: 1 language,") || !strings.Contains(c, "n = 8 answers") {
		t.Errorf("tokenization caption %q", c)
	}
	if c := tok[0].Caption; strings.Contains(c, "dashed line") || !strings.Contains(c, "no least-squares fit") {
		t.Errorf("one language: the caption %q speaks of a fit the figure does not draw", c)
	}
}

// finished is figures as a run's report has them (chart.Finish).
func finished(figs []chart.Figure, err error) ([]chart.Figure, error) {
	if err != nil {
		return nil, err
	}
	return chart.Finish(figs)
}
