package bhasha

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/engine"
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
	hash := newKeyHash()
	want := r.rowIndex(hash)
	if err := r.readTexts(context.Background(), report.Options{}, want, hash, n, newPromptSet(), func(i int, tx sampleText) error { texts[i] = tx; return nil }); err != nil {
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
		sp, err := newTextSpill(len(r.rows))
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
		for _, i := range picks {
			if err := sp.put(i, texts[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := sp.flush(); err != nil {
			t.Fatal(err)
		}
		tb, total, note, err := r.explorerTable(answers, answers.Row, n, picks, r.rowKeys(picks), sp, how)
		if err != nil {
			t.Fatal(err)
		}
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

// The workbook's samples sheet streams every answer from the spill, in
// table order, with its record's text; a run with more answers than
// SheetRows keeps the first of them, and the sheet's last row and the
// README say how many were left out and where they all are.
func TestSamplesSheetLimit(t *testing.T) {
	r, all := boundedRun(t)
	n := len(all)
	for _, limit := range []int{0, 5} {
		path := filepath.Join(t.TempDir(), "report.xlsx")
		var opts []ReportOption
		if limit > 0 {
			opts = append(opts, SheetRows(limit))
		}
		if err := r.WriteReport(context.Background(), "", path, opts...); err != nil {
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
		header := rows[0]
		col := func(name string) int { return slices.Index(header, name) }
		for j := range kept {
			if rows[j+1][col("item")] != all[j].Item || rows[j+1][col("prompt")] != all[j].Prompt || rows[j+1][col("response")] != all[j].Response {
				t.Errorf("limit %d: row %d is not sample %d: %v", limit, j+1, j, rows[j+1])
			}
		}
		cut := fmt.Sprintf("%d more rows are in", n-kept)
		said := strings.Contains(fmt.Sprint(readme), fmt.Sprintf("keeps the first %d of %d rows", kept, n))
		switch {
		case limit == 0 && (len(rows) != n+1 || said):
			t.Errorf("no limit: %d rows for %d samples, README %q", len(rows), n, readme)
		case limit > 0 && (len(rows) != kept+2 || !strings.Contains(rows[kept+1][0], cut) || !said):
			t.Errorf("limit %d: %d rows, last %q, README %q", limit, len(rows), rows[len(rows)-1], readme)
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
		err := r.WriteReport(ctx, html, xlsx, ReportProgress(func(s ReportStep) {
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
	if err := r.WriteReport(context.Background(), html, xlsx, ReportProgress(func(s ReportStep) {
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

// The spill gives back every answer's texts exactly, read in any order:
// texts shorter than a block, across two blocks, longer than one, empty,
// prompts shared between answers (some put by their key alone, as the
// records' pass puts a prompt the spill holds), an answer put twice (the
// later text) and one never put (empty).
func TestTextSpillReadsBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 3000
	sp, err := newTextSpill(n)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	text := func(size int) string {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	prompts := []string{text(700), text(spillBlock + 123), "", text(5)}
	want := make([]sampleText, n)
	for i := range want {
		if i%7 == 3 { // an answer without a record of its own: never put
			continue
		}
		for range 1 + i%5/4 { // every fifth answer put twice: the later text stands
			size := []int{0, 40, 3000, 300 << 10}[rng.IntN(4)]
			p := prompts[rng.IntN(len(prompts))]
			want[i] = sampleText{prompt: p, response: text(size), err: []string{"", "HTTP 500"}[rng.IntN(2)]}
			put := want[i]
			put.key = sp.seen.textKey(p)
			if i%3 == 0 && sp.seen.has(put.key) { // a prompt the spill holds comes without its text
				put.prompt, put.known = "", true
			}
			if err := sp.put(i, put); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sp.flush(); err != nil {
		t.Fatal(err)
	}
	if sp.size < 4*spillBlock {
		t.Fatalf("spill of %d bytes: too small to test its blocks", sp.size)
	}
	for _, get := range []struct {
		name string
		fn   func(int) (sampleText, error)
	}{{"getAt", sp.getAt}, {"getRef", func(i int) (sampleText, error) {
		got, err := sp.getRef(i)
		if err != nil || got.promptRef == 0 {
			if want[i] != (sampleText{}) {
				t.Errorf("getRef answer %d: no prompt's place (%v)", i, err)
			}
			return got, err
		}
		if got.prompt != "" {
			t.Errorf("getRef answer %d: the prompt read (%d bytes), not its place", i, len(got.prompt))
		}
		got.prompt, err = sp.promptAt(got.promptRef)
		got.promptRef = 0
		return got, err
	}}} {
		for _, order := range [][]int{rng.Perm(n), rng.Perm(n)} {
			for _, i := range order {
				got, err := get.fn(i)
				if err != nil || got != want[i] {
					t.Fatalf("%s answer %d: %d/%d/%d bytes back (%v), want %d/%d/%d", get.name, i, len(got.prompt), len(got.response), len(got.err), err, len(want[i].prompt), len(want[i].response), len(want[i].err))
				}
			}
		}
	}
}

// A record's text has the prompt PromptText reads from its request,
// whatever the request's shape: a completion's prompt (escapes, Indic
// text), a chat's messages, both or neither, keys encoding/json would
// match, a prompt that is not a string.
func TestRecordTextPrompt(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","prompt":"Q: \u0930\u094b\u092e \"x\"\n\\A:","max_tokens":10}`,
		`{"model":"m","prompt":"plain"}`,
		`{"model":"m","prompt":""}`,
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"u\n"}]}`,
		`{"model":"m","prompt":"p","messages":[{"role":"user","content":"u"}]}`,
		`{"model":"m"}`,
		`{"model":"m","Prompt":"upper"}`,
		`{"model":"m","pr\u006fmpt":"escaped key"}`,
		`{"model":"m","prompt":["a","b"]}`,
		`{"model":"m","prompt":"bad \x escape"}`,
		`not json`,
	} {
		rec := engine.Record{Request: json.RawMessage(body)}
		got := recordText(&rec, newPromptSet())
		if want := PromptText(json.RawMessage(body)); got.prompt != want || got.known {
			t.Errorf("%s: prompt %q (known %v), PromptText's %q", body, got.prompt, got.known, want)
		}
	}
}
