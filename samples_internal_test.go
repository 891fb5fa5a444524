package bhasha

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/internal/reportfiles"
)

// boundedRun is a small run of Distractors on TriviaQA (12 or more
// answers, two conditions), and its samples.
func boundedRun(t *testing.T) (*Results, []Sample) {
	t.Helper()
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
	if len(all) < 12 {
		t.Fatalf("%d samples", len(all))
	}
	return r, all
}

// A report stopped by its context leaves no file, partial or temporary,
// and the files already there as they were.
func TestReportCancelled(t *testing.T) {
	r, _ := boundedRun(t)
	dir := t.TempDir()
	html, xlsx := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.xlsx")
	if err := os.WriteFile(xlsx, []byte("the old workbook"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Cancelled before it starts, and cancelled in the middle of the
	// workbook's samples sheet (by its progress).
	for _, when := range []string{"before", "sheet samples"} {
		ctx, cancel := context.WithCancel(context.Background())
		if when == "before" {
			cancel()
		}
		err := r.writeReportWith(ctx, html, xlsx, withProgress(func(s ReportStep) {
			if strings.Contains(s.What, when) {
				cancel()
			}
		}))
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", when, err)
		}
		if b, err := os.ReadFile(xlsx); err != nil || string(b) != "the old workbook" {
			t.Errorf("%s: the workbook is %q… (%d bytes, %v), not as it was", when, b[:min(len(b), 16)], len(b), err)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != "report.xlsx" && !(when != "before" && e.Name() == "report.html") {
				t.Errorf("%s: %s left in the directory", when, e.Name())
			}
		}
	}
	// Not cancelled: both written, the progress told of each step's end.
	var ended []string
	if err := r.writeReportWith(context.Background(), html, xlsx, withProgress(func(s ReportStep) {
		if s.Final {
			ended = append(ended, s.What)
		}
	})); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(xlsx); string(b) == "the old workbook" {
		t.Error("the workbook was not replaced")
	}
	for _, step := range []string{"reading the records' prompts and responses", "HTML report", "sheet samples", "workbook file"} {
		if !slices.Contains(ended, step) {
			t.Errorf("progress: no end of %q in %q", step, ended)
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
	want := len(score.Head()) + len(score.Tail()) + len(reportfiles.SampleColumns())
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
