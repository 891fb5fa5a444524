package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// What a reader sees beyond what go-echarts writes: a count's noun in the
// number it needs, series beyond the palette told apart by a pattern or
// a symbol, heatmaps labelled cell by cell with their scale beside the
// plot, and a figure that has nothing to draw saying why.

// count writes n and its noun, plural unless n is 1 ("1 language", "4
// languages"; a noun ending in y takes ies: "3 strategies").
func counted(n int, noun string) string {
	return fmt.Sprintf("%d %s", n, pluralOf(n, noun))
}

// plural is noun in the number n needs; only its last word changes
// ("language pair" → "language pairs").
func pluralOf(n int, noun string) string {
	if n == 1 {
		return noun
	}
	switch {
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ay") && !strings.HasSuffix(noun, "ey"):
		return strings.TrimSuffix(noun, "y") + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"):
		return noun + "es"
	}
	return noun + "s"
}

// edit applies f to an option as a JSON object and writes it again.
func editOption(o json.RawMessage, f func(map[string]any)) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(o, &m); err != nil {
		return nil, err
	}
	f(m)
	return json.Marshal(m)
}

// seriesOf is an option's series as objects.
func seriesMaps(m map[string]any) []map[string]any {
	list, _ := m["series"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, s := range list {
		if sm, ok := s.(map[string]any); ok {
			out = append(out, sm)
		}
	}
	return out
}

// sub is m[key] as an object, made when absent.
func subObject(m map[string]any, key string) map[string]any {
	if s, ok := m[key].(map[string]any); ok {
		return s
	}
	s := map[string]any{}
	m[key] = s
	return s
}

// seriesSymbols are the marks told apart by shape, for the series past the
// palette's colours (and a scatter's every series).
var seriesSymbols = []string{"circle", "triangle", "diamond", "rect", "pin", "roundRect", "arrow"}

// stripes is the pattern on the bars of the series past the palette's
// colours: white diagonal stripes over the series' colour (the legend
// shows it too).
func stripeDecal(round int) map[string]any {
	return map[string]any{"symbol": "rect", "symbolSize": 1, "dashArrayX": []any{1, 0}, "dashArrayY": []any{3, 3 + 2*round},
		"rotation": math.Pi / 4 * float64(1-2*(round%2)), "color": "rgba(255,255,255,0.85)"}
}

// distinguish tells apart the series that share a colour: the palette has
// len(palette()) colours, so series i and i+8 share one; every series
// past the first round gets a pattern on its bars (stripes), a dashed
// line and another symbol on its lines and points. A series with its
// own colour is left as it is.
func distinguish(o json.RawMessage) (json.RawMessage, error) {
	n := len(palette())
	var m map[string]any
	if err := json.Unmarshal(o, &m); err != nil {
		return nil, err
	}
	ss := seriesMaps(m)
	if len(ss) <= n {
		return o, nil
	}
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
			subObject(s, "itemStyle")["decal"] = stripeDecal(round - 1)
		case "line", "radar":
			subObject(s, "lineStyle")["type"] = []any{8, 3 * round}
			s["symbol"] = seriesSymbols[round%len(seriesSymbols)]
			s["symbolSize"] = 8
		case "scatter":
			s["symbol"] = seriesSymbols[round%len(seriesSymbols)]
		}
	}
	return json.Marshal(m)
}

// hcell is one heatmap cell: its column, its row and its value (NaN: no
// value); a cell with a neutral label (CLC's diagonal, "1") is drawn grey
// with that label, outside the colour scale.
type hcell struct {
	x, y    string
	v       float64
	neutral string
}

// Heatmap colours: a sequential blue scale, grey for cells outside it.
var (
	heatBlues   = []string{"#f7fbff", "#6baed6", "#08306b"}
	heatNeutral = "#bdbdbd"
	heatMissing = "#eeeeee"
)

