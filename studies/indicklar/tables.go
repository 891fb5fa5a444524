package indicklar

import (
	"maps"
	"slices"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/study"
)

// KLAR builds IndicKLAR's own tables, clc to latency in report order; ref
// is the reference strategy ("" chooses: Reference), family names a
// strategy's family ("" for none).
func KLAR(rows []study.Row, ref string, family func(string) string) []*study.Table {
	o := tables.Index(rows) // built once, shared by the paired analyses
	ref = Reference(ref, rows)
	p, m, ov := clcFrom(o)
	fam := Families(rows)
	gaps := formGapsFrom(o)
	g := languageGains(o, ref, m) // shared by the language, family and strategy-family tables
	lat := tables.Latency(rows)
	lat.Mirrors = "IndicKLAR Table 6"
	return []*study.Table{p, m, ov, CLCMatrix(p, ref), strategyTestsFrom(o, ref, m), gaps, FormGapSummary(gaps), flipPointsFrom(o, ref), fam, FamilyTests(fam),
		familyGainTestsFrom(g, ref), Relations(rows), languageTestsFrom(g, ref), strategyFamiliesFrom(rows, g, ref, family), familySelectionFrom(g, ref, family), Tokenization(rows, ref), lat}
}

// Reference is the strategy the others are compared with: want (the
// experiment's reference:) when given, else Baseline (the paper's Fig. 4
// and A.5 compare with it) when it was run, else Obj-Baseline, else the
// first strategy in name order.
func Reference(want string, rows []study.Row) string {
	if want != "" {
		return want
	}
	has := map[string]bool{}
	for _, r := range rows {
		has[r.Key.Strategy] = true
	}
	if s := baselineReference("", has); s != "" || len(has) == 0 {
		return s
	}
	return slices.Min(slices.Collect(maps.Keys(has)))
}

// baselineReference is the baseline the tokenization and flip-point
// tables start from: ref when a baseline, else the first baseline run ("" none).
func baselineReference(ref string, has map[string]bool) string {
	if ref == string(Baseline) || ref == string(BaselineCands) {
		return ref
	}
	for _, s := range []string{string(Baseline), string(BaselineCands)} {
		if has[s] {
			return s
		}
	}
	return ""
}

// key declares a key column of IndicKLAR's tables: form, strategy,
// reference, measure and (strategy) family with what they hold here, the
// others as tables.Key.
func key(name string) study.Column {
	switch name {
	case "form":
		return study.TextColumn(name, "question form: native, code-mixed or english")
	case "strategy":
		return study.TextColumn(name, "prompting strategy (IndicKLAR), answer format (distractor study: qa, mc1), or empty")
	case "reference":
		return study.TextColumn(name, "the strategy compared against")
	case "family":
		return study.TextColumn(name, "the strategy family (1Step, 2Step, TinT, CoT)")
	case "measure":
		return study.TextColumn(name, "acc (the accuracy gain on the same native items) or clc (the gain in native CLC(L))")
	}
	return study.KeyColumn(name)
}

// keys are the key columns names (key), in order.
func keys(names ...string) []study.Column {
	cols := make([]study.Column, len(names))
	for i, n := range names {
		cols[i] = key(n)
	}
	return cols
}
