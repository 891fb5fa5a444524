package tables

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/go-gota/gota/series"
)

func row(model, lang, form, strategy, cond, item string, correct bool) score.Row {
	return score.Row{Key: engine.Key{Model: model, Language: lang, Form: form, Strategy: strategy, Condition: cond, Item: item}, Correct: correct}
}

func cell(t *testing.T, tb *Table, match map[string]string, col string) string {
	t.Helper()
	idx := map[string]int{}
	for i, h := range tb.Header {
		idx[h] = i
	}
	for _, r := range tb.Rows {
		ok := true
		for k, v := range match {
			if FormatCell(r[idx[k]]) != v {
				ok = false
			}
		}
		if ok {
			return FormatCell(r[idx[col]])
		}
	}
	t.Fatalf("%s: no row %v", tb.Name, match)
	return ""
}

func num(t *testing.T, s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// CLC never mixes forms: clc_mean is each language's mean over the
// other languages of its form (the authors' CLC(L)), clc_overall their
// mean; cross-form pairs are listed apart; the matrix puts the reference
// above the diagonal, as Fig. 4 does.
func TestCLC(t *testing.T) {
	var rows []score.Row
	add := func(strategy, lang, form string, right ...int) {
		set := map[int]bool{}
		for _, r := range right {
			set[r] = true
		}
		for i := 1; i <= 5; i++ {
			rows = append(rows, row("m", lang, form, strategy, "", strconv.Itoa(i), set[i]))
		}
	}
	add("baseline", "hin", "native", 1, 2, 3)
	add("baseline", "ben", "native", 2, 3, 4)
	add("baseline", "mar", "native", 1, 2, 3, 4)
	add("baseline", "hin", "code-mixed", 1, 2)
	add("baseline", "eng", "english", 1, 2, 3, 4)
	for _, l := range []string{"hin", "ben", "mar"} {
		add("tint-cm", l, "native", 1, 2, 3, 4)
	}
	pairs, means, overall := CLC(rows)
	for _, c := range []struct {
		a, b, scope string
		want        float64
	}{
		{"ben/native", "hin/native", "native", 0.5}, {"hin/native", "mar/native", "native", 0.75}, {"ben/native", "mar/native", "native", 0.75},
		{"hin/code-mixed", "hin/native", "cross-form", 2.0 / 3},
	} {
		sel := map[string]string{"strategy": "baseline", "a": c.a, "b": c.b}
		if got := num(t, cell(t, pairs, sel, "jaccard")); math.Abs(got-c.want) > 5e-7 || cell(t, pairs, sel, "scope") != c.scope {
			t.Errorf("J(%s, %s) = %v (%s)", c.a, c.b, got, cell(t, pairs, sel, "scope"))
		}
	}
	for l, want := range map[string]float64{"hin": 0.625, "ben": 0.625, "mar": 0.75} {
		if got := num(t, cell(t, means, map[string]string{"strategy": "baseline", "form": "native", "language": l}, "mean_jaccard")); got != want {
			t.Errorf("CLC(%s) = %v, want %v", l, got, want)
		}
	}
	for _, r := range means.Rows {
		if means.Str(r, "form") != "native" {
			t.Errorf("a CLC(L) of a form with one language: %v", r)
		}
	}
	if got := num(t, cell(t, overall, map[string]string{"strategy": "baseline", "form": "native"}, "clc")); math.Abs(got-2.0/3) > 5e-7 {
		t.Errorf("overall native CLC %v", got)
	}
	if got := num(t, cell(t, overall, map[string]string{"strategy": "tint-cm", "form": "native"}, "clc")); got != 1 {
		t.Errorf("overall TinT CLC %v", got)
	}
	mx := CLCMatrix(pairs, "baseline")
	at := func(r, c string) float64 {
		return num(t, cell(t, mx, map[string]string{"row": r, "col": c}, "jaccard"))
	}
	if len(mx.Rows) != 9 || at("ben", "hin") != 0.5 || at("hin", "ben") != 1 || at("mar", "mar") != 1 || at("hin", "mar") != 0.75 ||
		cell(t, mx, map[string]string{"row": "ben", "col": "hin"}, "upper") != "baseline" {
		t.Errorf("matrix %v", mx.Rows)
	}
}

func TestStrategyTests(t *testing.T) {
	var rows []score.Row
	base := []bool{true, true, false, false, false, false, true, false, false, false}
	tint := []bool{true, false, true, true, true, true, true, true, false, true}
	for i := range base {
		rows = append(rows, row("m", "hin", "native", "baseline-cands", "", strconv.Itoa(i), base[i]), row("m", "hin", "native", "tint-cm", "", strconv.Itoa(i), tint[i]))
	}
	tb := StrategyTests(rows, "")
	sel := map[string]string{"strategy": "tint-cm"}
	if cell(t, tb, sel, "b") != "1" || cell(t, tb, sel, "c") != "6" || cell(t, tb, sel, "pairs") != "10" || num(t, cell(t, tb, sel, "diff")) != 0.5 {
		t.Errorf("rows %v", tb.Rows)
	}
	if p := num(t, cell(t, tb, sel, "mcnemar_p")); p < 0.1249 || p > 0.1251 { // 2·P(X≤1), X~Bin(7, ½) = 0.125
		t.Errorf("McNemar p %v", p)
	}
}

func TestConditionTestsAndWrite(t *testing.T) {
	var rows []score.Row
	for i := range 20 {
		rows = append(rows, row("m", "eng", "english", "qa", "clean", strconv.Itoa(i), i < 14), row("m", "eng", "english", "qa", "hi", strconv.Itoa(i), i < 6))
	}
	// Paired by default: 8 items right clean only, none right under the
	// note only; McNemar exact p = 2·(1/2)^8 (SciPy binomtest(0, 8) 0.0078125).
	tb := ConditionTests([]Metric{Correct()}, rows, false)
	sel := map[string]string{"condition": "hi", "metric": "correct"}
	if cell(t, tb, sel, "k_clean") != "14" || cell(t, tb, sel, "k") != "6" || cell(t, tb, sel, "b") != "8" || cell(t, tb, sel, "c") != "0" ||
		num(t, cell(t, tb, sel, "diff")) != -0.4 || cell(t, tb, sel, "family") != "m / correct: 1 tests" || tb.Col("p_fisher") >= 0 {
		t.Errorf("rows %v %v", tb.Header, tb.Rows)
	}
	if p := num(t, cell(t, tb, sel, "mcnemar_p")); math.Abs(p-0.0078125) > 1e-6 {
		t.Errorf("McNemar p %v", p)
	}
	// Unpaired tests on request.
	tb = ConditionTests([]Metric{Correct()}, rows, true)
	if p := num(t, cell(t, tb, sel, "p_fisher")); math.Abs(p-0.025645) > 1e-6 {
		t.Errorf("Fisher p %v", p) // SciPy 1.10.1: fisher_exact([[6,14],[14,6]]).pvalue = 0.025645
	}
	dir := t.TempDir()
	if err := Write(dir, []*Table{tb, Accuracy("mdi", []Metric{Correct()}, rows)}, true); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Join(dir, "accuracy.csv"))
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || recs[0][0] != "simulated" || recs[1][0] != "true" || len(recs) < 3 {
		t.Errorf("accuracy.csv %v %v", recs, err)
	}
}

