package tables

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
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
	ha := HumanAgreement(rows, labels, []Metric{{Name: "exact_match", Of: func(r *score.Row) bool { return r.Correct }}})
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

// Cells keep their types: columns are as declared, and renderers format
// numbers only at the end; a table built without declared columns is
// typed from its cells, a shared column name declared as Key declares it.
func TestTypedTable(t *testing.T) {
	tb := New("x", "", Text("item", "the item"), Key("k"), Key("n"), Key("rate"), Key("ci_lo"), Key("p_fisher"), Key("z"), Flag("ok", ""), Millis("latency_ms", ""))
	tb.Add("007", 3, 10, 0.3, 0.1, 1.86e-9, math.NaN(), true, 12.5)
	tb.Add("010", 4, 10, 0.4, 0.15, 0.5, -1.5, false, 3.0)
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
	u := &Table{Name: "u", Header: []string{"model", "k", "share"}, Rows: [][]any{{"m", 1, 0.5}}, ColumnDocs: map[string]string{"share": "a share"}}
	wantU := []Column{Key("model"), Key("k"), {"share", Float, KindNone, "a share"}}
	if got := u.Columns(); !slices.Equal(got, wantU) {
		t.Errorf("undeclared columns %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a row of the wrong length was added")
		}
	}()
	tb.Add("x")
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

