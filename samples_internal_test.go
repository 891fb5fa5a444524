package bhasha

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/report"
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

// A run with more answers than the explorer's bound gets a drawn
// selection: at most the bound, the same every time, as many from each
// model × language × strategy group as from the others (all of a smaller
// group), each flag of the answer schema both ways when the run has
// both, in table order, each with its own record's prompt and response;
// and the page says how many of how many it shows.
func TestExplorerPicks(t *testing.T) {
	r, all := boundedRun(t)
	n := len(all)
	answers, err := r.Table("answers")
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]sampleText, n)
	every := make([]int, n)
	for i := range every {
		every[i] = i
	}
	if err := r.readTexts(context.Background(), report.Options{}, r.rowKeys(every), func(i int, tx sampleText) error { texts[i] = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{5, 8, n} {
		picks, how := r.explorerPicks(limit)
		again, _ := r.explorerPicks(limit)
		if len(picks) != min(limit, n) || !slices.Equal(picks, again) {
			t.Errorf("limit %d: %d picks (want %d), the same twice: %v", limit, len(picks), min(limit, n), slices.Equal(picks, again))
		}
		groups := map[string]int{}
		for _, i := range picks {
			k := r.rows[i].Key
			groups[k.Model+"|"+k.Language+"|"+k.Strategy]++
		}
		lo, hi := n, 0
		for _, c := range groups {
			lo, hi = min(lo, c), max(hi, c)
		}
		if hi-lo > 1+2*len(r.schema.Criteria()) { // the flags' picks come first, in any group
			t.Errorf("limit %d: groups %v are not balanced", limit, groups)
		}
		for _, f := range r.schema.Fields() {
			if f.Type != score.FlagField {
				continue
			}
			var run, got [2]bool
			for i := range r.rows {
				run[b2i(f.Flag(&r.rows[i]))] = true
			}
			for _, i := range picks {
				got[b2i(f.Flag(&r.rows[i]))] = true
			}
			if run[0] && run[1] && (!got[0] || !got[1]) {
				t.Errorf("limit %d: flag %s is not shown both ways", limit, f.Name)
			}
		}
		picked := make([]sampleText, len(picks))
		for j, i := range picks {
			picked[j] = texts[i]
		}
		tb, total, note := r.explorerTable(answers, answers.Row, n, picks, r.rowKeys(picks), picked, how)
		if limit < n && (total != n || !strings.Contains(note, "model × language × strategy")) || limit >= n && total != 0 {
			t.Errorf("limit %d: total %d, how %q", limit, total, note)
		}
		last := -1
		for _, row := range tb.Rows {
			i := slices.IndexFunc(all, func(s Sample) bool {
				return s.Item == row[tb.Col("item")] && s.Condition == row[tb.Col("condition")] && s.Model == row[tb.Col("model")] && s.Role == row[tb.Col("role")]
			})
			if i < 0 || i <= last {
				t.Fatalf("limit %d: row %v is not a later sample (after %d)", limit, row, last)
			}
			last = i
			if row[tb.Col("prompt")] != all[i].Prompt || row[tb.Col("response")] != all[i].Response || all[i].Response == "" {
				t.Errorf("limit %d: row %v is not sample %d's text", limit, row, i)
			}
		}
		var html bytes.Buffer
		p, _ := r.page()
		p.Samples, p.SamplesTotal, p.SamplesHow = tb, total, note
		if err := report.WriteHTML(&html, p); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("Showing %d of %d scored answers", len(tb.Rows), n)
		if limit >= n {
			want = fmt.Sprintf("All %d scored answers", n)
		}
		if !strings.Contains(html.String(), want) {
			t.Errorf("limit %d: the page does not say %q", limit, want)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The workbook's samples sheet holds the sample the HTML explorer draws
// (explorerPicks: one seeded, stratified draw), at most SheetRows of it,
// in table order, each answer with its own record's text; the explorer
// shows the first of the same draw; the README says how many of how many
// answers the sheet holds and where all of them are.
func TestSamplesSheet(t *testing.T) {
	r, all := boundedRun(t)
	n := len(all)
	for _, limit := range []int{0, 5} {
		dir := t.TempDir()
		html, path := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.xlsx")
		var opts []testOption
		if limit > 0 {
			opts = append(opts, withSheetRows(limit))
		}
		if err := r.writeReportWith(context.Background(), html, path, opts...); err != nil {
			t.Fatal(err)
		}
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := f.GetRows("samples")
		if err != nil {
			t.Fatal(err)
		}
		readme, _ := f.GetRows("README")
		f.Close()
		kept := n
		if limit > 0 {
			kept = limit
		}
		// The draw's first kept answers, in table order.
		picks, _ := r.explorerPicks(kept)
		if full, _ := r.explorerPicks(explorerSamples); !slices.Equal(picks, full[:len(picks)]) {
			t.Errorf("limit %d: the sheet's draw %v is not the explorer's first %v", limit, picks, full[:len(picks)])
		}
		slices.Sort(picks)
		if len(rows) != kept+1 {
			t.Fatalf("limit %d: %d rows for a sample of %d: %q", limit, len(rows), kept, rows)
		}
		header := rows[0]
		col := func(name string) int { return slices.Index(header, name) }
		sheet := map[string]bool{} // the sheet's answers, by model, item, condition and role
		for j, i := range picks {
			got, want := rows[j+1], all[i]
			if got[col("model")] != want.Model || got[col("item")] != want.Item || got[col("condition")] != want.Condition ||
				got[col("prompt")] != want.Prompt || got[col("response")] != want.Response {
				t.Errorf("limit %d: row %d is not sample %d: %v", limit, j+1, i, got)
			}
			sheet[got[col("model")]+"|"+got[col("item")]+"|"+got[col("condition")]+"|"+got[col("role")]] = true
		}
		note := fmt.Sprintf("holds a sample of %d of the %d scored answers", kept, n)
		if kept == n {
			note = fmt.Sprintf("holds all %d scored answers", n)
		}
		if text := fmt.Sprint(readme); !strings.Contains(text, note) || !strings.Contains(text, "tables/answers.csv and scored.parquet") {
			t.Errorf("limit %d: the README does not say %q and where every answer is: %q", limit, note, readme)
		}
		// The explorer's samples (all of this run's, explorerSamples and
		// its bytes allowing) are the sheet's when it holds every answer.
		if limit == 0 {
			b, err := os.ReadFile(html)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), fmt.Sprintf("All %d scored answers", n)) || len(sheet) != n {
				t.Errorf("the explorer and the sheet do not both hold all %d answers (sheet: %d)", n, len(sheet))
			}
		}
	}
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

// The samples sheet holds at most report.MaxSampleRows answers, fewer
// when SheetRows asks for fewer.
func TestSampleRowsBound(t *testing.T) {
	for _, c := range []struct{ sheetRows, want int }{
		{0, report.MaxSampleRows},
		{5, 5},
		{report.MaxSampleRows, report.MaxSampleRows},
		{report.MaxSampleRows + 1, report.MaxSampleRows},
		{1_000_000, report.MaxSampleRows},
	} {
		var cfg reportConfig
		withSheetRows(c.sheetRows)(&cfg)
		if got := cfg.sampleRows(); got != c.want {
			t.Errorf("withSheetRows(%d): %d rows, want %d", c.sheetRows, got, c.want)
		}
	}
	if report.MaxSampleRows != 50_000 {
		t.Errorf("report.MaxSampleRows is %d, want 50,000", report.MaxSampleRows)
	}
}
