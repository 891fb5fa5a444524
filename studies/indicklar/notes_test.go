package indicklar

import (
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// A table left empty says why (Table.Note), and a table with rows says
// nothing: a one-language run has no language pairs, a run of the
// reference alone no gains, a run without TinT-CM or code-mixed
// questions no flip point.
func TestEmptyTablesSayWhy(t *testing.T) {
	var rows []score.Row
	for _, it := range []string{"a", "b", "c"} {
		rows = append(rows, row("m", "hin", "native", "baseline", "", it, it == "a"), row("m", "eng", "english", "baseline", "", it, true))
	}
	byName := func(ts []*tables.Table) map[string]*tables.Table {
		m := map[string]*tables.Table{}
		for _, t := range ts {
			m[t.Name] = t
		}
		return m
	}
	one := byName(KLAR(rows, "baseline", noFamily))
	for name, want := range map[string]string{
		"clc_mean":          "no language pairs: CLC compares two languages of the same form, and each form was asked in one language only (english: eng; native: hin)",
		"clc_overall":       "no language pairs",
		"clc_matrix":        "each form was asked in one language only",
		"strategy_tests":    "no gains: the run has no strategy but the reference (baseline)",
		"flip_points":       "neither TinT-CM answers",
		"family_tests":      "needs answers in languages of both families",
		"family_gain_tests": "no gains",
		"family_selection":  "no family variant to select",
	} {
		tb := one[name]
		if tb == nil || len(tb.Rows) != 0 || !strings.Contains(tb.Note, want) {
			t.Errorf("%s: %d rows, note %q, want one containing %q", name, len(tb.Rows), tb.Note, want)
		}
	}
	if n := one["clc"].Note; len(one["clc"].Rows) == 0 || n != "" {
		t.Errorf("clc has %d rows (the cross-form pairs) and the note %q", len(one["clc"].Rows), n)
	}
	// one language, one form
	hin := byName(KLAR(rows[:1], "baseline", noFamily))
	if n := hin["clc"].Note; n != "no language pairs: the run has one language (hin), and CLC compares two languages answering the same items" {
		t.Errorf("one-language clc note %q", n)
	}
	// two languages and TinT-CM: rows, no note
	for _, it := range []string{"a", "b", "c"} {
		rows = append(rows, row("m", "tam", "native", "baseline", "", it, it != "a"), row("m", "hin", "native", "tint-cm", "", it, true),
			row("m", "tam", "native", "tint-cm", "", it, true))
	}
	two := byName(KLAR(rows, "baseline", noFamily))
	for _, name := range []string{"clc_mean", "clc_matrix", "strategy_tests", "flip_points"} {
		if tb := two[name]; len(tb.Rows) == 0 || tb.Note != "" {
			t.Errorf("%s: %d rows, note %q", name, len(tb.Rows), tb.Note)
		}
	}
	if p := tables.Pivot("flip_points_wide", "", one["flip_points"], nil, []string{"model"}, []string{"step"}, []string{"flipped"}, nil); p.Note != one["flip_points"].Note {
		t.Errorf("the pivot of an empty table says %q", p.Note)
	}
}

func noFamily(string) string { return "" }
