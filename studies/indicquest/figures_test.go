package indicquest

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/report/chart/charttest"
)

var update = flag.Bool("update", false, "rewrite the golden option files under testdata/report")

var table = charttest.Table

// golden is the golden file of a figure's option (testdata/report at the
// module's root).
func golden(name string) string { return filepath.Join("..", "..", "testdata", "report", name+".json") }

// Each figure's ECharts option is compared with its golden file (go test
// ./studies/indicquest -update rewrites them after a deliberate change);
// captions carry n and SIMULATED.
func TestFigureGoldens(t *testing.T) {
	dom := table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"},
		[]any{"m", "hin", "History", "judge", 3, 4, 0.75}, []any{"m", "hin", "*", "judge", 3, 4, 0.75}, []any{"m", "eng", "History", "judge", 2, 4, 0.5})
	qdom := table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"},
		[]any{"a", "hin", "*", "judge", 6, 10, 0.6}, []any{"a", "tam", "*", "judge", 4, 10, 0.4}, []any{"a", "hin", "*", "substring", 2, 10, 0.2},
		[]any{"a", "tam", "*", "substring", 2, 10, 0.2}, []any{"a", "hin", "History", "judge", 3, 4, 0.75},
		[]any{"b", "hin", "*", "judge", 5, 10, 0.5}, []any{"b", "tam", "*", "judge", 3, 10, 0.3}, []any{"b", "hin", "*", "substring", 5, 10, 0.5},
		[]any{"b", "tam", "*", "substring", 4, 10, 0.4}, []any{"*", "*", "*", "judge", 18, 40, 0.45})
	qrank := table("protocol_rankings", []string{"language", "a", "b", "cells", "kendall_tau", "p"},
		[]any{"*", "judge", "substring", 4, -0.333, 0.5}, []any{"hin", "judge", "substring", 2, -1.0, 0.3})
	quest := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"},
		[]any{"indicquest", "m", "hin", "native", "", "", "correct", 6, 10, 0.6}, []any{"indicquest", "m", "hin", "native", "", "", "substring", 4, 10, 0.4},
		[]any{"indicquest", "m", "hin", "native", "", "", "overlap", 4, 10, 0.4})
	cases := []struct {
		name string
		figs func() ([]chart.Figure, error)
	}{
		{"protocol_ranks", func() ([]chart.Figure, error) { return ProtocolRanks(qdom, qrank) }},
		{"domain_heatmap", func() ([]chart.Figure, error) { return DomainHeatmap(dom) }},
		{"protocols", func() ([]chart.Figure, error) { return ProtocolBars(quest) }},
	}
	for _, c := range cases {
		figs, err := c.figs()
		charttest.Golden(t, c.name, golden(c.name), *update, figs, err)
	}
}

// The domain heatmap is labelled, its colour scale beside the plot, from
// 0 to 1.
func TestDomainHeatmapReadsAsCaption(t *testing.T) {
	dom, err := DomainHeatmap(table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"},
		[]any{"m", "hin", "History", "judge", 3, 4, 0.75}, []any{"m", "eng", "History", "judge", 2, 4, 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	d := charttest.Option(t, dom[0])
	if vm := d["visualMap"].([]any)[0].(map[string]any); vm["right"] == nil || vm["min"] != 0.0 || vm["max"] != 1.0 || vm["calculable"] != true {
		t.Errorf("domain visualMap %v", vm)
	}
	if !strings.Contains(string(dom[0].Option), `"formatter":"0.75"`) {
		t.Errorf("domain cells unlabelled: %s", dom[0].Option)
	}
}