func TestJudgeAgreement(t *testing.T) {
	var rows []score.Row
	for i, v := range []struct{ judge, sub bool }{{true, true}, {true, false}, {false, false}, {false, false}, {true, true}, {false, true}} {
		r := row("m", "hin", "native", "answer", "", strconv.Itoa(i), v.judge)
		r.Judge = score.VerdictIncorrect
		if v.judge {
			r.Judge = score.VerdictCorrect
		}
		r.Substring = v.sub
		rows = append(rows, r)
	}
	unp := row("m", "hin", "native", "answer", "", "x", false)
	unp.Judge = score.VerdictUnparsed
	rows = append(rows, unp)
	tb := JudgeAgreement(rows)
	sel := map[string]string{"criterion": "substring"}
	if cell(t, tb, sel, "n") != "6" || num(t, cell(t, tb, sel, "agree")) < 0.666 || num(t, cell(t, tb, sel, "agree")) > 0.667 ||
		num(t, cell(t, tb, sel, "kappa")) < 0.333 || num(t, cell(t, tb, sel, "kappa")) > 0.334 {
		t.Errorf("rows %v", tb.Rows)
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
			r.DistractorSwitch, r.Semantic = true, "WRONG"
			if j < rec {
				r.Semantic = "CORRECT"
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
			"recovery_rate": 120.0 / 148, "broad_adj_halluc": 0.470}},
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
		if clean := num(t, cell(t, tb, map[string]string{"condition": "clean"}, "halluc_rate")); c.name[0] == 'p' && math.Abs(clean-0.416) > 5e-7 {
			t.Errorf("%s: clean halluc_rate %v", c.name, clean)
		}
	}
	js := JudgeByScript(decompositionRows(200, 120, 24, 69, 46, 50, 17, 30, 4))
	if len(js.Rows) == 0 {
		t.Error("no verdicts by script")
	}
}

