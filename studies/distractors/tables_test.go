package distractors

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables/tablestest"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// The helpers every study's table tests share.
var (
	row  = tablestest.Row
	cell = tablestest.Cell
	num  = tablestest.Num
)

func TestConditionTestsAndWrite(t *testing.T) {
	var rows []score.Row
	for i := range 20 {
		rows = append(rows, row("m", "eng", "english", "qa", "clean", strconv.Itoa(i), i < 14), row("m", "eng", "english", "qa", "hi", strconv.Itoa(i), i < 6))
	}
	// Paired by default: 8 items right clean only, none right under the
	// note only; McNemar exact p = 2·(1/2)^8 (SciPy binomtest(0, 8) 0.0078125).
	tb := ConditionTests([]tables.Metric{tables.Correct()}, rows, false)
	sel := map[string]string{"condition": "hi", "metric": "correct"}
	if cell(t, tb, sel, "k_clean") != "14" || cell(t, tb, sel, "k") != "6" || cell(t, tb, sel, "b") != "8" || cell(t, tb, sel, "c") != "0" ||
		num(t, cell(t, tb, sel, "diff")) != -0.4 || cell(t, tb, sel, "family") != "m / correct: 1 tests" || tb.Col("p_fisher") >= 0 {
		t.Errorf("rows %v %v", tb.Header, tb.Rows)
	}
	if p := num(t, cell(t, tb, sel, "mcnemar_p")); math.Abs(p-0.0078125) > 1e-6 {
		t.Errorf("McNemar p %v", p)
	}
	// Unpaired tests on request.
	tb = ConditionTests([]tables.Metric{tables.Correct()}, rows, true)
	if p := num(t, cell(t, tb, sel, "p_fisher")); math.Abs(p-0.025645) > 1e-6 {
		t.Errorf("Fisher p %v", p) // SciPy 1.10.1: fisher_exact([[6,14],[14,6]]).pvalue = 0.025645
	}
	dir := t.TempDir()
	acc := tables.Accuracy("mdi", []tables.Metric{tables.Correct()}, rows)
	acc.Simulated = true
	if err := tables.Write(dir, []*tables.Table{tb, acc}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Join(dir, "accuracy.csv"))
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || recs[0][0] != "simulated" || recs[1][0] != "true" || len(recs) < 3 {
		t.Errorf("accuracy.csv %v %v", recs, err)
	}
}

// decompositionRows builds one model's clean and Hindi answers: clean
// cleanEM right then cleanAbst abstaining (the rest wrong); under the
// Hindi note swCC switched answers to clean-right items (the first recCC
// judged CORRECT, the rest WRONG), hiEM right, hiAbst abstaining, then
// swOther switched answers to clean-wrong items (the first recOther judged
// CORRECT), the rest wrong.
func decompositionRows(n, cleanEM, cleanAbst, swCC, recCC, hiEM, hiAbst, swOther, recOther int) []score.Row {
	var rows []score.Row
	for i := range n {
		r := row("m", "eng", "english", "qa", "clean", strconv.Itoa(i), i < cleanEM)
		r.Abstain = i >= cleanEM && i < cleanEM+cleanAbst
		rows = append(rows, r)
	}
	p := 0
	next := func(k int, f func(r *score.Row, j int)) {
		for j := range k {
			r := row("m", "eng", "english", "qa", "hi", strconv.Itoa(p), false)
			f(&r, j)
			rows = append(rows, r)
			p++
		}
	}
	judged := func(rec int) func(r *score.Row, j int) {
		return func(r *score.Row, j int) {
			r.Marks.Set(MarkDistractorSwitch, true)
			r.Verdict = "WRONG"
			if j < rec {
				r.Verdict = "CORRECT"
			}
		}
	}
	next(swCC, judged(recCC))
	next(hiEM, func(r *score.Row, _ int) { r.Correct = true })
	next(hiAbst, func(r *score.Row, _ int) { r.Abstain = true })
	next(max(0, cleanEM+cleanAbst-p), func(*score.Row, int) {}) // the other switched answers are to clean-wrong items
	next(swOther, judged(recOther))
	next(n-p, func(*score.Row, int) {})
	return rows
}

