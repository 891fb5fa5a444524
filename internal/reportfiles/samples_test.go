package reportfiles_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/internal/reportfiles"
	"github.com/bhashalab/bhasha/internal/runanswers"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// boundedRun is a small run of Distractors on TriviaQA (12 or more
// answers, two conditions): its report, its answers and its samples
// (bhasha.Results.Samples).
func boundedRun(t *testing.T) (*reportfiles.Report, *runanswers.Answers, []bhasha.Sample) {
	t.Helper()
	dir := t.TempDir()
	exp := bhasha.Distractors("../../testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(6))
	res, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	all, err := res.Samples()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 12 {
		t.Fatalf("%d samples", len(all))
	}
	r, a := opened(t, res.Dir())
	return r, a, all
}

// opened is the run in dir as its report sees it: its experiment (the
// run's copy), manifest and answers.
func opened(t *testing.T, dir string) (*reportfiles.Report, *runanswers.Answers) {
	t.Helper()
	ctx := context.Background()
	m, err := run.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := experiment.Load(ctx, filepath.Join(dir, run.ExperimentFile), experiment.LoadOptions{Studies: studies.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	a := runanswers.New(ctx, dir, exp, m, nil, runanswers.Config{})
	return reportfiles.New(a, dir, exp, m), a
}

// A run with more answers than the explorer's bound gets a drawn
// selection: at most the bound, the same every time, as many from each
// model × language × strategy group as from the others (all of a smaller
// group), each flag of the answer schema both ways when the run has
// both, in table order, each with its own record's prompt and response;
// and the page says how many of how many it shows.
func TestExplorerPicks(t *testing.T) {
	r, a, all := boundedRun(t)
	n := len(all)
	answers, err := a.Table("answers")
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]reportfiles.SampleText, n)
	every := make([]int, n)
	for i := range every {
		every[i] = i
	}
	if err := r.ReadTexts(context.Background(), report.Options{}, r.RowKeys(every), func(i int, tx reportfiles.SampleText) error { texts[i] = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{5, 8, n} {
		picks, how := r.ExplorerPicks(limit)
		again, _ := r.ExplorerPicks(limit)
		if len(picks) != min(limit, n) || !slices.Equal(picks, again) {
			t.Errorf("limit %d: %d picks (want %d), the same twice: %v", limit, len(picks), min(limit, n), slices.Equal(picks, again))
		}
		groups := map[string]int{}
		for _, i := range picks {
			k := a.Rows()[i].Key
			groups[k.Model+"|"+k.Language+"|"+k.Strategy]++
		}
		lo, hi := n, 0
		for _, c := range groups {
			lo, hi = min(lo, c), max(hi, c)
		}
		if hi-lo > 1+2*len(a.Schema().Criteria()) { // the flags' picks come first, in any group
			t.Errorf("limit %d: groups %v are not balanced", limit, groups)
		}
		for _, f := range a.Schema().Fields() {
			if f.Type != score.FlagField {
				continue
			}
			var run, got [2]bool
			for i := range a.Rows() {
				run[b2i(f.Flag(&a.Rows()[i]))] = true
			}
			for _, i := range picks {
				got[b2i(f.Flag(&a.Rows()[i]))] = true
			}
			if run[0] && run[1] && (!got[0] || !got[1]) {
				t.Errorf("limit %d: flag %s is not shown both ways", limit, f.Name)
			}
		}
		picked := make([]reportfiles.SampleText, len(picks))
		for j, i := range picks {
			picked[j] = texts[i]
		}
		tb, total, note := r.ExplorerTable(answers, answers.Row, n, picks, r.RowKeys(picks), picked, how)
		if limit < n && (total != n || !strings.Contains(note, "model × language × strategy")) || limit >= n && total != 0 {
			t.Errorf("limit %d: total %d, how %q", limit, total, note)
		}
		last := -1
		for _, row := range tb.Rows {
			i := slices.IndexFunc(all, func(s bhasha.Sample) bool {
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
		p, _ := r.Page()
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
// (explorerPicks: one seeded, stratified draw), at most Options.SheetRows of it,
// in table order, each answer with its own record's text; the explorer
// shows the first of the same draw; the README says how many of how many
// answers the sheet holds and where all of them are.
func TestSamplesSheet(t *testing.T) {
	r, _, all := boundedRun(t)
	n := len(all)
	for _, limit := range []int{0, 5} {
		dir := t.TempDir()
		html, path := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.xlsx")
		if err := r.Write(context.Background(), html, path, reportfiles.Options{SheetRows: limit}); err != nil {
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
		picks, _ := r.ExplorerPicks(kept)
		if full, _ := r.ExplorerPicks(reportfiles.ExplorerSamples); !slices.Equal(picks, full[:len(picks)]) {
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
		// The explorer's samples (all of this run's, ExplorerSamples and
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

// The draw does not depend on the order the answers arrived in: with the
// rows reversed, the same answers are picked, in the same order.
func TestExplorerPicksIgnoreArrivalOrder(t *testing.T) {
	r, a, all := boundedRun(t)
	if _, err := a.Table("answers"); err != nil { // scores the rows
		t.Fatal(err)
	}
	keysOf := func(picks []int) []string {
		ks := make([]string, len(picks))
		for j, i := range picks {
			ks[j] = a.Rows()[i].Key.String()
		}
		return ks
	}
	for _, limit := range []int{3, len(all) / 2, len(all)} {
		picks, _ := r.ExplorerPicks(limit)
		want := keysOf(picks)
		slices.Reverse(a.Rows())
		again, _ := r.ExplorerPicks(limit)
		got := keysOf(again)
		slices.Reverse(a.Rows())
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: rows reversed, picks %v; were %v", limit, got, want)
		}
	}
}