func TestKLARAnalyses(t *testing.T) {
	var rows []score.Row
	add := func(lang, form, strategy string, right []bool, tokens int) {
		for i, ok := range right {
			r := row("m", lang, form, strategy, "", strconv.Itoa(i), ok)
			r.PromptTokens, r.LatencyMS, r.Domain = tokens, float64(10*(i+1)), "capital"
			rows = append(rows, r)
		}
	}
	//                                     items 0..5
	add("hin", "native", "baseline-cands", []bool{true, false, false, false, false, false}, 60)
	add("hin", "code-mixed", "baseline-cands", []bool{true, true, true, false, false, false}, 40)
	add("eng", "english", "baseline-cands", []bool{true, true, true, true, false, false}, 30)
	add("hin", "native", "tint-cm", []bool{true, true, false, false, false, false}, 90)
	add("hin", "native", "tint-en", []bool{true, false, true, true, false, false}, 90)
	add("tam", "native", "baseline-cands", []bool{false, false, false, false, false, true}, 80)
	add("tam", "native", "tint-cm", []bool{true, false, false, false, false, true}, 110)

	fp := FlipPoints(rows)
	// hin: wrong at baseline {1..5}; TinT-CM rights 1 → 1 of 5; of {2..5}, TinT-EN rights 2,3 → 2 of 4.
	for _, c := range []struct{ path, step, from, flipped string }{
		{"strategy", "tint-cm", "5", "1"}, {"strategy", "tint-en", "4", "2"},
		{"input", "code-mixed", "5", "2"}, {"input", "english", "3", "1"},
	} {
		sel := map[string]string{"language": "hin", "path": c.path, "step": c.step}
		if cell(t, fp, sel, "from") != c.from || cell(t, fp, sel, "flipped") != c.flipped {
			t.Errorf("%s/%s: from %s flipped %s", c.path, c.step, cell(t, fp, sel, "from"), cell(t, fp, sel, "flipped"))
		}
	}
	gaps := FormGaps(rows)
	sel := map[string]string{"language": "hin", "a": "english", "b": "native"}
	if num(t, cell(t, gaps, sel, "gap")) != 0.5 || cell(t, gaps, sel, "b_only_a") != "3" {
		t.Errorf("gap rows %v", gaps.Rows)
	}
	sum := FormGapSummary(gaps)
	if cell(t, sum, map[string]string{"model": "*", "a": "english", "b": "native"}, "cells") != "2" || // hin and tam
		num(t, cell(t, sum, map[string]string{"model": "*", "a": "english", "b": "native"}, "mean_gap")) != 0.5 {
		t.Errorf("gap summary %v", sum.Rows)
	}
	fam := Families(rows)
	if cell(t, fam, map[string]string{"strategy": "baseline-cands", "form": "native", "family": "Indo-Aryan"}, "k") != "1" ||
		cell(t, fam, map[string]string{"strategy": "baseline-cands", "form": "native", "family": "Dravidian"}, "k") != "1" {
		t.Errorf("families %v", fam.Rows)
	}
	ft := FamilyTests(fam)
	if cell(t, ft, map[string]string{"strategy": "baseline-cands", "form": "native"}, "n_dravidian") != "6" {
		t.Errorf("family tests %v", ft.Rows)
	}
	// TinT-CM against Obj-Baseline (the reference when Baseline was not
	// run): +1/6 accuracy in hin and tam; native CLC 0 → 1/3 in both.
	lt := LanguageTests(rows, "")
	acc, clc := map[string]string{"strategy": "tint-cm", "measure": "acc"}, map[string]string{"strategy": "tint-cm", "measure": "clc"}
	if cell(t, lt, acc, "languages") != "2" || cell(t, lt, acc, "positive") != "2" || math.Abs(num(t, cell(t, lt, acc, "mean_gain"))-1.0/6) > 5e-7 ||
		math.Abs(num(t, cell(t, lt, acc, "mean_gain_lo"))-1.0/6) > 5e-7 || num(t, cell(t, lt, acc, "perm_p")) != 0.5 || cell(t, lt, acc, "reference") != "baseline-cands" {
		t.Errorf("language tests (acc) %v", lt.Rows)
	}
	if math.Abs(num(t, cell(t, lt, clc, "mean_gain"))-1.0/3) > 5e-7 || cell(t, lt, clc, "languages") != "2" {
		t.Errorf("language tests (clc) %v", lt.Rows)
	}
	// CLC gains beside the accuracy gains: native CLC 0 → 1/3 for TinT-CM.
	st := StrategyTests(rows, "")
	if sel := map[string]string{"strategy": "tint-cm", "language": "hin"}; num(t, cell(t, st, sel, "clc_ref")) != 0 ||
		math.Abs(num(t, cell(t, st, sel, "clc_gain"))-1.0/3) > 5e-7 {
		t.Errorf("strategy tests' CLC %v", st.Rows)
	}
	// A.3's families: TinT-EN gains 2/6 in hin, TinT-CM 1/6 in hin and tam.
	sf := StrategyFamilies(rows, "", func(s string) string {
		if strings.HasPrefix(s, "tint") {
			return "TinT"
		}
		return ""
	})
	en, cm := map[string]string{"strategy": "tint-en"}, map[string]string{"strategy": "tint-cm"}
	if cell(t, sf, en, "best") != "true" || cell(t, sf, cm, "best") != "false" || math.Abs(num(t, cell(t, sf, en, "mean_acc_gain"))-2.0/6) > 5e-7 ||
		cell(t, sf, cm, "cells") != "2" || num(t, cell(t, sf, en, "mean_ms")) != 35 || len(sf.Rows) != 2 {
		t.Errorf("strategy families %v", sf.Rows)
	}
	// Gains by family: hin (Indo-Aryan) and tam (Dravidian) gain alike.
	fg := FamilyGainTests(rows, "")
	if cell(t, fg, acc, "n_indo_aryan") != "1" || cell(t, fg, acc, "n_dravidian") != "1" || num(t, cell(t, fg, acc, "diff")) != 0 ||
		num(t, cell(t, fg, acc, "perm_p")) != 1 || math.Abs(num(t, cell(t, fg, acc, "mean_gain_dravidian"))-1.0/6) > 5e-7 {
		t.Errorf("family gain tests %v", fg.Rows)
	}
	tok := Tokenization(rows)
	if num(t, cell(t, tok, map[string]string{"language": "tam"}, "mean_prompt_tokens")) != 80 {
		t.Errorf("tokenization %v", tok.Rows)
	}
	lat := Latency(rows)
	if num(t, cell(t, lat, map[string]string{"strategy": "tint-cm"}, "median_ms")) != 35 {
		t.Errorf("latency %v", lat.Rows)
	}
	if len(Relations(rows).Rows) == 0 {
		t.Error("no relation rows")
	}
}

