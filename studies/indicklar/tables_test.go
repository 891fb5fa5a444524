package indicklar

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables/tablestest"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// The helpers every study's table tests share.
var (
	row  = tablestest.Row
	cell = tablestest.Cell
	num  = tablestest.Num
)

// CLC never mixes forms: clc_mean is each language's mean over the
// other languages of its form (CLC(L), averaged within the form), clc_overall their
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

	fp := FlipPoints(rows, "")
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
	tok := Tokenization(rows, "")
	if num(t, cell(t, tok, map[string]string{"language": "tam"}, "mean_prompt_tokens")) != 80 {
		t.Errorf("tokenization %v", tok.Rows)
	}
	lat := tables.Latency(rows)
	if num(t, cell(t, lat, map[string]string{"strategy": "tint-cm"}, "median_ms")) != 35 {
		t.Errorf("latency %v", lat.Rows)
	}
	if len(Relations(rows).Rows) == 0 {
		t.Error("no relation rows")
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

// IndicKLAR's Tables 2, 8 and 9: accuracy (the criterion only) and
// CLC(L) per language side by side, NaN where a combination is missing.
func TestAccCLCWide(t *testing.T) {
	acc := &tables.Table{Name: "accuracy", Header: []string{"model", "strategy", "language", "form", "metric", "rate"}}
	clc := &tables.Table{Name: "clc_mean", Header: []string{"model", "strategy", "form", "language", "others", "mean_jaccard"}}
	for _, l := range []string{"ben", "asm"} {
		acc.Add("m", "baseline", l, "native", "correct", 0.5)
		acc.Add("m", "baseline", l, "native", "translit", 0.9) // not the criterion: left out
		acc.Add("m", "tint-cm", l, "native", "correct", 0.75)
		clc.Add("m", "baseline", "native", l, 1, 0.4)
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
}

// The flip-point shares are of the baseline-incorrect instances, as the
// project page reports them (PROTOCOLS.md §1.11): 100 items wrong at the
// baseline, 40 right under TinT-CM, 10 of the other 60 right under
// TinT-EN give 0.40 and 0.10; the share of the answers still wrong at the
// step's start is beside (0.40 and 10/60).
func TestFlipPointShares(t *testing.T) {
	var rows []score.Row
	for i := range 120 { // items 0..19 right at the baseline, 20..119 wrong
		id := strconv.Itoa(i)
		rows = append(rows,
			row("m", "hin", "native", "baseline", "", id, i < 20),
			row("m", "hin", "native", "tint-cm", "", id, i < 20 || (i >= 20 && i < 60)),
			row("m", "hin", "native", "tint-en", "", id, i >= 60 && i < 70))
	}
	fp := FlipPoints(rows, "")
	for _, c := range []struct {
		step                       string
		from, flipped, baseWrong   string
		share, shareOfFrom, lo, hi float64
	}{
		{"tint-cm", "100", "40", "100", 0.40, 0.40, 0.3094, 0.4980},
		{"tint-en", "60", "10", "100", 0.10, 10.0 / 60, 0.0552, 0.1744},
	} {
		sel := map[string]string{"path": "strategy", "step": c.step}
		if cell(t, fp, sel, "from") != c.from || cell(t, fp, sel, "flipped") != c.flipped || cell(t, fp, sel, "base_wrong") != c.baseWrong ||
			math.Abs(num(t, cell(t, fp, sel, "share"))-c.share) > 5e-7 || math.Abs(num(t, cell(t, fp, sel, "share_of_from"))-c.shareOfFrom) > 5e-7 ||
			math.Abs(num(t, cell(t, fp, sel, "share_lo"))-c.lo) > 5e-4 || math.Abs(num(t, cell(t, fp, sel, "share_hi"))-c.hi) > 5e-4 {
			t.Errorf("%s: %v", c.step, fp.Rows)
		}
	}
}

// The tokenization and flip-point tables start from the experiment's
// reference: baseline (baseline or baseline-cands); without one, or with
// a reference that is not a baseline, from Baseline when it ran.
func TestTablesHonourReference(t *testing.T) {
	var rows []score.Row
	add := func(strategy string, tokens int, right ...bool) {
		for i, ok := range right {
			r := row("m", "hin", "native", strategy, "", strconv.Itoa(i), ok)
			r.PromptTokens = tokens
			rows = append(rows, r)
		}
	}
	add("baseline", 50, false, false, false, true)
	add("baseline-cands", 70, true, false, false, true)
	add("tint-cm", 90, true, true, false, true)
	for _, c := range []struct {
		ref, want      string
		tokens         float64
		wrong, flipped string // at the baseline; right under TinT-CM
	}{
		{"", "baseline", 50, "3", "2"},
		{"baseline", "baseline", 50, "3", "2"},
		{"baseline-cands", "baseline-cands", 70, "2", "1"},
		{"tint-cm", "baseline", 50, "3", "2"}, // not a baseline
	} {
		tok := Tokenization(rows, c.ref)
		sel := map[string]string{"language": "hin"}
		if cell(t, tok, sel, "baseline") != c.want || num(t, cell(t, tok, sel, "mean_prompt_tokens")) != c.tokens {
			t.Errorf("reference %q: tokenization %v, want %s's %v tokens", c.ref, tok.Rows, c.want, c.tokens)
		}
		fp := FlipPoints(rows, c.ref)
		sel = map[string]string{"path": "strategy", "step": "tint-cm"}
		if cell(t, fp, sel, "baseline") != c.want || cell(t, fp, sel, "from") != c.wrong || cell(t, fp, sel, "flipped") != c.flipped {
			t.Errorf("reference %q: flip points %v, want from %s's %s wrong", c.ref, fp.Rows, c.want, c.wrong)
		}
		// KLAR passes the experiment's reference on.
		for _, x := range KLAR(rows, c.ref, FamilyOf) {
			if x.Name == "tokenization" && cell(t, x, map[string]string{"language": "hin"}, "baseline") != c.want {
				t.Errorf("reference %q: KLAR's tokenization starts from %s", c.ref, cell(t, x, map[string]string{"language": "hin"}, "baseline"))
			}
		}
	}
}

// A.3's best variant per family is selected per language × model cell,
// separately for accuracy and CLC, and counted. Hand-worked accuracy
// gains over the baseline (4 items per cell):
//
//	cell        tint-cm  tint-en  selected
//	m1 / hin    +1/4     +2/4     tint-en
//	m1 / tam    +3/4     +1/4     tint-cm
//	m2 / hin    +1/4     +1/4     tint-cm (a tie: the first by name)
//	m2 / tam     0       +2/4     tint-en
//
// TinT's family gain is the mean of the selected gains, (2+3+1+2)/16 =
// 0.5, above either variant's mean gain (0.3125 and 0.375, the
// strategy_families rule, which picks tint-en).
func TestFamilySelection(t *testing.T) {
	var rows []score.Row
	add := func(model, lang, strategy string, right int) {
		for i := range 4 {
			rows = append(rows, row(model, lang, "native", strategy, "", strconv.Itoa(i), i < right))
		}
	}
	for _, c := range []struct {
		model, lang  string
		base, cm, en int
	}{{"m1", "hin", 0, 1, 2}, {"m1", "tam", 1, 4, 2}, {"m2", "hin", 2, 3, 3}, {"m2", "tam", 1, 1, 3}} {
		add(c.model, c.lang, "baseline", c.base)
		add(c.model, c.lang, "tint-cm", c.cm)
		add(c.model, c.lang, "tint-en", c.en)
	}
	fs := FamilySelection(rows, "", FamilyOf)
	acc := func(strategy string) map[string]string {
		return map[string]string{"family": "TinT", "measure": "acc", "strategy": strategy}
	}
	if cell(t, fs, acc("*"), "cells") != "4" || num(t, cell(t, fs, acc("*"), "mean_best_gain")) != 0.5 || cell(t, fs, acc("*"), "reference") != "baseline" {
		t.Errorf("TinT's family row %v", fs.Rows)
	}
	if lo, hi := num(t, cell(t, fs, acc("*"), "mean_best_gain_lo")), num(t, cell(t, fs, acc("*"), "mean_best_gain_hi")); lo < 0.25 || lo > 0.5 || hi < 0.5 || hi > 0.75 {
		t.Errorf("family gain interval [%v, %v]", lo, hi)
	}
	for s, want := range map[string]string{"tint-cm": "2", "tint-en": "2"} {
		if cell(t, fs, acc(s), "selected") != want || num(t, cell(t, fs, acc(s), "share")) != 0.5 {
			t.Errorf("%s selected %s times, want %s: %v", s, cell(t, fs, acc(s), "selected"), want, fs.Rows)
		}
	}
	// CLC is selected on its own: one row per family and measure, and per variant.
	if n := len(fs.Rows); n != 6 {
		t.Errorf("%d rows, want 3 per measure: %v", n, fs.Rows)
	}
	// The paper's A.3 family gains are set beside mean_best_gain.
	pub, err := Published()
	if err != nil {
		t.Fatal(err)
	}
	vs := experiment.Versus(pub, []*tables.Table{fs}, nil)
	found := false
	for _, r := range vs.Rows {
		if vs.Str(r, "where") == "§A.3" && vs.Num(r, "published") == 0.1812 {
			found = true
			if vs.Num(r, "run") != 0.5 {
				t.Errorf("TinT's A.3 accuracy gain beside %v, want 0.5", vs.Num(r, "run"))
			}
		}
	}
	if !found {
		t.Error("no versus row for TinT's A.3 accuracy gain")
	}
	sf := StrategyFamilies(rows, "", FamilyOf)
	if cell(t, sf, map[string]string{"strategy": "tint-en"}, "best") != "true" ||
		math.Abs(num(t, cell(t, sf, map[string]string{"strategy": "tint-cm"}, "mean_acc_gain"))-0.3125) > 5e-7 {
		t.Errorf("strategy families %v", sf.Rows)
	}
}

// The tables of rows, each on its own (KLAR builds them together).

func CLC(rows []score.Row) (pairs, means, overall *tables.Table) { return clcFrom(tables.Index(rows)) }

func StrategyTests(rows []score.Row, ref string) *tables.Table {
	o := tables.Index(rows)
	_, means, _ := clcFrom(o)
	return strategyTestsFrom(o, reference(ref, o), means)
}

func FormGaps(rows []score.Row) *tables.Table { return formGapsFrom(tables.Index(rows)) }

func FlipPoints(rows []score.Row, ref string) *tables.Table {
	o := tables.Index(rows)
	return flipPointsFrom(o, reference(ref, o))
}

func LanguageTests(rows []score.Row, ref string) *tables.Table {
	o := tables.Index(rows)
	_, means, _ := clcFrom(o)
	ref = reference(ref, o)
	return languageTestsFrom(languageGains(o, ref, means), ref)
}

func StrategyFamilies(rows []score.Row, ref string, family func(strategy string) string) *tables.Table {
	o := tables.Index(rows)
	ref = reference(ref, o)
	_, means, _ := clcFrom(o)
	return strategyFamiliesFrom(rows, languageGains(o, ref, means), ref, family)
}

func FamilySelection(rows []score.Row, ref string, family func(strategy string) string) *tables.Table {
	o := tables.Index(rows)
	ref = reference(ref, o)
	_, means, _ := clcFrom(o)
	return familySelectionFrom(languageGains(o, ref, means), ref, family)
}

func FamilyGainTests(rows []score.Row, ref string) *tables.Table {
	o := tables.Index(rows)
	_, means, _ := clcFrom(o)
	ref = reference(ref, o)
	return familyGainTestsFrom(languageGains(o, ref, means), ref)
}

// reference is Reference over an outcome index.
func reference(want string, o tables.Outcomes) string {
	var rows []score.Row
	for k := range o {
		r := score.Row{}
		r.Key.Strategy = k[1]
		rows = append(rows, r)
	}
	return Reference(want, rows)
}
