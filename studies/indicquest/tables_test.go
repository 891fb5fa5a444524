package indicquest

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables/tablestest"

	"github.com/bhashalab/bhasha/analysis/score"
)

// The helpers every study's table tests share.
var (
	row  = tablestest.Row
	cell = tablestest.Cell
	num  = tablestest.Num
)

func TestJudgeAgreement(t *testing.T) {
	var rows []score.Row
	for i, v := range []struct{ judge, sub bool }{{true, true}, {true, false}, {false, false}, {false, false}, {true, true}, {false, true}} {
		r := row("m", "hin", "native", "answer", "", strconv.Itoa(i), v.judge)
		r.Verdict = score.VerdictIncorrect
		if v.judge {
			r.Verdict = score.VerdictCorrect
		}
		r.Marks.Set(MarkSubstring, v.sub)
		rows = append(rows, r)
	}
	unp := row("m", "hin", "native", "answer", "", "x", false)
	unp.Verdict = score.VerdictUnparsed
	rows = append(rows, unp)
	tb := JudgeAgreement(rows)
	sel := map[string]string{"criterion": "substring"}
	if cell(t, tb, sel, "n") != "6" || num(t, cell(t, tb, sel, "agree")) < 0.666 || num(t, cell(t, tb, sel, "agree")) > 0.667 ||
		num(t, cell(t, tb, sel, "kappa")) < 0.333 || num(t, cell(t, tb, sel, "kappa")) > 0.334 {
		t.Errorf("rows %v", tb.Rows)
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
		r.Domain = v.domain
		r.Marks.Set(MarkSubstring, v.sub)
		r.Marks.Set(MarkOverlap, v.ov)
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

// A run of one model has no model gap, and model_gaps says so.
func TestModelGapsNote(t *testing.T) {
	rows := []score.Row{row("m", "hin", "native", "", "", "a", true), row("m", "hin", "native", "", "", "b", false)}
	if mg := ModelGaps(rows); !strings.Contains(mg.Note, "the run has 1 model (m)") {
		t.Errorf("model_gaps note %q", mg.Note)
	}
}