func TestQuestTables(t *testing.T) {
	var rows []score.Row
	for i, v := range []struct {
		model, lang, domain string
		judge, sub, ov      bool
	}{
		{"a", "hin", "History", true, true, true}, {"a", "hin", "History", true, false, true}, {"a", "hin", "Politics", false, false, false},
		{"a", "eng", "History", true, true, true}, {"a", "eng", "Politics", true, true, true},
		{"b", "hin", "History", false, false, false}, {"b", "hin", "Politics", false, false, true},
		{"b", "eng", "History", true, false, false}, {"b", "eng", "Politics", false, false, false},
	} {
		r := row(v.model, v.lang, "native", "answer", "", strconv.Itoa(i), v.judge)
		r.Domain, r.Substring, r.Overlap = v.domain, v.sub, v.ov
		rows = append(rows, r)
	}
	d := Domains(rows)
	if num(t, cell(t, d, map[string]string{"model": "a", "language": "hin", "domain": "*", "protocol": "judge"}, "rate")) < 0.666 ||
		cell(t, d, map[string]string{"model": "a", "language": "hin", "domain": "History", "protocol": "substring"}, "k") != "1" {
		t.Errorf("domains %v", d.Rows)
	}
	if cell(t, d, map[string]string{"model": "*", "language": "*", "domain": "History", "protocol": "judge"}, "k") != "4" ||
		cell(t, d, map[string]string{"model": "*", "language": "*", "domain": "History", "protocol": "judge"}, "n") != "5" {
		t.Errorf("domains pooled over models and languages %v", d.Rows)
	}
	rk := Rankings(rows)
	if cell(t, rk, map[string]string{"language": "*", "b": "substring"}, "cells") != "4" || math.IsNaN(num(t, cell(t, rk, map[string]string{"language": "*", "b": "substring"}, "kendall_tau"))) ||
		cell(t, rk, map[string]string{"language": "hin", "b": "substring"}, "cells") != "2" {
		t.Errorf("rankings %v", rk.Rows)
	}
}