// heatmap draws cells over xs × ys, the first of ys at the top (as a
// table reads, and as IndicKLAR's Fig. 4 sets its upper triangle above
// the diagonal); every cell labelled with its value (2 decimals); the
// colour scale from lo to hi at the right of the plot, named, both ends
// written by its handles (which drag them); cells without a value
// ("n/a") and neutral cells grey, outside the scale.
func heatmap(title, name string, xs, ys []string, cells []hcell, lo, hi float64) (json.RawMessage, error) {
	hm := charts.NewHeatMap()
	hm.SetGlobalOptions(append(globals(title),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: xs}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: ys}))...)
	hm.SetXAxis(xs)
	hm.AddSeries(name, nil)
	o, err := optionOf(hm)
	if err != nil {
		return nil, err
	}
	size := 14
	switch k := max(len(xs), len(ys)); {
	case k > 14:
		size = 10
	case k > 8:
		size = 12
	}
	var onScale, off []any
	for _, c := range cells {
		switch {
		case c.neutral != "":
			off = append(off, map[string]any{"value": []any{c.x, c.y, 0}, "label": map[string]any{"formatter": c.neutral}, "itemStyle": map[string]any{"color": heatNeutral}})
		case math.IsNaN(c.v): // a value ECharts draws (no number draws no cell), its label "n/a"
			off = append(off, map[string]any{"value": []any{c.x, c.y, 0}, "label": map[string]any{"formatter": "n/a"}, "itemStyle": map[string]any{"color": heatMissing}})
		default:
			onScale = append(onScale, map[string]any{"value": []any{c.x, c.y, math.Round(c.v*1000) / 1000}, "label": map[string]any{"formatter": fmt.Sprintf("%.2f", c.v)}})
		}
	}
	return editOption(o, func(m map[string]any) {
		m["legend"] = map[string]any{"show": false}
		m["grid"] = map[string]any{"top": 80, "left": 20, "right": 120, "bottom": 30, "containLabel": true}
		if ya, ok := m["yAxis"].([]any); ok && len(ya) > 0 {
			ya[0].(map[string]any)["inverse"] = true
		}
		m["visualMap"] = []any{map[string]any{"type": "continuous", "seriesIndex": 0, "min": lo, "max": hi, "precision": 2,
			// calculable: its handles write the ends (and drag them); the text names the scale
			"calculable": true, "text": []any{name, ""}, "textGap": 14, "orient": "vertical", "right": 10, "top": "middle",
			"itemHeight": 200, "inRange": map[string]any{"color": heatBlues}}}
		label := map[string]any{"show": true, "fontSize": size}
		series := []any{map[string]any{"type": "heatmap", "name": name, "data": onScale, "label": label,
			"emphasis": map[string]any{"itemStyle": map[string]any{"borderColor": "#000", "borderWidth": 1}}}}
		if len(off) > 0 {
			series = append(series, map[string]any{"type": "heatmap", "name": "outside the colour scale", "data": off,
				"label": map[string]any{"show": true, "fontSize": size, "color": "#333"}, "tooltip": map[string]any{"show": false}})
		}
		m["series"] = series
	})
}

// scaleOf is the colour scale over values: from the least to the
// greatest (to 2 decimals, outward), at least 0.1 wide, within [0, 1];
// [0, 1] when none is a number.
func heatRange(values []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	lo, hi = math.Floor(lo*100+1e-9)/100, math.Ceil(hi*100-1e-9)/100
	if hi-lo < 0.1 {
		mid := (lo + hi) / 2
		lo = math.Max(0, math.Round((mid-0.05)*100)/100)
		hi = math.Min(1, lo+0.1)
		lo = math.Max(0, hi-0.1)
	}
	return lo, hi
}

// emptyFigure is a figure with nothing to draw: its title, and why
// (the table's note) written where the plot would be and in its caption.
func emptyFigure(t *tables.Table, name, mirrors, title, why, unit string) (Figure, error) {
	if why == "" {
		why = fmt.Sprintf("the table %s has no rows", t.Name)
	}
	o, err := json.Marshal(map[string]any{
		"animation": false,
		"title":     map[string]any{"text": title},
		"graphic": []any{map[string]any{"type": "text", "left": "center", "top": "middle",
			"style": map[string]any{"text": "Nothing to draw: " + wrapText(why, 90), "fontSize": 16, "lineHeight": 24, "fill": "#444", "textAlign": "center"}}},
	})
	if err != nil {
		return Figure{}, err
	}
	return Figure{Name: name, Mirrors: mirrors, Option: o,
		Caption: simulated(t, fmt.Sprintf("%s: nothing to draw: %s (n = 0 %s)", title, why, pluralOf(0, unit)))}, nil
}

