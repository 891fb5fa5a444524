package tables

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/tables")

func TestColumnGroups(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string
		want   []ColumnGroup
	}{
		{"acc_clc_wide", []string{"model", "strategy", "hin_acc", "hin_clc", "tam_acc", "tam_clc"},
			[]ColumnGroup{{"hin", 2, 3, []string{"acc", "clc"}}, {"tam", 4, 5, []string{"acc", "clc"}}}},
		{"flip_points_wide", []string{"model", "language", "tint-cm_from", "tint-cm_flipped", "tint-cm_share", "tint-en_from", "tint-en_flipped"},
			[]ColumnGroup{{"tint-cm", 2, 4, []string{"from", "flipped", "share"}}, {"tint-en", 5, 6, []string{"from", "flipped"}}}},
		{"domains_wide", []string{"language", "domain", "*_judge", "*_overlap"}, []ColumnGroup{{"*", 2, 3, []string{"judge", "overlap"}}}},
		// a lone "es_long" (and the plain "clean") leave the header ungrouped
		{"conditions_wide", []string{"model", "strategy", "metric", "clean", "es", "es_long"}, nil},
		{"conditions_wide", []string{"model", "es_long", "hi_long"}, nil},
		// one language: hin_acc alone
		{"acc_clc_wide", []string{"model", "strategy", "hin_acc"}, nil},
		// only layout tables are grouped
		{"accuracy", []string{"model", "ci_lo", "ci_hi"}, nil},
		{"x_wide", []string{"a_b", "a_c"}, nil},
		{"x_wide", []string{"k", "a_", "a_c"}, nil},
	} {
		got := (&Table{Name: tc.name, Header: tc.header}).ColumnGroups()
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v: got %+v, want %+v", tc.name, tc.header, got, tc.want)
		}
	}
}

// Golden renderings of a layout table in the papers' layout: CSV,
// Markdown and LaTeX (go test ./analysis/tables -run TestLayoutGoldens -update).
func TestLayoutGoldens(t *testing.T) {
	nan := math.NaN()
	tb := &Table{Name: "acc_clc_wide", Simulated: true, Description: "accuracy and CLC(L) per language side by side, per model × strategy, native questions",
		Header: []string{"model", "strategy", "hin_acc", "hin_clc", "tam_acc", "tam_clc"},
		Rows:   [][]any{{"tiny-1b", "baseline", 0.25, 0.5, 0.125, nan}, {"tiny-1b", "tint-cm", 0.5, 0.3333333, 0.375, 0.6}}}
	var csv strings.Builder
	if err := tb.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct{ file, got string }{
		{"acc_clc_wide.csv", csv.String()}, {"acc_clc_wide.md", tb.Markdown()}, {"acc_clc_wide.tex", tb.LaTeX()},
	} {
		path := filepath.Join("..", "..", "testdata", "tables", g.file)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(g.got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to write it)", err)
		}
		if string(want) != g.got {
			t.Errorf("%s differs from its golden:\n%s", g.file, g.got)
		}
	}
}