// Two models on the same questions: the paired gap per language and
// protocol, with McNemar's exact p.
func TestModelGaps(t *testing.T) {
	var rows []score.Row
	a := []bool{true, true, true, true, true, true, false, false}
	b := []bool{true, false, false, false, false, false, false, true}
	for i := range a {
		rows = append(rows, row("a", "hin", "native", "", "", strconv.Itoa(i), a[i]), row("b", "hin", "native", "", "", strconv.Itoa(i), b[i]))
	}
	g := ModelGaps(rows)
	sel := map[string]string{"language": "hin", "protocol": "judge", "a": "a", "b": "b"}
	// a right only: 5; b right only: 1; diff (6 − 2)/8 = 0.5; McNemar 2·P(X ≤ 1 | 6, ½) = 0.21875.
	if cell(t, g, sel, "pairs") != "8" || num(t, cell(t, g, sel, "diff")) != 0.5 || math.Abs(num(t, cell(t, g, sel, "mcnemar_p"))-0.21875) > 5e-7 {
		t.Errorf("model gaps %v", g.Rows)
	}
}

func TestScalingAndHumanAgreement(t *testing.T) {
	var rows []score.Row
	for m, acc := range map[string]int{"s": 2, "m": 5, "l": 8} {
		for i := range 10 {
			rows = append(rows, row(m, "hin", "native", "baseline", "", strconv.Itoa(i), i < acc))
		}
	}
	sc := Scaling(rows, map[string]float64{"s": 1, "m": 8, "l": 70})
	if cell(t, sc, map[string]string{"strategy": "baseline"}, "models") != "3" || num(t, cell(t, sc, map[string]string{"strategy": "baseline"}, "spearman_rho")) != 1 ||
		cell(t, sc, map[string]string{"strategy": "baseline"}, "accuracies") != "0.2000 0.5000 0.8000" {
		t.Errorf("scaling %v", sc.Rows)
	}
	if len(Scaling(rows, nil).Rows) != 0 {
		t.Error("scaling without sizes")
	}
	mf := ModelFamilies(rows, map[string]string{"s": "A", "m": "A", "l": "B"}, map[string]float64{"s": 1, "m": 8, "l": 70})
	if len(mf.Rows) != 3 || mf.Str(mf.Rows[0], "model") != "s" || mf.Str(mf.Rows[1], "model") != "m" || mf.Num(mf.Rows[1], "rate") != 0.5 ||
		mf.Str(mf.Rows[2], "family") != "B" || mf.Num(mf.Rows[2], "size_b") != 70 {
		t.Errorf("model families %v", mf.Rows)
	}
	var labels []HumanLabel
	for i := range 10 {
		labels = append(labels, HumanLabel{Model: "m", Item: strconv.Itoa(i), Language: "hin", Correct: i < 5})
	}
	ha := HumanAgreement(rows, labels, []Metric{{Name: "exact_match", Of: func(r score.Row) bool { return r.Correct }}})
	if cell(t, ha, map[string]string{"criterion": "exact_match"}, "n") != "10" || num(t, cell(t, ha, map[string]string{"criterion": "exact_match"}, "kappa")) != 1 {
		t.Errorf("human agreement %v", ha.Rows)
	}
	// Labels name their condition: one for another condition matches nothing.
	for i := range labels {
		labels[i].Condition = "hi"
	}
	if ha := HumanAgreement(rows, labels, []Metric{Correct()}); len(ha.Rows) != 0 {
		t.Errorf("labels of condition hi matched answers without one: %v", ha.Rows)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "h.csv")
	os.WriteFile(p, []byte("model,item,language,condition,label\nm,1,hin,hi,correct\n"), 0o644)
	if h, err := ReadHumanLabels(p); err != nil || len(h) != 1 || h[0].Condition != "hi" || !h[0].Correct {
		t.Errorf("labels with a condition: %v %v", h, err)
	}
	os.WriteFile(p, []byte("model,item,language,label\nm,1,hin,correct\nm,2,hin,maybe\n"), 0o644)
	if _, err := ReadHumanLabels(p); err == nil || err.Error() != p+` line 3 field "label": "maybe" is not correct/incorrect` {
		t.Errorf("bad label: %v", err)
	}
}

