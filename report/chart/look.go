package chart

import (
	"encoding/json"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// Palette is Okabe and Ito's colour-blind-safe set, the colours every
// figure (and the workbook's native charts) draws its series in.
func Palette() []string {
	return []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"}
}

// Chart is what every go-echarts chart offers for marshalling.
type Chart interface {
	Validate()
	JSON() map[string]interface{}
}

// Globals are the options every axis chart starts from: its title, an
// axis tooltip, the legend at the bottom, the palette and no animation.
func Globals(title string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithTitleOpts(opts.Title{Title: title}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Top: "bottom"}),
		charts.WithColorsOpts(opts.Colors(Palette())),
		charts.WithAnimation(false),
	}
}

// OptionOf is a chart's option as JSON, the series past the palette's
// colours told apart by a pattern or a symbol (Distinguish).
func OptionOf(c Chart) (json.RawMessage, error) {
	c.Validate()
	o, err := json.Marshal(c.JSON())
	if err != nil {
		return nil, err
	}
	return Distinguish(o)
}

// OptionWith marshals a chart's option (OptionOf) after edit changes what
// go-echarts has no field for (a series' silent flag).
func OptionWith(c Chart, edit func(map[string]any)) (json.RawMessage, error) {
	raw, err := OptionOf(c)
	if err != nil {
		return nil, err
	}
	return EditOption(raw, edit)
}

// EditOption applies f to an option as a JSON object and writes it again.
func EditOption(o json.RawMessage, f func(map[string]any)) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(o, &m); err != nil {
		return nil, err
	}
	f(m)
	return json.Marshal(m)
}

// SeriesMaps is an option's series as objects.
func SeriesMaps(m map[string]any) []map[string]any {
	list, _ := m["series"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, s := range list {
		if sm, ok := s.(map[string]any); ok {
			out = append(out, sm)
		}
	}
	return out
}

// SubObject is m[key] as an object, made (and set) when absent.
func SubObject(m map[string]any, key string) map[string]any {
	if s, ok := m[key].(map[string]any); ok {
		return s
	}
	s := map[string]any{}
	m[key] = s
	return s
}

// Distinguish tells apart the series that share a colour: the palette has
// len(Palette()) colours, so series i and i+8 share one; every series
// past the first round gets a pattern on its bars (stripes), a dashed
// line and another symbol on its lines and points. A series with its
// own colour is left as it is.
func Distinguish(o json.RawMessage) (json.RawMessage, error) {
	n := len(Palette())
	var m map[string]any
	if err := json.Unmarshal(o, &m); err != nil {
		return nil, err
	}
	ss := SeriesMaps(m)
	if len(ss) <= n {
		return o, nil
	}
	symbols := []string{"circle", "triangle", "diamond", "rect", "pin", "roundRect", "arrow"} // told apart by shape
	for i, s := range ss {
		round := i / n
		if round == 0 {
			continue
		}
		if is, ok := s["itemStyle"].(map[string]any); ok && is["color"] != nil {
			continue
		}
		switch s["type"] {
		case "bar":
			r := round - 1
			SubObject(s, "itemStyle")["decal"] = map[string]any{"symbol": "rect", "symbolSize": 1, "dashArrayX": []any{1, 0}, "dashArrayY": []any{3, 3 + 2*r},
				"rotation": math.Pi / 4 * float64(1-2*(r%2)), "color": "rgba(255,255,255,0.85)"}
		case "line", "radar":
			SubObject(s, "lineStyle")["type"] = []any{8, 3 * round}
			s["symbol"] = symbols[round%len(symbols)]
			s["symbolSize"] = 8
		case "scatter":
			s["symbol"] = symbols[round%len(symbols)]
		}
	}
	return json.Marshal(m)
}
