package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/indicklar"
)

// option is a figure's ECharts option as a JSON object.
func option(t *testing.T, f Figure) map[string]any {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal(f.Option, &o); err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return o
}

// figureNamed is the figure of that name, failing t when there is none.
func figureNamed(t *testing.T, figs []Figure, name string) Figure {
	t.Helper()
	var names []string
	for _, f := range figs {
		if f.Name == name {
			return f
		}
		names = append(names, f.Name)
	}
	t.Fatalf("no figure %s among %q", name, names)
	return Figure{}
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
	figs, err := Figures([]*tables.Table{flipTable()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteExports(context.Background(), dir, Page{Figures: figs}, ""); err != nil {
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
	o := option(t, figs[0])
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
	// IndicQuest's domains: labelled, the scale beside the plot, 0 to 1
	dom, err := DomainHeatmap(table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"},
		[]any{"m", "hin", "History", "judge", 3, 4, 0.75}, []any{"m", "eng", "History", "judge", 2, 4, 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	d := option(t, dom[0])
	if vm := d["visualMap"].([]any)[0].(map[string]any); vm["right"] == nil || vm["min"] != 0.0 || vm["max"] != 1.0 || vm["calculable"] != true {
		t.Errorf("domain visualMap %v", vm)
	}
	if !strings.Contains(string(dom[0].Option), `"formatter":"0.75"`) {
		t.Errorf("domain cells unlabelled: %s", dom[0].Option)
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
	ts := indicklar.KLAR(oneLanguageRows(), "baseline", func(string) string { return "" })
	for _, tb := range ts {
		tb.Simulated = true
	}
	figs, err := Figures(ts)
	if err != nil {
		t.Fatal(err)
	}
	for name, why := range map[string]string{
		"clc":            "no language pairs: CLC compares two languages of the same form, and each form was asked in one language only (english: eng; native: hin)",
		"strategy_gains": "no gains: the run has no strategy but the reference (baseline)",
		"flip_points":    "no flip point: the run has neither TinT-CM answers",
	} {
		f := figureNamed(t, figs, name)
		if !strings.Contains(f.Caption, why) || !strings.Contains(f.Caption, "SIMULATED") {
			t.Errorf("%s: caption %q lacks %q", name, f.Caption, why)
		}
		if !strings.Contains(string(f.Option), "Nothing to draw: ") {
			t.Errorf("%s: the figure itself does not say why: %s", name, f.Option)
		}
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, Page{Title: "one language", Tables: ts, Figures: figs}); err != nil {
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
	if got := counted(1, "language") + ", " + counted(2, "language pair") + ", " + counted(3, "strategy") + ", " + counted(0, "answer"); got != "1 language, 2 language pairs, 3 strategies, 0 answers" {
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
	for i, s := range option(t, gains[0])["series"].([]any) {
		sm := s.(map[string]any)
		is, _ := sm["itemStyle"].(map[string]any)
		if (i >= len(palette())) != (is != nil && is["decal"] != nil) {
			t.Errorf("series %d (%v): itemStyle %v", i, sm["name"], is)
		}
		keys = append(keys, fmt.Sprint(i%len(palette()), is != nil && is["decal"] != nil))
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
	for i, s := range option(t, ls[0])["series"].([]any) {
		sm := s.(map[string]any)
		if l, _ := sm["label"].(map[string]any); l["show"] != true || l["formatter"] != "{b}" {
			t.Errorf("latency series %d: point unlabelled (%v)", i, sm["label"])
		}
		if i >= len(palette()) && (sm["symbol"] == nil || sm["symbol"] == "circle") {
			t.Errorf("latency series %d: the same mark as series %d", i, i-len(palette()))
		}
	}
	tok, err := TokenizationScatter(table("tokenization", []string{"model", "language", "n", "mean_prompt_tokens", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"},
		[]any{"m", "hin", 8, 60.0, 0.5, nil, nil, nil, nil}))
	if err != nil {
		t.Fatal(err)
	}
	if l := option(t, tok[0])["series"].([]any)[0].(map[string]any)["label"].(map[string]any); l["show"] != true || l["formatter"] != "{b}" {
		t.Errorf("tokenization points unlabelled: %v", l)
	}
	if c := tok[0].Caption; !strings.Contains(c, "m: 1 language,") || !strings.Contains(c, "n = 8 answers") {
		t.Errorf("tokenization caption %q", c)
	}
}