// wrap breaks text into lines of at most width characters at spaces.
func wrapText(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// Point labels: a scatter's (or a line's) points are labelled with their
// names, each label placed right, left, above or below its point where it
// overlaps no label or point placed before it, the extremes (least and
// greatest x and y) first; a label with no free place is left to the
// tooltip. ECharts' own labelLayout does not move a scatter's labels
// apart, so the places are chosen here, on a plot of labelW × labelH
// pixels (smaller than the report's and the exports' plots, so that a
// label that fits here fits there).
const (
	labelW, labelH = 780.0, 320.0
	labelFont      = 12
)

type rect struct{ x, y, w, h float64 }

func (a rect) overlaps(b rect) bool {
	return a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h
}

// labelRect is where ECharts draws a label of n characters at pos of a
// point at (px, py) with a symbol of radius r.
func labelRect(pos string, px, py, r float64, n int) rect {
	w, h := float64(n)*0.62*labelFont+4, labelFont+4.0
	switch pos {
	case "right":
		return rect{px + r + 5, py - h/2, w, h}
	case "left":
		return rect{px - r - 5 - w, py - h/2, w, h}
	case "top":
		return rect{px - w/2, py - r - 5 - h, w, h}
	}
	return rect{px - w/2, py + r + 5, w, h} // bottom
}

// placeLabels sets each labelled point's label position (or hides it)
// in the series of o whose label shows.
func placeLabels(o map[string]any) {
	type pt struct {
		item  map[string]any
		x, y  float64
		name  string
		r     float64
		order int
	}
	var pts []*pt
	for _, s := range seriesMaps(o) {
		l, _ := s["label"].(map[string]any)
		if l == nil || l["show"] != true {
			continue
		}
		r := 6.0
		if sz, ok := s["symbolSize"].(float64); ok {
			r = sz / 2
		}
		data, _ := s["data"].([]any)
		for _, d := range data {
			item, _ := d.(map[string]any)
			v, _ := item["value"].([]any)
			if item == nil || len(v) < 2 {
				continue
			}
			x, okx := v[0].(float64)
			y, oky := v[1].(float64)
			if !okx || !oky {
				continue
			}
			rr := r
			if sz, ok := item["symbolSize"].(float64); ok {
				rr = sz / 2
			}
			name, _ := item["name"].(string)
			pts = append(pts, &pt{item: item, x: x, y: y, name: name, r: rr, order: len(pts)})
		}
	}
	if len(pts) == 0 {
		return
	}
	x0, x1, y0, y1 := 0.0, 0.0, 0.0, 1.0
	for _, p := range pts {
		x0, x1 = math.Min(x0, p.x), math.Max(x1, p.x)
		y0, y1 = math.Min(y0, p.y), math.Max(y1, p.y)
	}
	x1 = x0 + (x1-x0)*1.05 // ECharts rounds the axis up
	if x1 == x0 {
		x1 = x0 + 1
	}
	px := func(p *pt) (float64, float64) {
		return (p.x - x0) / (x1 - x0) * labelW, labelH - (p.y-y0)/(y1-y0)*labelH
	}
	// the extremes first, then the rest from left to right
	first := map[*pt]int{}
	for rank, better := range []func(a, b *pt) bool{
		func(a, b *pt) bool { return a.y > b.y }, func(a, b *pt) bool { return a.y < b.y },
		func(a, b *pt) bool { return a.x < b.x }, func(a, b *pt) bool { return a.x > b.x },
	} {
		best := pts[0]
		for _, p := range pts[1:] {
			if better(p, best) {
				best = p
			}
		}
		if _, ok := first[best]; !ok {
			first[best] = rank
		}
	}
	ordered := slices.Clone(pts)
	slices.SortStableFunc(ordered, func(a, b *pt) int {
		ra, oka := first[a]
		rb, okb := first[b]
		switch {
		case oka && okb:
			return ra - rb
		case oka:
			return -1
		case okb:
			return 1
		}
		return cmpFloat(a.x, b.x)
	})
	var taken []rect
	for _, p := range pts { // every point is an obstacle
		x, y := px(p)
		taken = append(taken, rect{x - p.r, y - p.r, 2 * p.r, 2 * p.r})
	}
	for _, p := range ordered {
		x, y := px(p)
		n := len([]rune(p.name))
		placed := false
		for _, pos := range []string{"right", "left", "top", "bottom"} {
			lr := labelRect(pos, x, y, p.r, n)
			free := lr.x >= -40 && lr.x+lr.w <= labelW+120 && lr.y >= -10 && lr.y+lr.h <= labelH+10
			for _, t := range taken {
				if free && lr.overlaps(t) {
					free = false
				}
			}
			if free {
				subObject(p.item, "label")["position"] = pos
				taken = append(taken, lr)
				placed = true
				break
			}
		}
		if !placed {
			subObject(p.item, "label")["show"] = false
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
