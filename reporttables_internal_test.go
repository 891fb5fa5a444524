package bhasha

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A report that writes the tables too (ReportTables) reads the records'
// texts while it builds them, and writes the same HTML, workbook and
// table files as WriteTables followed by WriteReport; fn gets every
// table, once written. Cancelled during that pass, it stops with the
// context's error and leaves no report file.
func TestReportTables(t *testing.T) {
	run, _ := boundedRun(t)
	dir := run.Dir()
	open := func() *Results {
		r, err := Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	csvs := func() map[string]string {
		files, err := filepath.Glob(filepath.Join(dir, "tables", "*.csv"))
		if err != nil || len(files) == 0 {
			t.Fatalf("tables: %v, %v", files, err)
		}
		out := map[string]string{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(f)] = string(b)
		}
		return out
	}
	if _, err := open().Table("accuracy"); err != nil { // the store made current: both reports read it
		t.Fatal(err)
	}
	out := t.TempDir()
	report := func(name string, r *Results, opts ...testOption) (string, map[string][][]string) {
		html, xlsx := filepath.Join(out, name+".html"), filepath.Join(out, name+".xlsx")
		if err := r.writeReportWith(context.Background(), html, xlsx, append(opts, releaseAbove(0))...); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		return stamp.ReplaceAllString(string(b), "T"), workbookCells(t, xlsx)
	}

	a := open()
	want, err := a.WriteTables()
	if err != nil {
		t.Fatal(err)
	}
	wantCSV := csvs()
	wantHTML, wantBook := report("apart", a)
	if err := os.RemoveAll(filepath.Join(dir, "tables")); err != nil {
		t.Fatal(err)
	}

	b := open()
	var got []*Table
	var mu sync.Mutex
	var events []string // each step's start and end, in order
	gotHTML, gotBook := report("together", b, withTables(func(ts []*Table) { got = ts }), withProgress(func(s ReportStep) {
		mu.Lock()
		defer mu.Unlock()
		if s.Final {
			events = append(events, "end "+s.What)
		} else if s.Done == 0 {
			events = append(events, "start "+s.What)
		}
	}))
	sameReport(t, "the report written after WriteTables", gotHTML, wantHTML, gotBook, wantBook)
	for name, body := range csvs() {
		if body != wantCSV[name] {
			t.Errorf("tables/%s differs from WriteTables'", name)
		}
		delete(wantCSV, name)
	}
	if len(wantCSV) > 0 {
		t.Errorf("tables not written: %v", wantCSV)
	}
	names := func(ts []*Table) (out []string) {
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	if !slices.Equal(names(got), names(want)) {
		t.Errorf("fn got tables %v, want %v", names(got), names(want))
	}
	texts := slices.Index(events, "start reading the records' prompts and responses")
	tablesEnd := slices.Index(events, "end tables")
	if texts < 0 || tablesEnd < 0 || texts > tablesEnd {
		t.Errorf("steps %q: the records' texts were not read while the tables were built", events)
	}

	t.Run("cancelled", func(t *testing.T) {
		c := open()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		html, xlsx := filepath.Join(out, "cancelled.html"), filepath.Join(out, "cancelled.xlsx")
		err := c.writeReportWith(ctx, html, xlsx, releaseAbove(0), withTables(func([]*Table) {}), withProgress(func(s ReportStep) {
			if strings.Contains(s.What, "prompts and responses") && !s.Final {
				cancel()
			}
		}))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%v, want the context's error", err)
		}
		for _, p := range []string{html, xlsx} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s: %v, want no file", p, err)
			}
		}
	})
}
