package report

import (
	"context"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// WriteIndexXLSX writes the workbook of a set of runs (make demo's
// out/demo/report.xlsx): a README (SIMULATED when any run was), an
// "experiments" sheet with each run's status and counts, links to its
// report and workbook (relative hyperlinks, so the folder can move) and
// what it is (Entry.About), then each run's Entry.Tables as sheets named
// "<run> <table>" (the table's own name, that of its CSV file) in the same
// layout as a run's own workbook. A name over Excel's 31 characters is
// shortened (runSheet) and the README lists it with its run and table.
func WriteIndexXLSX(w io.Writer, title string, entries []Entry) error {
	f := excelize.NewFile()
	defer f.Close()
	st, err := newStyles(f)
	if err != nil {
		return err
	}
	lines := []string{title}
	if slices.ContainsFunc(entries, func(e Entry) bool { return e.Simulated }) {
		lines = append(lines, "SIMULATED: these answers came from Bhasha's simulated models, not from a real LLM.")
	}
	lines = append(lines, "'experiments' lists every run with links to its HTML report and its own workbook (every table, the figures, the samples); the sheets after it are each run's headline tables.")
	if err := startReadme(f, st, lines); err != nil {
		return err
	}
	used := map[string]bool{readme: true}
	idx := sheetName("experiments", used)
	if _, err := f.NewSheet(idx); err != nil {
		return err
	}
	head := []string{"experiment", "simulated", "status", "records", "failed", "report", "workbook", "what it is"}
	f.SetSheetRow(idx, "A1", &head)
	f.SetCellStyle(idx, "A1", cellName(len(head), 1), st.header)
	for i, e := range entries {
		for c, v := range []any{e.Name, e.Simulated, e.Status, e.Records, e.Failed, e.Report, e.Workbook, e.About} {
			if err := setCell(f, idx, c+1, i+2, v, "manifest.json", st); err != nil {
				return err
			}
		}
		for c, link := range []string{e.Report, e.Workbook} {
			if err := f.SetCellHyperLink(idx, cellName(6+c, i+2), link, "External"); err != nil {
				return fmt.Errorf("link to %s: %w", link, err)
			}
		}
	}
	st.log.apply(f, idx, st.changed)
	f.SetColWidth(idx, "A", "A", 28)
	f.SetColWidth(idx, "F", "G", 40)
	f.SetColWidth(idx, "H", "H", 80)
	f.SetPanes(idx, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"})
	streamed := map[string]bool{} // the tables' sheets, written with excelize's StreamWriter
	var renamed []string          // the README's lines on the shortened names
	for _, e := range entries {
		for _, t := range e.Tables {
			name := runSheet(e.Name, t.Name, used)
			if name != e.Name+" "+t.Name {
				renamed = append(renamed, fmt.Sprintf("'%s' is run %s's table %s (its tables/%s.csv).", name, e.Name, t.Name, tables.FileName(t.Name)))
			}
			streamed[name] = true
			if _, err := writeTable(context.Background(), f, name, t.Held(), st, nil); err != nil {
				return fmt.Errorf("sheet %s: %w", name, err)
			}
		}
	}
	if len(renamed) > 0 {
		renamed = append([]string{"Sheet names are at most 31 characters (Excel's limit); these are shortened:"}, renamed...)
	}
	if err := endReadme(f, st, len(lines), renamed); err != nil {
		return err
	}
	return writeWorkbook(f, w, streamed)
}

// runSheet is an unused sheet name for run's table: "<run> <table>", the
// run's name (or both) cut to fit Excel's 31 characters.
func runSheet(run, table string, used map[string]bool) string {
	full := run + " " + table
	if utf8.RuneCountInString(full) <= 31 {
		return sheetName(full, used)
	}
	if room := 31 - 1 - utf8.RuneCountInString(table); room >= 5 {
		return sheetName(string([]rune(run)[:room-1])+"… "+table, used)
	}
	return sheetName(string([]rune(full)[:30])+"…", used)
}
