package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// openpyxlRows counts, per sheet, the rows openpyxl's read-only mode
// (which sizes a sheet by its declared dimension) reads from the workbook
// at path with values in them, and the dimension it declares. It needs
// /usr/bin/python3 with openpyxl (Debian's python3-openpyxl); the test is
// skipped without it, unless BHASHA_REQUIRE_OFFICE is set.
func openpyxlRows(t *testing.T, path string) map[string][2]string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import openpyxl").Run(); err != nil {
		if os.Getenv("BHASHA_REQUIRE_OFFICE") != "" {
			t.Fatalf("/usr/bin/python3 with openpyxl is required (BHASHA_REQUIRE_OFFICE) but not installed: %v (apt-get install python3-openpyxl)", err)
		}
		t.Skipf("no /usr/bin/python3 with openpyxl (python3-openpyxl): %v", err)
	}
	const script = `import json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
out = {}
for ws in wb.worksheets:
    rows = sum(1 for r in ws.iter_rows(values_only=True) if any(v is not None for v in r))
    out[ws.title] = [str(rows), ws.calculate_dimension()]
print(json.dumps(out))`
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/bin/python3", "-c", script, path).Output()
	if err != nil {
		t.Fatalf("openpyxl on %s: %v", path, err)
	}
	var got map[string][2]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("openpyxl on %s: %v: %s", path, err, out)
	}
	return got
}

// excelizeRows counts, per sheet, the rows with values excelize reads.
func excelizeRows(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	for _, s := range f.GetSheetList() {
		rows, err := f.GetRows(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if slices.ContainsFunc(r, func(v string) bool { return v != "" }) {
				out[s]++
			}
		}
	}
	return out
}

// readersPage is a run's page with every kind of sheet: a table, a
// streamed table, figures, provenance and the samples.
func readersPage(t *testing.T) Page {
	acc := table("accuracy", []string{"model", "language", "rate"}, []any{"m", "hin", 0.5}, []any{"m", "tam", 0.25})
	samples := table("answers", []string{"model", "item", "prompt", "response"}, []any{"m", "1", "p", "r"}, []any{"m", "2", "p", "s"})
	long := table("latency", []string{"model", "ms"})
	for i := range StreamRows + 3 {
		long.Rows = append(long.Rows, []any{"m", float64(i)})
	}
	return Page{Title: "readers", Simulated: true, Notes: []string{"a note", "another note"},
		Tables: []*tables.Table{acc, long}, Samples: samples,
		Figures:    drawn(t, "workbook"),
		Provenance: [][2]string{{"experiment", "readers"}, {"models", "m"}, {"seed", "1"}}}
}

// Every sheet of a run's workbook and of the index workbook declares the
// range its cells fill, so that openpyxl's read-only mode (pandas'
// read_excel over a large workbook) reads every row excelize reads.
func TestWorkbookSheetsDeclareTheirRange(t *testing.T) {
	dir := t.TempDir()
	runBook, indexBook := filepath.Join(dir, "run.xlsx"), filepath.Join(dir, "index.xlsx")
	var b bytes.Buffer
	if err := WriteXLSX(&b, readersPage(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runBook, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	p := readersPage(t)
	entries := []Entry{{Name: "run-a", Status: "complete", Records: 4, Report: "run-a/report.html", Workbook: "run-a/report.xlsx", Tables: p.Tables[:1]},
		{Name: "run-b", Status: "partial", Records: 2, Failed: 1, Report: "run-b/report.html", Workbook: "run-b/report.xlsx", Tables: p.Tables[:1]}}
	if err := WriteIndexXLSX(&b, "index", entries); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(indexBook, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		sheets []string // sheets that must be there, beside the tables'
	}{
		{runBook, []string{"README", "accuracy", "latency", "figures", "provenance", "samples"}},
		{indexBook, []string{"README", "experiments", "run-a accuracy", "run-b accuracy"}},
	} {
		want := excelizeRows(t, tc.path)
		got := openpyxlRows(t, tc.path)
		for _, s := range tc.sheets {
			if want[s] < 2 {
				t.Errorf("%s: sheet %s has %d rows with values, want several", filepath.Base(tc.path), s, want[s])
			}
		}
		for s, n := range want {
			if g := got[s]; g[0] != itoa(n) {
				t.Errorf("%s: openpyxl (read-only) reads %s rows of sheet %s (dimension %s), excelize %d", filepath.Base(tc.path), g[0], s, g[1], n)
			}
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The index workbook's sheets are named "<run> <table>" with the table's
// own name (its CSV's, flip_points_wide, not flip_points): a name over
// Excel's 31 characters is shortened in the run's part, never in the
// table's while it fits, and the README sheet lists every shortened name
// with its run and table.
func TestIndexSheetsNameTheirTables(t *testing.T) {
	tb := func(name string) *tables.Table { return table(name, []string{"model", "rate"}, []any{"m", 0.5}) }
	entries := []Entry{
		{Name: "smoke-indicklar", Tables: []*tables.Table{tb("versus_paper"), tb("acc_clc_wide"), tb("tokenization_marks"), tb("flip_points_wide")}},
		{Name: "smoke-indicquest", Tables: []*tables.Table{tb("domains_wide")}},
		{Name: "smoke-mdi-truthfulqa", Tables: []*tables.Table{tb("versus_paper"), tb("conclusions"), tb("conditions_wide")}},
		{Name: "a-run-whose-name-is-long-enough", Tables: []*tables.Table{tb("a_table_name_of_thirty_two_chars"), tb("a_table_name_of_thirty_two_chars_too")}},
	}
	var b bytes.Buffer
	if err := WriteIndexXLSX(&b, "index", entries); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()[2:] // after README and experiments
	readme, err := f.GetRows("README")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range readme {
		lines = append(lines, strings.Join(r, " "))
	}
	i := 0
	for _, e := range entries {
		for _, tab := range e.Tables {
			if i >= len(sheets) {
				t.Fatalf("%d sheets, want one per table: %q", len(sheets), sheets)
			}
			name := sheets[i]
			i++
			if n := utf8.RuneCountInString(name); n > 31 {
				t.Errorf("sheet %q: %d characters", name, n)
			}
			full := e.Name + " " + tab.Name
			if name == full {
				continue
			}
			if len(full) <= 31 {
				t.Errorf("sheet %q holds %s's %s: the name fits whole", name, e.Name, tab.Name)
			}
			if len(tab.Name) <= 29 && !strings.HasSuffix(name, " "+tab.Name) {
				t.Errorf("sheet %q holds %s's %s: the table's name is cut", name, e.Name, tab.Name)
			}
			listed := slices.ContainsFunc(lines, func(l string) bool {
				return strings.Contains(l, "'"+name+"'") && strings.Contains(l, e.Name) && strings.Contains(l, "tables/"+tab.Name+".csv")
			})
			if !listed {
				t.Errorf("sheet %q (%s's %s) is not listed on the README sheet:\n%s", name, e.Name, tab.Name, strings.Join(lines, "\n"))
			}
		}
	}
	if i != len(sheets) {
		t.Errorf("%d sheets for %d tables", len(sheets), i)
	}
}
