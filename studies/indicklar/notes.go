package indicklar

import (
	"fmt"
	"maps"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// The notes below say why a table has no rows (Table.Note).

// formLanguages lists each form's languages, "native: ben, hin; english: eng".
func formLanguages(forms map[string]map[string]bool) string { return sets(forms, "%s: %s", "; ") }

// sets lists each set of m by key order, as format of its key and its
// members joined by ", ", joined by sep.
func sets(m map[string]map[string]bool, format, sep string) string {
	parts := make([]string, 0, len(m))
	for _, k := range study.SortedKeys(m) {
		parts = append(parts, fmt.Sprintf(format, k, strings.Join(study.SortedKeys(m[k]), ", ")))
	}
	return strings.Join(parts, sep)
}

// oneLanguageNote is the CLC tables' note when no form has two languages.
func oneLanguageNote(forms map[string]map[string]bool) string {
	langs := map[string]bool{}
	for _, ls := range forms {
		maps.Copy(langs, ls)
	}
	if len(langs) == 1 {
		return fmt.Sprintf("no language pairs: the run has one language (%s), and CLC compares two languages answering the same items", study.SortedKeys(langs)[0])
	}
	return "no language pairs: CLC compares two languages of the same form, and each form was asked in one language only (" + formLanguages(forms) + ")"
}

// noteCLC sets the CLC tables' notes when they are empty.
func noteCLC(o tables.Outcomes, pairs, means, overall *study.Table) {
	forms := map[string]map[string]bool{}
	for k := range o {
		put(forms, k[3], k[2], true)
	}
	note := "no answers"
	if len(o) > 0 {
		note = oneLanguageNote(forms)
		for _, ls := range forms {
			if len(ls) > 1 {
				note = "no language pairs: no model and strategy answered two languages of the same form (" + formLanguages(forms) + ")"
			}
		}
	}
	for _, t := range []*study.Table{pairs, means, overall} {
		if len(t.Rows) == 0 {
			t.Note = note
		}
	}
}

// noteCLCMatrix sets clc_matrix's note when it is empty, from the pairs
// it was built from and the reference strategy.
func noteCLCMatrix(t, pairs *study.Table, ref string) {
	if len(t.Rows) > 0 {
		return
	}
	if pairs.Note != "" {
		t.Note = pairs.Note
		return
	}
	forms := map[string]map[string]bool{}
	paired := map[string]bool{} // strategies with a pair inside one form
	for _, r := range pairs.Rows {
		for _, u := range []string{pairs.Str(r, "a"), pairs.Str(r, "b")} {
			l, f, _ := strings.Cut(u, "/")
			put(forms, f, l, true)
		}
		if pairs.Str(r, "scope") != "cross-form" {
			paired[pairs.Str(r, "strategy")] = true
		}
	}
	switch {
	case len(paired) == 0:
		t.Note = oneLanguageNote(forms)
	case !paired[ref]:
		t.Note = fmt.Sprintf("no language pairs of the reference strategy (%s), which the matrix sets above the diagonal", ref)
	default:
		t.Note = fmt.Sprintf("no strategy but the reference (%s) has language pairs: the matrix sets one below the diagonal against it", ref)
	}
}

// noteStrategyTests sets strategy_tests' note when it is empty.
func noteStrategyTests(t *study.Table, o tables.Outcomes, ref string) {
	if len(t.Rows) > 0 {
		return
	}
	others := map[string]bool{}
	for k := range o {
		if k[1] != ref {
			others[k[1]] = true
		}
	}
	if len(others) == 0 {
		t.Note = fmt.Sprintf("no gains: the run has no strategy but the reference (%s)", ref)
		return
	}
	t.Note = fmt.Sprintf("no gains: no strategy (%s) answered a model, language and form that the reference (%s) answered", strings.Join(study.SortedKeys(others), ", "), ref)
}

// noteFlipPoints sets flip_points' note when it is empty: keys are the
// reference's native answers outside English the table starts from.
func noteFlipPoints(t *study.Table, keys int, ref string) {
	switch {
	case len(t.Rows) > 0:
	case ref == "":
		t.Note = "no flip point: the run has no baseline (baseline or baseline-cands) for the paths to start from"
	case keys == 0:
		t.Note = fmt.Sprintf("no flip point: the reference strategy (%s) answered no native question outside English", ref)
	default:
		t.Note = fmt.Sprintf("no flip point: the run has neither TinT-CM answers (the strategy path: %s → TinT-CM → TinT-EN) nor code-mixed answers of %s (the input path: native → code-mixed → English)", ref, ref)
	}
}

// noteFamilyTests sets family_tests' note when it is empty.
func noteFamilyTests(t, fam *study.Table) {
	if len(t.Rows) > 0 {
		return
	}
	fs := map[string]bool{}
	for _, r := range fam.Rows {
		fs[fam.Str(r, "family")] = true
	}
	if len(fs) == 0 {
		t.Note = "no test: no answer in a language of a known family"
		return
	}
	t.Note = "no test: Indo-Aryan against Dravidian needs answers in languages of both families; this run's are " + strings.Join(study.SortedKeys(fs), ", ")
}

// noteFamilyGainTests sets family_gain_tests' note when it is empty.
func noteFamilyGainTests(t *study.Table, gains map[gainKey]map[string]float64, ref string) {
	if len(t.Rows) > 0 {
		return
	}
	reg := lang.New()
	fams := map[string]map[string]bool{} // the gains' languages by family
	for _, g := range gains {
		for c := range g {
			f := "unknown family"
			if l, ok := reg.Find(c); ok && l.Family != "" {
				f = string(l.Family)
			}
			put(fams, f, c, true)
		}
	}
	if len(fams) == 0 {
		t.Note = fmt.Sprintf("no gains: no strategy but the reference (%s) answered the reference's languages", ref)
		return
	}
	t.Note = "no test: Indo-Aryan against Dravidian needs gains in languages of both families; this run's are " + sets(fams, "%s (%s)", ", ") // "Germanic (eng), Indo-Aryan (hin)"
}

// put sets m[k][v] to w, m[k] made when m has none.
func put[K, V comparable, W any](m map[K]map[V]W, k K, v V, w W) {
	if m[k] == nil {
		m[k] = map[V]W{}
	}
	m[k][v] = w
}