// abstaining marks the first k switched answers judged CORRECT under the
// Hindi note as abstaining.
func abstaining(rows []score.Row, k int) []score.Row {
	for i := range rows {
		if r := &rows[i]; k > 0 && r.Key.Condition == "hi" && r.Verdict == "CORRECT" && !r.Correct {
			r.Abstain = true
			k--
		}
	}
	return rows
}

// The paper's decomposition (§5.3: 0.710 → 0.470 against 0.416 clean,
// 120 of 148 recovered) and the rerun's (0.665 → 0.435 against 0.280,
// 46 of 69, inflation 1.53), with Bhasha's broader rule beside (the
// rerun's 4 of 30 other switched answers: 0.415, inflation 1.60).
func TestDecomposition(t *testing.T) {
	cases := []struct {
		name string
		rows []score.Row
		want map[string]float64
	}{
		{"paper, Llama-3.1-8B, Hindi", decompositionRows(500, 259, 33, 148, 120, 114, 31, 143, 0), map[string]float64{
			"halluc": 355, "halluc_rate": 0.710, "recovered_of_clean_correct": 120, "sw_clean_correct": 148, "switched": 291,
			"adj_halluc": 0.470, "adj_accuracy": 0.468, "inflation": 355.0 / 235, "rise": 0.294, "real_rise": 0.054, "script_share": 0.240 / 0.294,
			"recovery_rate": 120.0 / 148, "recovered_in_halluc": 120, "recovery_rate_in_halluc": 120.0 / 148, "broad_adj_halluc": 0.470}},
		// The paper's 81.1% is judged-correct of all 148 switched
		// clean-correct answers, whatever their bucket: with 2 of the 120
		// also abstaining (an "unknown" beside the Devanagari answer),
		// recovery_rate stays 120/148 = 0.811 while only 118 are in halluc
		// (recovery_rate_in_halluc 118/148 = 0.797).
		{"paper, two recovered answers abstaining", abstaining(decompositionRows(500, 259, 33, 148, 120, 114, 31, 143, 0), 2), map[string]float64{
			"recovered_of_clean_correct": 120, "sw_clean_correct": 148, "recovery_rate": 120.0 / 148, "recovered_in_halluc": 118,
			"recovery_rate_in_halluc": 118.0 / 148, "halluc": 353, "adj_halluc": 235.0 / 500}},
		{"rerun, Llama-3.1-8B, Hindi", decompositionRows(200, 120, 24, 69, 46, 50, 17, 30, 4), map[string]float64{
			"halluc": 133, "halluc_rate": 0.665, "recovered_of_clean_correct": 46, "adj_halluc": 0.435, "inflation": 133.0 / 87, "rise": 0.385,
			"real_rise": 0.155, "broad_recovered": 50, "broad_adj_halluc": 0.415, "broad_inflation": 133.0 / 83, "broad_real_rise": 0.135,
			"recovery_rate": 46.0 / 69}},
	}
	for _, c := range cases {
		tb := Decomposition(c.rows)
		sel := map[string]string{"condition": "hi"}
		for col, want := range c.want {
			if got := num(t, cell(t, tb, sel, col)); math.Abs(got-want) > 5e-7 { // cells are read as printed (6 decimals)
				t.Errorf("%s: %s = %v, want %v", c.name, col, got, want)
			}
		}
		if clean := num(t, cell(t, tb, map[string]string{"condition": "clean"}, "halluc_rate")); c.name == "paper, Llama-3.1-8B, Hindi" && math.Abs(clean-0.416) > 5e-7 {
			t.Errorf("%s: clean halluc_rate %v", c.name, clean)
		}
	}
	js := tables.JudgeByScript(decompositionRows(200, 120, 24, 69, 46, 50, 17, 30, 4))
	if len(js.Rows) == 0 {
		t.Error("no verdicts by script")
	}
}
