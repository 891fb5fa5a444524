package studies_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/report/chart/charttest"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/indicklar"
	"github.com/bhashalab/bhasha/studies/indicquest"
)

var update = flag.Bool("update", false, "rewrite the figure fixtures under testdata/report/figures")

var table = charttest.Table

// The report's own tests render figures without importing a study: they
// read the built-in studies' figures, finished as a run's report has
// them, from testdata/report/figures/<set>.jsonl (one chart.Figure a
// line). This test draws every set from its tables and checks that the
// fixtures are what the studies draw (go test ./studies -update rewrites
// them after a deliberate change).
func TestReportFixtures(t *testing.T) {
	workAcc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 2, 8, 0.25, 0.07, 0.59},
		[]any{"indicklar", "m", "eng", "english", "baseline", "", "correct", 4, 8, 0.5, 0.22, 0.78},
		[]any{"indicklar", "m", "ben", "native", "baseline", "", "correct", 1, 8, 0.125, 0.02, 0.47})
	workMx := table("clc_matrix", []string{"model", "form", "upper", "lower", "row", "col", "jaccard"},
		[]any{"m", "native", "baseline", "tint-cm", "ben", "hin", 0.5}, []any{"m", "native", "baseline", "tint-cm", "hin", "ben", 0.75})
	workRel := table("relations", []string{"model", "strategy", "language", "form", "relation", "k", "n"},
		[]any{"m", "baseline", "hin", "native", "capital", 1, 4}, []any{"m", "baseline", "hin", "native", "language", 2, 4}, []any{"m", "baseline", "hin", "native", "instrument", 3, 4})
	workTok := table("tokenization", []string{"model", "language", "n", "mean_prompt_tokens", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"},
		[]any{"m", "hin", 8, 60.0, 0.5, nil, nil, nil, nil}, []any{"m", "tam", 8, 90.0, 0.25, nil, nil, nil, nil})
	workFp := table("flip_points", []string{"model", "language", "path", "step", "from", "flipped"},
		[]any{"m", "hin", "strategy", "tint-cm", 5, 2}, []any{"m", "hin", "strategy", "tint-en", 3, 1})

	printAcc := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"indicklar", "m", "hin", "native", "baseline", "", "correct", 2, 8, 0.25, 0.07, 0.59},
		[]any{"indicklar", "m", "eng", "english", "baseline", "", "correct", 4, 8, 0.5, 0.22, 0.78},
		[]any{"indicklar", "m", "ben", "native", "baseline", "", "correct", 1, 8, 0.125, 0.02, 0.47},
		[]any{"indicklar", "m", "hin", "code-mixed", "baseline", "", "correct", 3, 8, 0.375, 0.14, 0.69})
	printMx := workMx
	printTok := table("tokenization", []string{"model", "language", "n", "mean_prompt_tokens", "accuracy", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"},
		[]any{"m", "hin", 8, 60.0, 0.5, -0.9, 0.01, -0.8, 0.2}, []any{"m", "tam", 8, 90.0, 0.25, -0.9, 0.01, -0.8, 0.2},
		[]any{"m", "ben", 8, 75.0, 0.375, -0.9, 0.01, -0.8, 0.2})

	browserDom := table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"},
		[]any{"m", "hin", "History", "judge", 3, 4, 0.75}, []any{"m", "eng", "History", "judge", 2, 4, 0.5}, []any{"m", "hin", "Politics", "judge", 1, 4, 0.25})
	one := indicklar.KLAR(oneLanguageRows(), "baseline", func(string) string { return "" })

	// hostile model names and domains (report/hostile_test.go's)
	hostileModels := []string{"../../../../../../ESCAPED-model", `m<svg onload="alert(1)">'`, "a/b", "a:b", "Tiny", "tiny", "मॉडल"}
	mdi := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"})
	dom := table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"})
	for _, m := range hostileModels {
		for _, c := range []string{"clean", "hi"} {
			mdi.Rows = append(mdi.Rows, []any{"mdi", m, "eng", "english", "qa", c, "correct", 5, 10, 0.5},
				[]any{"mdi", m, "eng", "english", "qa", c, "abstain", 1, 10, 0.1})
		}
		for _, d := range []string{"Poli\x01tics", "Sci\x1bence", "Geo\x00graphy", "Arts\u00a0& <b>"} {
			dom.Rows = append(dom.Rows, []any{m, "hin", d, "judge", 1, 2, 0.5})
		}
	}

	type draw func([]*tables.Table) ([]chart.Figure, error)
	type part struct {
		draw draw
		ts   []*tables.Table
	}
	for _, set := range []struct {
		name  string
		parts []part
	}{
		{"browser", []part{{indicklar.Figures, []*tables.Table{flipTable(), clcTable()}}, {indicquest.Figures, []*tables.Table{browserDom}}}},
		{"browser_empty", []part{{indicklar.Figures, one}}},
		{"hostile", []part{{distractors.Figures, []*tables.Table{mdi}}, {indicquest.Figures, []*tables.Table{dom}}}},
		{"workbook", []part{{indicklar.Figures, []*tables.Table{workAcc, workMx, workRel, workTok, workFp}}}},
		{"print", []part{{indicklar.Figures, []*tables.Table{printAcc, printMx, printTok}}}},
		{"print_scatter", []part{{indicklar.Figures, []*tables.Table{printTok}}}},
		{"print_bars", []part{{indicklar.Figures, []*tables.Table{printAcc}}}},
	} {
		var figs []chart.Figure
		for _, p := range set.parts {
			fs, err := p.draw(p.ts)
			if err != nil {
				t.Fatalf("%s: %v", set.name, err)
			}
			figs = append(figs, fs...)
		}
		figs, err := chart.Finish(figs)
		if err != nil {
			t.Fatalf("%s: %v", set.name, err)
		}
		if len(figs) == 0 {
			t.Fatalf("%s: no figures", set.name)
		}
		var b bytes.Buffer
		for _, f := range figs {
			line, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
		path := filepath.Join("..", "testdata", "report", "figures", set.name+".jsonl")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (go test ./studies -update writes it)", set.name, err)
		}
		if !bytes.Equal(want, b.Bytes()) {
			t.Errorf("%s: the figures the studies draw differ from %s (go test ./studies -update rewrites it):\n%s", set.name, path, b.String())
		}
	}
}

// flipTable is a flip_points table whose TinT-EN step flips nothing: its
// flow of 0 items comes before the largest one.
func flipTable() *tables.Table {
	return table("flip_points", []string{"model", "language", "path", "step", "from", "flipped"},
		[]any{"m", "hin", "strategy", "tint-cm", 7, 1}, []any{"m", "hin", "strategy", "tint-en", 6, 0},
		[]any{"m", "hin", "input", "code-mixed", 7, 1}, []any{"m", "hin", "input", "english", 6, 1})
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
