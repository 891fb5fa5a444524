package bhasha

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/scored"
)

// stamp is the HTML report's time of writing, the one part two reports of
// the same run differ in.
var stamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// workbookCells is every sheet's cells of the workbook at path.
func workbookCells(t *testing.T, path string) map[string][][]string {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][][]string{}
	for _, s := range f.GetSheetList() {
		if out[s], err = f.GetRows(s); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// sameReport fails t unless the HTML (its time of writing taken out) and
// every sheet of the workbook are those of the report named than.
func sameReport(t *testing.T, than, html, wantHTML string, book, wantBook map[string][][]string) {
	t.Helper()
	if html != wantHTML {
		t.Errorf("the HTML differs from %s", than)
	}
	for s, rows := range wantBook {
		if !slices.EqualFunc(rows, book[s], slices.Equal) {
			t.Errorf("sheet %s differs from %s", s, than)
		}
	}
	if len(book) != len(wantBook) {
		t.Errorf("%d sheets, want %d (%s)", len(book), len(wantBook), than)
	}
}

// A report that lets go of the rows (ReleaseRows) writes the same HTML
// and workbook as one that keeps them, with the samples sheet whole or
// cut; the Results then holds no rows, and reads them back, with the
// same tables and notes, when asked again. Without a store to read them
// back from it keeps them and writes the same files. ReleaseRows itself
// keeps the rows of a run of at most earlyRows answers.
func TestReleaseRows(t *testing.T) {
	cases := []struct {
		name      string
		sheetRows int
		noStore   bool // the store removed before the report
		small     bool // ReleaseRows, which keeps a small run's rows
	}{
		{"whole", 0, false, false},
		{"cut", 5, false, false},
		{"no store", 0, true, false},
		{"small run kept", 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := boundedRun(t)
			n, err := r.Scored()
			if err != nil {
				t.Fatal(err)
			}
			acc, err := r.Table("accuracy")
			if err != nil {
				t.Fatal(err)
			}
			notes := r.Notes()
			var opts []testOption
			if c.sheetRows > 0 {
				opts = append(opts, withSheetRows(c.sheetRows))
			}
			dir := t.TempDir()
			write := func(name string, opts ...testOption) (string, map[string][][]string) {
				html, xlsx := filepath.Join(dir, name+".html"), filepath.Join(dir, name+".xlsx")
				if err := r.writeReportWith(context.Background(), html, xlsx, opts...); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(html)
				if err != nil {
					t.Fatal(err)
				}
				return stamp.ReplaceAllString(string(b), "T"), workbookCells(t, xlsx)
			}
			keptHTML, keptBook := write("kept", opts...)
			if c.noStore {
				if err := os.Remove(filepath.Join(r.Dir(), scored.FileName)); err != nil {
					t.Fatal(err)
				}
			}
			release := releaseAbove(0)
			if c.small {
				release = withRelease()
			}
			goneHTML, goneBook := write("released", append(opts, release)...)
			sameReport(t, "the report that kept the rows", goneHTML, keptHTML, goneBook, keptBook)
			if held, want := r.a.Rows() != nil, c.noStore || c.small; held != want {
				t.Errorf("rows held after the report: %v, want %v", held, want)
			}
			if m, err := r.Scored(); err != nil || m != n {
				t.Errorf("scored again: %d (%v), want %d", m, err, n)
			}
			again, err := r.Table("accuracy")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(again.Rows, acc.Rows, slices.Equal) {
				t.Error("the accuracy table read back differs")
			}
			if got := r.Notes(); !slices.Equal(got, notes) {
				t.Errorf("notes read back:\n%q\nwant\n%q", got, notes)
			}
		})
	}
}

// A report that lets go of the rows fails, and leaves no file, when its
// store cannot be read back afterwards (cut short once the rows are let
// go), and stops with the context's error when cancelled while it reads
// the records' texts (the step told of its start).
func TestReleaseRowsFails(t *testing.T) {
	cases := []struct {
		name string
		step string // at whose start it happens
		do   func(t *testing.T, r *Results, cancel func())
		want func(err error) bool
	}{
		{"store cut short", "prompts and responses", func(t *testing.T, r *Results, _ func()) {
			if err := os.Truncate(filepath.Join(r.Dir(), scored.FileName), 100); err != nil {
				t.Error(err)
			}
		}, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "reading the scored answers back")
		}},
		{"cancelled", "prompts and responses", func(_ *testing.T, _ *Results, cancel func()) { cancel() },
			func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := boundedRun(t)
			if _, err := r.Scored(); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			html, xlsx := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.xlsx")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := false
			err := r.writeReportWith(ctx, html, xlsx, releaseAbove(0), withProgress(func(s ReportStep) {
				if strings.Contains(s.What, c.step) && !s.Final && !done {
					done = true
					c.do(t, r, cancel)
				}
			}))
			if !c.want(err) || !done {
				t.Errorf("%v (step %q reached: %v)", err, c.step, done)
			}
			for _, p := range []string{html, xlsx} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s: %v, want no file", p, err)
				}
			}
		})
	}
}
