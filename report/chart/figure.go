// Package chart is the study-neutral chart kit the reports draw with: the
// Figure a study hands the report (its name, caption, the paper figure it
// mirrors, its n and whether it is SIMULATED, and its ECharts option), and
// the building blocks a study's figures are made of (the palette and the
// common options, interval bars with Wilson whiskers, heatmaps, point
// labels, a least-squares line, the figure saying why it has nothing to
// draw, and the words a caption counts with). Finish stamps every figure's
// n and SIMULATED under its title and makes its text visible, once, for
// the report.
//
// The package names no study, strategy, form or condition: a study's
// figures live in the study's own package and are built from these.
package chart

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Figure is one chart: its name, the caption a reader sees (ending with
// its n statement, and " — SIMULATED models" when the answers came from
// the simulator), the paper figure or table it mirrors, its n statement
// and whether it is simulated as fields (Finish stamps them under the
// title), and the ECharts option as JSON.
type Figure struct {
	Name    string
	Caption string
	Mirrors string // the paper figure or table it mirrors ("" when Bhasha's own)
	// N is the "n = …" statement the caption holds ("n = 8 answers",
	// "n = 3 language pairs per triangle"); "" when the figure states none.
	N         string
	Simulated bool // the answers came from the simulator
	Option    json.RawMessage
}

// SimulatedSuffix ends the caption of a figure drawn from simulated answers.
const SimulatedSuffix = " — SIMULATED models"

// Of is a figure drawn from table t: named name, mirroring mirrors, its
// caption caption (which holds the n statement n) followed by
// SimulatedSuffix when t is simulated, and Simulated as t's.
func Of(t *tables.Table, name, mirrors, caption, n string, o json.RawMessage) Figure {
	f := Figure{Name: name, Mirrors: mirrors, Caption: caption, N: n, Simulated: t.Simulated, Option: o}
	if f.Simulated {
		f.Caption += SimulatedSuffix
	}
	return f
}

// Finish readies figures for the report, in their order: each figure's n
// (Figure.N), and "SIMULATED models" when it is simulated (in the warning
// colour, bold), written under its title (ECharts' subtext), so that an
// exported SVG or PNG carries them without its caption, a chart with axes
// given room for the subtext above its plot; and every text in its option
// and caption (model, language, domain names from a run) shown as
// tables.Visible does, control characters as their pictures, so that the
// SVG drawn from it is XML. The figures passed are not changed; an option
// that is not a JSON object is an error naming its figure.
func Finish(figs []Figure) ([]Figure, error) {
	out := make([]Figure, len(figs))
	for i, f := range figs {
		var parts []string
		if f.N != "" {
			parts = append(parts, f.N)
		}
		if f.Simulated {
			parts = append(parts, "SIMULATED models")
		}
		var o map[string]any
		if err := json.Unmarshal(f.Option, &o); err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.Name, err)
		}
		if len(parts) > 0 {
			title := SubObject(o, "title")
			title["subtext"] = strings.Join(parts, " · ")
			if f.Simulated {
				title["subtextStyle"] = map[string]any{"color": "#D55E00", "fontWeight": "bold"}
			}
			if o["xAxis"] != nil && SubObject(o, "grid")["top"] == nil {
				SubObject(o, "grid")["top"] = 80 // room for the subtext above the plot
			}
			f.Option, _ = json.Marshal(o) // a map read from JSON
		}
		var err error
		if f.Option, err = VisibleOption(f.Option); err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.Name, err)
		}
		f.Caption = tables.Visible(f.Caption)
		out[i] = f
	}
	return out, nil
}

// VisibleOption is an ECharts option with every string in it (titles,
// labels, series and category names, tooltips) shown as tables.Visible
// does; the option itself when none changes.
func VisibleOption(o json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(o, &v); err != nil {
		return nil, err
	}
	changed := false
	var walk func(any) any
	walk = func(x any) any {
		switch y := x.(type) {
		case string:
			if s := tables.Visible(y); s != y {
				changed = true
				return s
			}
		case []any:
			for i := range y {
				y[i] = walk(y[i])
			}
		case map[string]any:
			for k := range y {
				y[k] = walk(y[k])
			}
		}
		return x
	}
	v = walk(v)
	if !changed {
		return o, nil
	}
	return json.Marshal(v)
}