func TestFormatFloat(t *testing.T) {
	for v, want := range map[float64]string{
		math.Copysign(0, -1): "0", 0: "0", 1.86e-9: "1.86e-09", -2.5e-7: "-2.5e-07", 0.5: "0.500000",
		1e-4: "0.000100", math.NaN(): "", 1.75: "1.750000", math.Inf(1): "+Inf",
	} {
		if got := formatFloat(v); got != want {
			t.Errorf("%g: %q, want %q", v, got, want)
		}
	}
}

// Cells keep their types: columns are typed from them, kinds read from the
// names, and renderers format numbers only at the end.
func TestTypedTable(t *testing.T) {
	tb := &Table{Name: "x", Header: []string{"item", "k", "n", "rate", "ci_lo", "p_fisher", "z", "ok", "latency_ms"}}
	tb.add("007", 3, 10, 0.3, 0.1, 1.86e-9, math.NaN(), true, 12.5)
	tb.add("010", 4, 10, 0.4, 0.15, 0.5, -1.5, false, 3.0)
	want := []Column{{"item", String, KindNone, ""}, {"k", Int, KindCount, ""}, {"n", Int, KindCount, ""}, {"rate", Float, KindRate, ""}, {"ci_lo", Float, KindLower, ""},
		{"p_fisher", Float, KindPValue, ""}, {"z", Float, KindStatistic, ""}, {"ok", Bool, KindNone, ""}, {"latency_ms", Float, KindMillis, ""}}
	got := tb.Columns()
	for i := range got {
		if got[i].Description == "" && got[i].Name != "ok" && got[i].Name != "latency_ms" {
			t.Errorf("column %s has no description", got[i].Name)
		}
		got[i].Description = ""
	}
	if !slices.Equal(got, want) {
		t.Errorf("columns %v", got)
	}
	if tb.Str(tb.Rows[0], "item") != "007" || tb.Num(tb.Rows[0], "p_fisher") != 1.86e-9 || !math.IsNaN(tb.Num(tb.Rows[0], "z")) {
		t.Errorf("typed cells %v", tb.Rows[0])
	}
	md := tb.Markdown()
	for _, w := range []string{"**x** (2 rows)", "| item | k |", "|---|---:|", "| 007 | 3 | 10 | 0.300000 | 0.100000 | 1.86e-09 |  | true | 12.500000 |"} {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
}

// DataFrames are built from the typed columns: ids stay strings, counts
// ints, rates floats, after the "simulated" column.
func TestDataFrame(t *testing.T) {
	tb := &Table{Name: "x", Header: []string{"model", "item", "k", "rate"}, Rows: [][]any{{"a_b", "007", 3, 0.5}, {"c", "010", 4, 0.25}}, Simulated: true}
	df := tb.DataFrame()
	if df.Err != nil || !slices.Equal(df.Names(), append([]string{"simulated"}, tb.Header...)) || df.Nrow() != 2 {
		t.Fatalf("%v %v", df.Err, df)
	}
	if got := df.Col("rate").Float(); got[1] != 0.25 {
		t.Errorf("rate %v", got)
	}
	if got := df.Col("model").Records(); got[0] != "a_b" {
		t.Errorf("model %v", got)
	}
	if got := df.Col("item"); got.Type() != series.String || got.Records()[0] != "007" {
		t.Errorf("item %v %v", got.Type(), got.Records())
	}
	if got, err := df.Col("k").Int(); err != nil || got[1] != 4 || df.Col("k").Type() != series.Int {
		t.Errorf("k %v %v", got, err)
	}
	if got, err := df.Col("simulated").Bool(); err != nil || !got[0] {
		t.Errorf("simulated %v %v", got, err)
	}
}

// Table 5's statistics: instances and mean question and answer lengths.
func TestDatasetStats(t *testing.T) {
	s := &item.Set{}
	a := s.Get("1")
	a.Variants = []item.Variant{{Language: "hin", Form: item.Native, Question: "a b c", Answer: "x y"}, {Language: "hin", Form: item.CodeMixed, Question: "a b", Answer: "x"}}
	b := s.Get("2")
	b.Variants = []item.Variant{{Language: "hin", Form: item.Native, Question: "a b", Answer: "x"}, {Language: "ben", Form: item.Native, Question: "a", Answer: "x"}}
	tb := DatasetStats(s, []string{"hin", "ben"}, []string{"native", "code-mixed"})
	for _, c := range []struct {
		form, lang string
		n          string
		q, ans     float64
	}{{"native", "hin", "2", 2.5, 1.5}, {"native", "*", "3", 2, 4.0 / 3}, {"code-mixed", "hin", "1", 2, 1}} {
		sel := map[string]string{"form": c.form, "language": c.lang}
		if cell(t, tb, sel, "instances") != c.n || math.Abs(num(t, cell(t, tb, sel, "avg_query_words"))-c.q) > 5e-7 ||
			math.Abs(num(t, cell(t, tb, sel, "avg_answer_words"))-c.ans) > 5e-7 {
			t.Errorf("%s/%s: %v", c.form, c.lang, tb.Rows)
		}
	}
	if len(DatasetStats(s, []string{"ben"}, []string{"code-mixed"}).Rows) != 0 {
		t.Error("filters ignored")
	}
}

// The papers' layouts: rows in first-seen order, columns in the given
// order then sorted, typed cells, NaN where a combination is missing.
func TestPivotLayouts(t *testing.T) {
	acc := &Table{Name: "accuracy", Header: []string{"model", "strategy", "language", "form", "metric", "rate"}}
	clc := &Table{Name: "clc_mean", Header: []string{"model", "strategy", "form", "language", "others", "mean_jaccard"}}
	for _, l := range []string{"ben", "asm"} {
		acc.add("m", "baseline", l, "native", "correct", 0.5)
		acc.add("m", "baseline", l, "native", "translit", 0.9) // not the criterion: left out
		acc.add("m", "tint-cm", l, "native", "correct", 0.75)
		clc.add("m", "baseline", "native", l, 1, 0.4)
	}
	w := AccCLCWide(acc, clc, "native")
	want := []string{"model", "strategy", "asm_acc", "asm_clc", "ben_acc", "ben_clc"}
	if !slices.Equal(w.Header, want) || len(w.Rows) != 2 {
		t.Fatalf("header %v rows %v", w.Header, w.Rows)
	}
	if w.Num(w.Rows[0], "ben_acc") != 0.5 || w.Num(w.Rows[0], "ben_clc") != 0.4 || w.Num(w.Rows[1], "asm_acc") != 0.75 || !math.IsNaN(w.Num(w.Rows[1], "asm_clc")) {
		t.Errorf("rows %v", w.Rows)
	}
	for _, c := range w.Columns() {
		if c.Description == "" {
			t.Errorf("column %s has no description", c.Name)
		}
	}
	p := Pivot("x", "", acc, nil, []string{"strategy"}, []string{"language"}, []string{"rate"}, []string{"ben"})
	if !slices.Equal(p.Header, []string{"strategy", "ben", "asm"}) {
		t.Errorf("column order %v", p.Header)
	}
	for p, want := range map[float64]string{0.0005: "***", 0.005: "**", 0.02: "*", 0.2: "", math.NaN(): ""} {
		if got := Stars(p); got != want {
			t.Errorf("Stars(%v) = %q", p, got)
		}
	}
}

// A conclusion is checked per model under the rule in force and under the
// alternative on its measure.
func TestConclusions(t *testing.T) {
	var rows []score.Row
	for i := range 4 {
		rows = append(rows, row("m", "eng", "english", "qa", "clean", strconv.Itoa(i), i < 3))
		r := row("m", "eng", "english", "qa", "hi", strconv.Itoa(i), i < 1)
		r.AbstainMultilingual = i == 1 // a Hindi "I don't know": not an English abstention
		rows = append(rows, r)
	}
	alt := Alternative{Name: "multilingual_abstain", Measure: "hallucination",
		Base: func(r score.Row) bool { return !r.Correct && !r.AbstainEnglish }, Of: func(r score.Row) bool { return !r.Correct && !r.AbstainMultilingual }}
	claim := Claim{Name: "hi raises hallucination", Measure: "hallucination", Effect: func(rows []score.Row, v func(score.Row) bool) float64 {
		return RateDiff(rows, v, func(r score.Row) bool { return r.Key.Condition == "hi" }, func(r score.Row) bool { return r.Key.Condition == "clean" })
	}}
	other := Claim{Name: "another measure", Effect: func([]score.Row, func(score.Row) bool) float64 { return 1 }}
	c := Conclusions([]Claim{claim, other}, []Alternative{alt}, rows)
	if len(c.Rows) != 1 || c.Num(c.Rows[0], "n") != 8 || c.Num(c.Rows[0], "effect") != 0.5 || c.Num(c.Rows[0], "effect_alt") != 0.25 || c.Rows[0][c.Col("holds")] != true || c.Rows[0][c.Col("holds_alt")] != true {
		t.Errorf("conclusions %v", c.Rows)
	}
}

// Two runs of the same items: the paired difference b − a and McNemar.
func TestCompare(t *testing.T) {
	var a, b []score.Row
	ra := []bool{true, true, true, false, false, false}
	rb := []bool{true, false, false, false, true, true}
	for i := range ra {
		a = append(a, row("m", "hin", "native", "baseline-cands", "", strconv.Itoa(i), ra[i]))
		b = append(b, row("m", "hin", "native", "baseline-cands", "", strconv.Itoa(i), rb[i]))
	}
	b = append(b, row("m", "hin", "native", "baseline-cands", "", "only-b", true)) // not in a: not paired
	c := Compare(a, b)
	sel := map[string]string{"language": "hin", "form": "native"}
	// a right only: 2, b right only: 2 → diff 0, McNemar p 1; pairs 6.
	if cell(t, c, sel, "pairs") != "6" || cell(t, c, sel, "k_a") != "3" || cell(t, c, sel, "k_b") != "3" || num(t, cell(t, c, sel, "diff")) != 0 ||
		num(t, cell(t, c, sel, "mcnemar_p")) != 1 || cell(t, c, map[string]string{"language": "*"}, "pairs") != "6" {
		t.Errorf("comparison %v", c.Rows)
	}
	b[0].Correct = false // now a right only 3, b right only 2: diff −1/6
	c = Compare(a, b)
	if math.Abs(num(t, cell(t, c, sel, "diff"))+1.0/6) > 5e-7 {
		t.Errorf("comparison %v", c.Rows)
	}
}

// The LaTeX renderer: booktabs, alignment by type, special characters
// escaped, three decimals, the caption with n and SIMULATED.
func TestLaTeX(t *testing.T) {
	tb := &Table{Name: "x_y", Header: []string{"model", "k", "rate", "p"}, Simulated: true,
		Rows: [][]any{{"a_b & c%", 3, 0.123456, 1.86e-9}, {`\x{}`, 4, 0.5, 0.5}}}
	got := tb.LaTeX()
	for _, want := range []string{"\\begin{tabular}{lrrr}", "\\toprule", "model & k & rate & p \\\\", "a\\_b \\& c\\% & 3 & 0.123 & 1.86e-09 \\\\",
		"\\textbackslash{}x\\{\\} & 4 & 0.500 & 0.500 \\\\", "\\caption{x\\_y (2 rows, SIMULATED models)}", "\\bottomrule"} {
		if !strings.Contains(got, want) {
			t.Errorf("LaTeX lacks %q:\n%s", want, got)
		}
	}
}