// The papers' layouts: rows in first-seen order, columns in the given
// order then sorted, typed cells, NaN where a combination is missing.
func TestPivotLayouts(t *testing.T) {
	acc := New("accuracy", "", Text("strategy", "s"), Key("language"), Key("metric"), Key("k"), Key("rate"))
	for _, l := range []string{"ben", "asm"} {
		acc.Add("baseline", l, "correct", 1, 0.5)
		acc.Add("tint-cm", l, "correct", 3, 0.75)
	}
	acc.Add("cot", "ben", "correct", 2, 0.25)
	p := Pivot("x", "d", acc, nil, []string{"strategy"}, []string{"language"}, []string{"rate"}, []string{"ben"})
	if !slices.Equal(p.Header, []string{"strategy", "ben", "asm"}) || p.Description != "d" {
		t.Errorf("column order %v", p.Header)
	}
	// The columns derive from the source's: keys as declared, values with
	// the source's type and kind, an int column with a missing cell as
	// Float (its NaN).
	if c := p.Columns(); len(c) != 3 || c[0] != acc.Cols[0] || c[1].Kind != KindRate || c[1].Description != "rate where language = ben (k / n)" {
		t.Errorf("pivot columns %v", c)
	}
	k := Pivot("x", "", acc, nil, []string{"strategy"}, []string{"language"}, []string{"k"}, []string{"ben"})
	if c := k.Columns(); c[1].Type != Int || c[2].Type != Float || c[2].Kind != KindCount || !math.IsNaN(k.Num(k.Rows[2], "asm")) {
		t.Errorf("pivot of counts %v %v", c, k.Rows)
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
	const english, multilingual = 0, 1 // the test study's marks: its two abstention rules
	var rows []score.Row
	for i := range 4 {
		rows = append(rows, row("m", "eng", "english", "qa", "clean", strconv.Itoa(i), i < 3))
		r := row("m", "eng", "english", "qa", "hi", strconv.Itoa(i), i < 1)
		r.Marks.Set(multilingual, i == 1) // a Hindi "I don't know": not an English abstention
		rows = append(rows, r)
	}
	alt := Alternative{Name: "multilingual_abstain", Measure: "hallucination",
		Base: func(r *score.Row) bool { return !r.Correct && !r.Marks.Has(english) }, Of: func(r *score.Row) bool { return !r.Correct && !r.Marks.Has(multilingual) }}
	claim := Claim{Name: "hi raises hallucination", Measure: "hallucination", Eval: func(rows []*score.Row, v func(*score.Row) bool) Outcome {
		return Effect(RateDiff(rows, v, func(r *score.Row) bool { return r.Key.Condition == "hi" }, func(r *score.Row) bool { return r.Key.Condition == "clean" }))
	}}
	other := Claim{Name: "another measure", Eval: func([]*score.Row, func(*score.Row) bool) Outcome { return Effect(1) }}
	c := Conclusions([]Claim{claim, other}, []Alternative{alt}, rows)
	// The claim on a measure no alternative changes has one row, (none).
	if len(c.Rows) != 2 || c.Str(c.Rows[1], "alternative") != NoAlternative || c.Num(c.Rows[1], "effect_alt") != 1 || c.Num(c.Rows[0], "n") != 8 || c.Num(c.Rows[0], "effect") != 0.5 || c.Num(c.Rows[0], "effect_alt") != 0.25 || c.Rows[0][c.Col("holds")] != true || c.Rows[0][c.Col("holds_alt")] != true {
		t.Errorf("conclusions %v", c.Rows)
	}
}

// Conclusions' rows come claim by claim, each claim's models in sorted
// order, whatever the rows' order; each claim is evaluated on its model's
// rows alone, and a claim limited to some models has no row for others.
func TestConclusionsOrder(t *testing.T) {
	var rows []score.Row
	for i, m := range []string{"z", "a", "m", "z", "a", "z"} { // z: 3 answers, a: 2, m: 1
		rows = append(rows, row(m, "eng", "english", "qa", "", strconv.Itoa(i), true))
	}
	count := func(rs []*score.Row, _ func(*score.Row) bool) Outcome { return Effect(float64(len(rs))) }
	claims := []Claim{{Name: "first", Eval: count}, {Name: "second", Eval: count, Models: func(m string) bool { return m != "m" }}}
	c := Conclusions(claims, nil, rows)
	want := []string{"first a 2", "first m 1", "first z 3", "second a 2", "second z 3"}
	var got []string
	for _, r := range c.Rows {
		got = append(got, fmt.Sprintf("%s %s %v", c.Str(r, "claim"), c.Str(r, "model"), c.Num(r, "effect")))
	}
	if !slices.Equal(got, want) {
		t.Errorf("conclusions\n%q\nwant\n%q", got, want)
	}
}

// A claim of significance holds only when its effect is in the claimed
// direction and its test's p is below alpha: McNemar's exact p on k
// discordant pairs all one way is 2·(1/2)^k (k = 1: p = 1; k = 5:
// 0.0625; k = 6: 0.03125; k = 9: 0.00390625).
func TestConclusionsSignificance(t *testing.T) {
	a := func(r *score.Row) bool { return r.Key.Strategy == "tint" }
	b := func(r *score.Row) bool { return r.Key.Strategy == "base" }
	item := func(r *score.Row) string { return r.Key.Language + "/" + r.Key.Item }
	build := func(onlyA, onlyB, both int) []score.Row {
		var rows []score.Row
		for i := range 10 {
			ra, rb := i < onlyA || (i >= onlyA+onlyB && i < onlyA+onlyB+both), i >= onlyA && i < onlyA+onlyB+both
			rows = append(rows, row("m", "hin", "native", "tint", "", strconv.Itoa(i), ra), row("m", "hin", "native", "base", "", strconv.Itoa(i), rb))
		}
		return rows
	}
	cases := []struct {
		name               string
		onlyA, onlyB, both int
		significant        bool
		effect, p          float64
		holds              bool
	}{
		{"one discordant pair: p = 1, not significant", 1, 0, 0, true, 0.1, 1, false},
		{"the same without a claim of significance", 1, 0, 0, false, 0.1, 1, true},
		{"five one way: p = 0.0625", 5, 0, 2, true, 0.5, 0.0625, false},
		{"six one way: p = 0.03125", 6, 0, 2, true, 0.6, 0.03125, true},
		{"nine one way: p = 2^-8", 9, 0, 0, true, 0.9, 0.00390625, true},
		{"significant the wrong way", 0, 6, 0, true, -0.6, 0.03125, false},
		{"no difference", 2, 2, 3, false, 0, 1, false},
	}
	for _, c := range cases {
		claim := PairedClaim("tint beats base", "", a, b, item, "language and item", c.significant)
		tb := Conclusions([]Claim{claim}, nil, build(c.onlyA, c.onlyB, c.both))
		if len(tb.Rows) != 1 {
			t.Fatalf("%s: rows %v", c.name, tb.Rows)
		}
		r := tb.Rows[0]
		if math.Abs(tb.Num(r, "effect")-c.effect) > 1e-12 || math.Abs(tb.Num(r, "p")-c.p) > 1e-12 || r[tb.Col("holds")] != c.holds ||
			r[tb.Col("holds_alt")] != c.holds || tb.Str(r, "alternative") != NoAlternative || tb.Num(r, "n") != 20 || r[tb.Col("significance")] != c.significant ||
			tb.Num(r, "alpha") != 0.05 || tb.Str(r, "test") != "McNemar exact, two-sided, paired by language and item" {
			t.Errorf("%s: %v", c.name, r)
		}
		// Six one way of ten pairs: the Wald interval 0.6 ± 1.96·√(6 − 36/10)/10.
		if c.onlyA == 6 && c.onlyB == 0 {
			half := 1.959963984540054 * math.Sqrt(2.4) / 10
			if math.Abs(tb.Num(r, "effect_lo")-(0.6-half)) > 1e-9 || math.Abs(tb.Num(r, "effect_hi")-(0.6+half)) > 1e-9 {
				t.Errorf("%s: interval %v", c.name, r)
			}
		}
	}
	// A claim of significance without a test never holds; Models limits
	// the claim to the models it names.
	rows := append(build(9, 0, 0), row("other", "hin", "native", "tint", "", "0", true))
	bare := Claim{Name: "x", Significant: true, Eval: func([]*score.Row, func(*score.Row) bool) Outcome { return Effect(1) }, Models: func(m string) bool { return m == "m" }}
	tb := Conclusions([]Claim{bare}, nil, rows)
	if len(tb.Rows) != 1 || tb.Str(tb.Rows[0], "model") != "m" || tb.Rows[0][tb.Col("holds")] != false || !math.IsNaN(tb.Num(tb.Rows[0], "p")) {
		t.Errorf("untested claim of significance %v", tb.Rows)
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

// WriteCSV writes what encoding/csv's Writer writes for the cells as
// FormatCell gives them (numbers exact: appendExactFloat): fields needing quotes (commas, quotes, line
// breaks, a leading space of any script, \.), numbers of every kind,
// booleans, empty cells; on random rows drawn from them.
func TestWriteCSVAsEncodingCSV(t *testing.T) {
	cells := []any{"", "plain", "a,b", `say "hi"`, "line\nbreak", "cr\rhere", " lead", "\u00a0nbsp", "\u3000ideo", `\.`, `\.x`, "रोम",
		"trail ", "=SUM(A1)", 0, -7, 12345678901, 0.0, math.Copysign(0, -1), 1.5, 1e-9, -3.25e-5, 123456.789, math.NaN(), math.Inf(1), true, false, nil, int64(3), float32(2.5)}
	rng := rand.New(rand.NewPCG(7, 8))
	tb := &Table{Name: "t", Header: []string{"a", "b,c", " d", "e"}, Simulated: true}
	for range 2000 {
		row := make([]any, 4)
		for c := range row {
			row[c] = cells[rng.IntN(len(cells))]
		}
		tb.Rows = append(tb.Rows, row)
	}
	var got bytes.Buffer
	if err := tb.WriteCSV(&got); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	cw := csv.NewWriter(&want)
	cw.Write(append([]string{"simulated"}, tb.Header...))
	for _, r := range tb.Rows {
		rec := []string{"true"}
		for _, v := range r {
			if x, ok := v.(float64); ok {
				rec = append(rec, string(appendExactFloat(nil, x)))
			} else {
				rec = append(rec, FormatCell(v))
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	if got.String() != want.String() {
		g, w := strings.Split(got.String(), "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("line %d: %q, encoding/csv's %q", i+1, g[i], w[i])
			}
		}
		t.Fatalf("%d lines, encoding/csv's %d", len(g), len(w))
	}
}

// The CSV holds every number exactly: each numeric cell parses back to
// the float64 the table holds, where the Markdown and LaTeX views keep
// their rounding.
func TestCSVNumbersAreExact(t *testing.T) {
	for _, tc := range []struct {
		v        float64
		markdown string // the Markdown view's text
	}{
		{0.38658150076225317, "0.386582"},
		{1.0 / 3, "0.333333"},
		{2619, "2619.000000"},
		{-0.1, "-0.100000"},
		{1.86e-9, "1.86e-09"},
		{3.4694469519536142e-18, "3.46945e-18"},
		{1e-4, "0.000100"},
		{123456789.123456789, "123456789.123457"},
		{1e22, "10000000000000000000000.000000"},
		{math.MaxFloat64, strconv.FormatFloat(math.MaxFloat64, 'f', 6, 64)},
		{math.SmallestNonzeroFloat64, "4.94066e-324"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{math.Copysign(0, -1), "0"},
	} {
		tb := New("exact", "", Key("rate"))
		tb.Add(tc.v)
		var b strings.Builder
		if err := tb.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("%g: %v %q", tc.v, err, b.String())
		}
		cell := recs[1][1]
		got, err := strconv.ParseFloat(cell, 64)
		if err != nil || got != tc.v || math.Signbit(got) != math.Signbit(tc.v) && tc.v != 0 {
			t.Errorf("%v: CSV cell %q reads back as %v (%v)", tc.v, cell, got, err)
		}
		if md := tb.Markdown(); !strings.Contains(md, "| "+tc.markdown+" |") {
			t.Errorf("%v: Markdown lost its rounding (%q):\n%s", tc.v, tc.markdown, md)
		}
		if want := latexCell(tc.v, FormatCell(tc.v)); !strings.Contains(tb.LaTeX(), want+` \\`) {
			t.Errorf("%v: LaTeX lost its rounding (%q):\n%s", tc.v, want, tb.LaTeX())
		}
	}
	tb := New("missing", "", Key("rate"))
	tb.Add(math.NaN())
	var b strings.Builder
	if err := tb.WriteCSV(&b); err != nil || b.String() != "simulated,rate\nfalse,\n" {
		t.Errorf("NaN: %q %v, want an empty cell", b.String(), err)
	}
}

// BenchmarkWriteCSV writes an answers-like table (text, verdicts, counts)
// with WriteCSV and with encoding/csv's Writer fed the same cells as
// strings: the figure that keeps appendCSVField.
func BenchmarkWriteCSV(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"hin", "native", "correct", "Paris", "पेरिस", "a longer free-text answer, with a comma", "json", "", "tiny-1b"}
	tb := &Table{Name: "answers"}
	for c := range 24 {
		tb.Header = append(tb.Header, "c"+strconv.Itoa(c))
	}
	for range 20000 {
		r := make([]any, len(tb.Header))
		for c := range r {
			switch c % 4 {
			case 0, 1:
				r[c] = words[rng.IntN(len(words))]
			case 2:
				r[c] = rng.IntN(2) == 0
			default:
				r[c] = rng.IntN(5000)
			}
		}
		tb.Rows = append(tb.Rows, r)
	}
	b.Run("WriteCSV", func(b *testing.B) {
		for b.Loop() {
			if err := tb.WriteCSV(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-csv", func(b *testing.B) {
		for b.Loop() {
			w := bufio.NewWriterSize(io.Discard, 1<<20)
			cw := csv.NewWriter(w)
			rec := append([]string{"simulated"}, tb.Header...)
			cw.Write(rec)
			for _, r := range tb.Rows {
				rec = append(rec[:0], "true")
				for _, v := range r {
					rec = append(rec, FormatCell(v))
				}
				cw.Write(rec)
			}
			cw.Flush()
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
