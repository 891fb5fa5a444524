package bhasha

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
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

// Every common field of an answer (score.Head, score.Tail) has its
// reader from a Sample, and a samples table of hand-built samples (no
// schema) holds the common fields and the extras, every cell set.
func TestSampleReaders(t *testing.T) {
	for _, f := range append(score.Head(), score.Tail()...) {
		if _, ok := sampleReader(f.Name); !ok {
			t.Errorf("no Sample reader for the common field %s", f.Name)
		}
	}
	tb := samplesTable([]Sample{{Model: "m", Item: "1", Answer: "a", Normalized: "a", Chosen: -1, Prompt: "p", Response: "r", Simulated: true}})
	want := len(score.Head()) + len(score.Tail()) + len(sampleExtras())
	if len(tb.Header) != want || len(tb.Rows) != 1 {
		t.Fatalf("header %q, %d rows", tb.Header, len(tb.Rows))
	}
	for c, v := range tb.Rows[0] {
		if v == nil {
			t.Errorf("column %s: no value", tb.Header[c])
		}
	}
	if tb.Rows[0][tb.Col("prediction")] != "a" || tb.Rows[0][tb.Col("response")] != "r" || tb.Rows[0][tb.Col("simulated")] != true {
		t.Errorf("row %v", tb.Rows[0])
	}
}
