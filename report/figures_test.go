package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// The report renders the figures it is handed; its tests hand it the
// built-in studies' figures as data (drawn), without importing a study.

func table(name string, header []string, rows ...[]any) *tables.Table {
	return &tables.Table{Name: name, Header: header, Rows: rows, Simulated: true}
}

// drawn are the built-in studies' figures of a fixture set, finished as
// a run's report has them: testdata/report/figures/<set>.jsonl, one
// Figure a line, which the studies' TestReportFixtures draws from the
// tables it names (and -update rewrites).
func drawn(t *testing.T, set string) []Figure {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "report", "figures", set+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var figs []Figure
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var f Figure
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		figs = append(figs, f)
	}
	return figs
}
