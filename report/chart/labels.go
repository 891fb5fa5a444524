package chart

import (
	"cmp"
	"math"
	"slices"
	"unicode/utf8"
)

// The plot PlaceLabels places labels on, smaller than the report's.
const (
	labelW, labelH = 780.0, 320.0
	labelFont      = 12
)

type rect struct{ x, y, w, h float64 }

func (a rect) overlaps(b rect) bool {
	return a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h
}

// labelRect is where ECharts draws an n-character label at pos of a point of radius r.
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

// PlaceLabels places the label of each point of the series of o whose
// label shows right, left, above or below it, where it overlaps no point
// nor label placed before it (the extremes of x and y first, then from
// left to right), and hides a label with no free place (an option edit:
// EditOption(o, PlaceLabels)).
func PlaceLabels(o map[string]any) {
	type pt struct {
		item       map[string]any
		x, y, r    float64
		nameLength int
	}
	var pts []*pt
	for _, s := range SeriesMaps(o) {
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
			pts = append(pts, &pt{item: item, x: x, y: y, r: rr, nameLength: utf8.RuneCountInString(name)})
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
	byX := func(a, b *pt) int { return cmp.Compare(a.x, b.x) }
	byY := func(a, b *pt) int { return cmp.Compare(a.y, b.y) }
	var first []*pt
	for _, best := range []*pt{slices.MaxFunc(pts, byY), slices.MinFunc(pts, byY), slices.MinFunc(pts, byX), slices.MaxFunc(pts, byX)} {
		if !slices.Contains(first, best) {
			first = append(first, best)
		}
	}
	rest := slices.SortedStableFunc(slices.Values(pts), byX)
	ordered := append(first, slices.DeleteFunc(rest, func(p *pt) bool { return slices.Contains(first, p) })...)
	var taken []rect
	for _, p := range pts { // every point is an obstacle
		x, y := px(p)
		taken = append(taken, rect{x - p.r, y - p.r, 2 * p.r, 2 * p.r})
	}
next:
	for _, p := range ordered {
		x, y := px(p)
		for _, pos := range []string{"right", "left", "top", "bottom"} {
			lr := labelRect(pos, x, y, p.r, p.nameLength)
			if lr.x >= -40 && lr.x+lr.w <= labelW+120 && lr.y >= -10 && lr.y+lr.h <= labelH+10 && !slices.ContainsFunc(taken, lr.overlaps) {
				SubObject(p.item, "label")["position"] = pos
				taken = append(taken, lr)
				continue next
			}
		}
		SubObject(p.item, "label")["show"] = false
	}
}
