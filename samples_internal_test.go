package bhasha

import (
	"context"
	"path/filepath"
	"testing"
)

// A run with more answers than the report's bound gets a selection:
// every k-th answer for the explorer, the first ones for the workbook,
// each with the prompt and response of its own record, and the page
// knows the run's total.
func TestBoundedSamples(t *testing.T) {
	dir := t.TempDir()
	exp := Distractors("testdata/triviaqa/triviaqa_small.jsonl", Conditions("clean", "hi"), SampleItems(6))
	r, err := Run(context.Background(), exp, Out(filepath.Join(dir, "run")), CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	all, err := r.Samples()
	if err != nil {
		t.Fatal(err)
	}
	n := len(all)
	if n < 12 {
		t.Fatalf("%d samples", n)
	}
	for _, tc := range []struct {
		limit  int
		spread bool
		step   int
	}{{5, true, (n + 4) / 5}, {5, false, 1}, {n, true, 0}} {
		p, err := r.pageWithSamples(tc.limit, tc.spread)
		if err != nil {
			t.Fatal(err)
		}
		rows := p.Samples.Rows
		if tc.step == 0 { // all fit: every sample, no selection
			if len(rows) != n || p.SamplesTotal != 0 {
				t.Errorf("limit %d: %d rows, total %d; want all %d", tc.limit, len(rows), p.SamplesTotal, n)
			}
			continue
		}
		if p.SamplesTotal != n || p.SamplesEvery != tc.step || len(rows) > tc.limit || len(rows) == 0 {
			t.Errorf("limit %d spread %v: %d rows, total %d, every %d", tc.limit, tc.spread, len(rows), p.SamplesTotal, p.SamplesEvery)
			continue
		}
		for j, row := range rows {
			want := all[j*tc.step]
			col := func(name string) any { return row[p.Samples.Col(name)] }
			if col("item") != want.Item || col("condition") != want.Condition || col("prompt") != want.Prompt || col("response") != want.Response || want.Response == "" {
				t.Errorf("selected row %d is not sample %d: %v vs %+v", j, j*tc.step, row, want)
			}
		}
	}
}
