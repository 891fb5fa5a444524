// Package charttest helps the tests of figures: a simulated table from
// rows, a figure's option as an object, and a figure's option compared
// with its golden file.
package charttest

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
)

// Table is a simulated table of that name, header and rows.
func Table(name string, header []string, rows ...[]any) *tables.Table {
	return &tables.Table{Name: name, Header: header, Rows: rows, Simulated: true}
}

// Option is a figure's ECharts option as a JSON object, failing t when it
// is not one.
func Option(t *testing.T, f chart.Figure) map[string]any {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal(f.Option, &o); err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return o
}

// Named is the figure of that name, failing t when there is none.
func Named(t *testing.T, figs []chart.Figure, name string) chart.Figure {
	t.Helper()
	var names []string
	for _, f := range figs {
		if f.Name == name {
			return f
		}
		names = append(names, f.Name)
	}
	t.Fatalf("no figure %s among %q", name, names)
	return chart.Figure{}
}

// Golden compares the one figure of figs (drawn with err) with the golden
// file at path, its option indented: figs must be one figure whose
// caption carries a number and SIMULATED. With update the file is
// rewritten instead (go test -update after a deliberate change).
func Golden(t *testing.T, name, path string, update bool, figs []chart.Figure, err error) {
	t.Helper()
	if err != nil || len(figs) != 1 {
		t.Fatalf("%s: %d figures, %v", name, len(figs), err)
	}
	f := figs[0]
	if !strings.Contains(f.Caption, "SIMULATED") || !strings.ContainsAny(f.Caption, "0123456789") {
		t.Errorf("%s: caption %q lacks n or SIMULATED", name, f.Caption)
	}
	var pretty bytes.Buffer
	json.Indent(&pretty, f.Option, "", " ")
	pretty.WriteString("\n")
	if update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (go test -update writes it)", name, err)
	}
	if !bytes.Equal(want, pretty.Bytes()) {
		t.Errorf("%s: option differs from %s:\n%s", name, path, pretty.String())
	}
}
