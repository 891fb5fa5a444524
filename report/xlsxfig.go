package report

import (
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/report/chart"
)

// echartsOption is the part of an ECharts option a workbook chart reads
// (encoding/json matches its fields' names to the option's keys).
type echartsOption struct {
	Title struct{ Text string }
	XAxis []struct {
		Type, Name string
		Data       []any
		Min, Max   any
	}
	YAxis []struct {
		Data     []any
		Min, Max any
	}
	Radar *struct {
		Indicator []struct{ Name string }
	}
	VisualMap json.RawMessage // one visual map or a list of them
	Series    []struct {
		Type, Name, Stack string
		XAxisIndex        int
		Data              []datum
	}
}

// datum is one series item: a bare value or {"name", "value"}.
type datum struct {
	Name  string
	Value any
}

func (d *datum) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		type object datum // its fields match "name" and "value"
		return json.Unmarshal(b, (*object)(d))
	}
	return json.Unmarshal(b, &d.Value)
}

type visualMap struct {
	Min, Max *float64
	InRange  struct{ Color []string }
}

// colourScale is the first visual map's colours and range (0–1 unsaid), else neutralScale.
func (o echartsOption) colourScale() (colours []string, lo, hi float64) {
	var maps []visualMap
	if json.Unmarshal(o.VisualMap, &maps) != nil {
		maps = make([]visualMap, 1)
		if json.Unmarshal(o.VisualMap, &maps[0]) != nil {
			return neutralScale, 0, 1
		}
	}
	if len(maps) == 0 || len(maps[0].InRange.Color) < 2 {
		return neutralScale, 0, 1
	}
	m := maps[0]
	return m.InRange.Color, *cmp.Or(m.Min, new(0.0)), *cmp.Or(m.Max, new(1.0))
}

// block is a figure's data as a sheet range (a header row, a row per
// category or x value) and the chart drawn from it.
type block struct {
	fig     Figure
	title   string // the chart's title (the figure's own)
	header  []string
	rows    [][]any
	kind    excelize.ChartType
	series  []int    // the value columns charted (indexes into header)
	scale   bool     // a heatmap: no chart, a colour scale over the values
	colours []string // the heatmap's colour scale over lo–hi
	lo, hi  float64
	lines   []bool   // a scatter's series drawn as lines
	spans   [][2]int // each scatter series' first and last row
	// the value axes' bounds the figure sets (nil: automatic)
	xRange, yRange [2]*float64
	// each charted series' 95% interval columns, lo and hi ({0, 0}: none; nil: no series has them)
	whiskerCols [][2]int
}

// addSeries adds a charted column name, vals[i] its value in row i.
func (b *block) addSeries(name string, vals []any) {
	b.header = append(b.header, name)
	b.series = append(b.series, len(b.header)-1)
	for i := range b.rows {
		var v any
		if i < len(vals) {
			v = cellValue(vals[i])
		}
		b.rows[i] = append(b.rows[i], v)
	}
}

// figureBlock lays a figure's option out as workbook data and the native
// chart mirroring it: bars as columns (whiskers as lo, hi columns and
// error bars), category lines as lines, value-axis lines and scatters as
// XY scatter, radar as radar, a heatmap as a colour-scaled grid. A
// Sankey has no counterpart (ok false).
func figureBlock(f Figure) (b block, ok bool, err error) {
	var o echartsOption
	if err := json.Unmarshal(f.Option, &o); err != nil {
		return block{}, false, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	if len(o.Series) == 0 {
		return block{}, false, nil
	}
	b.fig, b.title = f, cmp.Or(o.Title.Text, f.Name)
	switch typ := o.Series[0].Type; {
	case typ == "radar" && o.Radar != nil:
		b.header, b.kind = []string{"axis"}, excelize.Radar
		for _, ind := range o.Radar.Indicator {
			b.rows = append(b.rows, []any{ind.Name})
		}
		for _, se := range o.Series {
			for _, d := range se.Data {
				vals, _ := d.Value.([]any)
				b.addSeries(cmp.Or(d.Name, se.Name), vals)
			}
		}
		ok = true
	case typ == "heatmap" && len(o.XAxis) > 0 && len(o.YAxis) > 0:
		b.header, b.scale = []string{""}, true
		b.colours, b.lo, b.hi = o.colourScale()
		xs, ys := o.XAxis[0].Data, o.YAxis[0].Data
		col, row := map[string]int{}, map[string]int{}
		for i, x := range xs {
			b.header = append(b.header, fmt.Sprint(x))
			col[fmt.Sprint(x)] = i + 1
		}
		for i, y := range ys {
			r := make([]any, len(xs)+1)
			r[0] = fmt.Sprint(y)
			b.rows = append(b.rows, r)
			row[fmt.Sprint(y)] = i
		}
		for _, d := range o.Series[0].Data {
			if v, _ := d.Value.([]any); len(v) == 3 {
				c, okc := col[fmt.Sprint(v[0])]
				r, okr := row[fmt.Sprint(v[1])]
				if okc && okr {
					b.rows[r][c] = cellValue(v[2])
				}
			}
		}
		ok = true
	case (typ == "bar" || typ == "line") && len(o.XAxis) > 0 && o.XAxis[0].Type != "value" && o.XAxis[0].Type != "log":
		b.header, b.kind = []string{"category"}, excelize.Col
		switch {
		case typ == "line":
			b.kind = excelize.Line
		case o.Series[0].Stack != "":
			b.kind = excelize.ColStacked
		}
		for _, c := range o.XAxis[0].Data {
			b.rows = append(b.rows, []any{fmt.Sprint(c)})
		}
		for _, se := range o.Series {
			if se.XAxisIndex != 0 || se.Type != typ { // the whiskers' segments
				continue
			}
			vals := make([]any, len(se.Data))
			for i, d := range se.Data {
				vals[i] = d.Value
			}
			b.addSeries(se.Name, vals)
		}
		if typ == "bar" {
			b.addWhiskers(o)
		}
		ok = len(b.series) > 0
	case typ == "scatter" || typ == "line":
		// XY points: one x column and one y column per series, a row per point
		b.header, b.kind = []string{"point", "x"}, excelize.Scatter
		if len(o.XAxis) > 0 && o.XAxis[0].Name != "" {
			b.header[1] = o.XAxis[0].Name
		}
		for _, se := range o.Series {
			b.header = append(b.header, se.Name)
			b.series = append(b.series, len(b.header)-1)
			b.lines = append(b.lines, se.Type == "line")
			b.spans = append(b.spans, [2]int{len(b.rows), len(b.rows) - 1})
			for _, d := range se.Data {
				if xy, _ := d.Value.([]any); len(xy) == 2 {
					r := make([]any, len(o.Series)+2)
					r[0], r[1], r[len(b.header)-1] = d.Name, cellValue(xy[0]), cellValue(xy[1])
					b.rows = append(b.rows, r)
					b.spans[len(b.spans)-1][1] = len(b.rows) - 1
				}
			}
		}
		ok = len(b.rows) > 0
	}
	if len(o.YAxis) > 0 {
		b.yRange = [2]*float64{bound(o.YAxis[0].Min), bound(o.YAxis[0].Max)}
	}
	if b.kind == excelize.Scatter && len(o.XAxis) > 0 {
		b.xRange = [2]*float64{bound(o.XAxis[0].Min), bound(o.XAxis[0].Max)}
	}
	return b, ok, nil
}

// bound is an axis bound set as a number (nil for none or "dataMin").
func bound(v any) *float64 {
	if x, ok := v.(float64); ok {
		return &x
	}
	return nil
}

// cellValue is a series value as a cell's: "-" (no bar) as an empty cell.
func cellValue(v any) any {
	if s, ok := v.(string); ok && s == "-" {
		return nil
	}
	return v
}

// addWhiskers reads the bars' whiskers (chart.IntervalBars: vertical
// segments of a line series on the second x axis named as its bars) and
// adds each whiskered series' lo and hi columns.
func (b *block) addWhiskers(o echartsOption) {
	whiskers := make([][][2]float64, len(b.series)) // by series and row (nil, NaN: none)
	found := false
	point := func(d datum) (x, y float64, ok bool) {
		xy, _ := d.Value.([]any)
		if len(xy) != 2 {
			return 0, 0, false
		}
		x, okx := xy[0].(float64)
		y, oky := xy[1].(float64)
		return x, y, okx && oky
	}
	for _, se := range o.Series {
		if se.Type != "line" || se.XAxisIndex != 1 {
			continue
		}
		j := -1
		for k, c := range b.series {
			if b.header[c] == se.Name && whiskers[k] == nil {
				j = k
				break
			}
		}
		if j < 0 {
			continue
		}
		ds := se.Data
		iv := slices.Repeat([][2]float64{{math.NaN(), math.NaN()}}, len(b.rows))
		for i := 0; i+1 < len(ds); i++ {
			x0, y0, ok0 := point(ds[i])
			x1, y1, ok1 := point(ds[i+1])
			if !ok0 || !ok1 || x0 != x1 {
				continue
			}
			if c := int(math.Round(x0)); c >= 0 && c < len(iv) && math.Abs(x0-float64(c)) < 0.5 {
				iv[c] = [2]float64{math.Min(y0, y1), math.Max(y0, y1)}
				found = true
			}
			i++
		}
		whiskers[j] = iv
	}
	if !found {
		return
	}
	b.whiskerCols = make([][2]int, len(b.series))
	for j, iv := range whiskers {
		if iv == nil {
			continue
		}
		name := b.header[b.series[j]]
		b.header = append(b.header, name+" lo", name+" hi")
		b.whiskerCols[j] = [2]int{len(b.header) - 2, len(b.header) - 1}
		for i := range b.rows {
			var lo, hi any
			if !math.IsNaN(iv[i][0]) {
				lo, hi = iv[i][0], iv[i][1]
			}
			b.rows[i] = append(b.rows[i], lo, hi)
		}
	}
}

// figureChart is each figure's chart size.
var figureChart = excelize.ChartDimension{Width: 640, Height: 320}

// writeFigures writes the "figures" sheet: per figure its caption, its data and
// beside it its native chart, printed one page wide, no figure split over pages.
func writeFigures(f *excelize.File, sheet string, figs []Figure, simulated bool, st styleSet) error {
	var todo []block
	lastCol := 1                             // the last column printed
	widths := map[int]float64{1: firstWidth} // the columns' widths, in characters
	for _, fig := range figs {
		b, ok, err := figureBlock(fig)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		todo = append(todo, b)
		lastCol = max(lastCol, len(b.header))
		if !b.scale {
			end, _ := chartEnd(len(b.header)+2, 1, figureChart.Width, figureChart.Height)
			lastCol = max(lastCol, end)
		}
		for c := 1; c < len(b.header); c++ {
			widths[c+1] = max(widths[c+1], b.width(c))
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if _, err := f.NewSheet(sheet); err != nil {
		return err
	}
	if err := pageSetup(f, sheet); err != nil {
		return err
	}
	// Rows of Excel's default height in LibreOffice too: the anchors and
	// page breaks count on it.
	rowHeight, custom := lineHeight, true
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{DefaultRowHeight: &rowHeight, CustomHeight: &custom}); err != nil {
		return err
	}
	for c, w := range widths {
		f.SetColWidth(sheet, colName(c), colName(c), w)
	}
	page := pagePixels(widths, lastCol)
	errCol := lastCol + 2
	row, used := 1, 0.0 // used: of the printed page, in pixels
	lastRow := 1
	for _, b := range todo {
		fig := b.fig
		caption := fig.Caption
		if fig.Mirrors != "" {
			caption += " (mirrors " + fig.Mirrors + ")"
		}
		if err := f.SetCellStr(sheet, cellName(1, row), caption); err != nil {
			return err
		}
		head := row + 1
		height := lineHeight
		for c, h := range b.header {
			f.SetCellStr(sheet, cellName(c+1, head), h)
			height = max(height, textHeight(h, widths[c+1]))
		}
		f.SetCellStyle(sheet, cellName(1, head), cellName(len(b.header), head), st.header)
		f.SetRowHeight(sheet, head, height)
		for r, vals := range b.rows {
			for c, v := range vals {
				if v == nil {
					continue
				}
				if err := setCell(f, sheet, c+1, head+1+r, v, "tables/*.csv", st); err != nil {
					return err
				}
			}
		}
		last := head + len(b.rows)
		lastRow = max(lastRow, last)
		if first := 2; len(b.rows) > 0 { // the values (and whiskers) after the categories, or a scatter's x
			if b.kind == excelize.Scatter {
				first = 3
			}
			f.SetCellStyle(sheet, cellName(first, head+1), cellName(len(b.header), last), st.decimals)
		}
		blockRows := len(b.rows) + 2
		if b.scale && len(b.rows) > 0 {
			f.SetConditionalFormat(sheet, cellName(2, head+1)+":"+cellName(len(b.header), last), []excelize.ConditionalFormatOptions{colourScale(b.colours, b.lo, b.hi)})
		}
		need := float64(len(b.rows)) * rowPixels // the data, under the caption and header
		if !b.scale && len(b.rows) > 0 {
			rows, err := addFigureChart(f, sheet, b, head, last, errCol, simulated)
			if err != nil {
				return fmt.Errorf("chart of %s: %w", fig.Name, err)
			}
			lastRow = max(lastRow, rows)
			blockRows = max(blockRows, 18)
			need = max(need, float64(figureChart.Height))
		}
		// A figure that would run over the page's foot starts the next one.
		need += rowPixels + height*4/3
		if used > 0 && used+need > page {
			if err := f.InsertPageBreak(sheet, cellName(1, row)); err != nil {
				return err
			}
			used = 0
		}
		used += rowPixels + height*4/3 + float64(blockRows+1)*rowPixels
		lastRow = max(lastRow, head+blockRows) // the chart with a row or two to spare
		row = head + blockRows + 2
	}
	st.log.apply(f, sheet, st.changed)
	return printRange(f, sheet, lastCol, lastRow, 0)
}

// The figures sheet's first column, in characters, and a row's pixels.
const (
	firstWidth = 28.0
	rowPixels  = 20.0
)

// width is the width, in characters, block column c wants (a value
// column at most 16, a whisker bound 12).
func (b block) width(c int) float64 {
	most := 16.0
	for _, wc := range b.whiskerCols {
		if wc[0] > 0 && (c == wc[0] || c == wc[1]) {
			most = 12
		}
	}
	return math.Max(10, math.Min(most, float64(utf8.RuneCountInString(b.header[c])+2)))
}

// pagePixels is a printed page's height in the sheet's pixels: A4 or Letter landscape
// less the margins, over the scale fitting columns 1 to lastCol, less a twentieth.
func pagePixels(widths map[int]float64, lastCol int) float64 {
	const dpi = 96.0
	printW, printH := (11.0-2*0.4)*dpi, (8.27-2*0.6)*dpi
	px := 0.0
	for c := 1; c <= lastCol; c++ {
		if w, ok := widths[c]; ok {
			px += w*7 + 5 // Calibri 11's digit is 7 pixels wide, plus the padding
		} else {
			px += 64
		}
	}
	scale := min(1, printW/px)
	return 0.95 * printH / scale
}

// addFigureChart draws b's chart beside its data (rows head to last), its error
// bars' distances from column errCol on, and returns the last row it covers.
func addFigureChart(f *excelize.File, sheet string, b block, head, last, errCol int, simulated bool) (int, error) {
	var series []excelize.ChartSeries
	var errs [][2]string       // each series' error bars: the minus and plus references ("": none)
	colours := chart.Palette() // the HTML figures' colours
	first := errCol
	for j, c := range b.series {
		colour := colours[j%len(colours)]
		s := excelize.ChartSeries{Name: cellRef(sheet, c+1, head),
			Categories: rangeRef(sheet, 1, head+1, 1, last), Values: rangeRef(sheet, c+1, head+1, c+1, last)}
		if b.kind == excelize.Scatter {
			span := b.spans[j]
			if span[1] < span[0] {
				continue // no point
			}
			first, end := head+1+span[0], head+1+span[1]
			s.Categories, s.Values = rangeRef(sheet, 2, first, 2, end), rangeRef(sheet, c+1, first, c+1, end)
			// A marker without a fill of its own is invisible in LibreOffice.
			s.Marker = excelize.ChartMarker{Symbol: "circle", Size: 7, Fill: solid(colour),
				Border: excelize.LineOptions{Type: excelize.LineSolid, Width: 0.75, Fill: solid(colour)}}
			if b.lines[j] {
				s.Marker = excelize.ChartMarker{Symbol: "none"}
				s.Line = excelize.LineOptions{Type: excelize.LineSolid, Width: 1.5, Dash: excelize.LineDashDash, Fill: solid("#555555")}
			}
		} else if b.kind != excelize.Radar {
			s.Fill = solid(colour)
		}
		series = append(series, s)
		var refs [2]string
		if j < len(b.whiskerCols) && b.whiskerCols[j][0] > 0 {
			if errCol == first {
				if err := f.SetCellStr(sheet, cellName(errCol, head-1), "error bars of the chart at row "+strconv.Itoa(head)+": distances from each bar to its 95% interval's bounds"); err != nil {
					return 0, err
				}
			}
			var err error
			if refs, err = errorBars(f, sheet, b, j, head, errCol); err != nil {
				return 0, err
			}
			errCol += 2
		}
		errs = append(errs, refs)
	}
	if len(series) == 0 {
		return 0, nil
	}
	ch := nativeChart(b.kind, series, b.title, simulated, figureChart)
	if b.kind != excelize.Radar {
		ch.XAxis.Minimum, ch.XAxis.Maximum = b.xRange[0], b.xRange[1]
		ch.YAxis.Minimum, ch.YAxis.Maximum = b.yRange[0], b.yRange[1]
	}
	at := len(b.header) + 2
	if err := f.AddChart(sheet, cellName(at, head), ch); err != nil {
		return 0, err
	}
	var err error
	if b.kind == excelize.Scatter {
		err = patchChart(f, func(x string) (string, error) {
			// LibreOffice draws nothing from excelize's string reference.
			x = strXValues.ReplaceAllString(x, `<xVal><numRef><f>$1</f></numRef></xVal>`)
			if strings.Contains(x, "<xVal><strRef>") {
				return x, fmt.Errorf("a scatter series' x values are still text")
			}
			return x, nil
		})
	} else if b.whiskerCols != nil {
		err = patchChart(f, func(x string) (string, error) { return withErrorBars(x, series, errs) })
	}
	_, rows := chartEnd(at, head, ch.Dimension.Width, ch.Dimension.Height)
	return rows, err
}

// errorBars writes the distances from series j's bars to their whiskers'
// bounds in columns errCol, errCol+1 and returns their references.
func errorBars(f *excelize.File, sheet string, b block, j, head, errCol int) ([2]string, error) {
	name := b.header[b.series[j]]
	if err := f.SetCellStr(sheet, cellName(errCol, head), name+" − (rate − lo)"); err != nil {
		return [2]string{}, err
	}
	f.SetCellStr(sheet, cellName(errCol+1, head), name+" + (hi − rate)")
	for i, row := range b.rows {
		rate, ok := row[b.series[j]].(float64)
		lo, okLo := row[b.whiskerCols[j][0]].(float64)
		hi, okHi := row[b.whiskerCols[j][1]].(float64)
		if !ok || !okLo || !okHi || math.IsNaN(rate) {
			continue
		}
		f.SetCellFloat(sheet, cellName(errCol, head+1+i), math.Max(0, rate-lo), 6, 64)
		f.SetCellFloat(sheet, cellName(errCol+1, head+1+i), math.Max(0, hi-rate), 6, 64)
	}
	last := head + len(b.rows)
	ref := func(c int) string { return rangeRef(sheet, c, head+1, c, last) }
	return [2]string{ref(errCol), ref(errCol + 1)}, nil
}

// axisFont is the charts' axis labels: dark grey, to print.
var axisFont = excelize.Font{Color: "#404040", Size: 9}

// solid is a solid fill of one colour.
func solid(colour string) excelize.Fill {
	return excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{colour}}
}

// patchChart rewrites the XML of the chart AddChart added last (excelize
// names it by the count of chart parts) where excelize has no option.
func patchChart(f *excelize.File, fix func(string) (string, error)) error {
	n := 0
	f.Pkg.Range(func(k, _ any) bool {
		if name, ok := k.(string); ok && strings.Contains(name, "xl/charts/chart") {
			n++
		}
		return true
	})
	part := "xl/charts/chart" + strconv.Itoa(n) + ".xml"
	v, ok := f.Pkg.Load(part)
	if !ok {
		return fmt.Errorf("no chart part %s", part)
	}
	b, ok := v.([]byte)
	if !ok {
		return fmt.Errorf("chart part %s is not XML", part)
	}
	x, err := fix(string(b))
	if err != nil {
		return err
	}
	f.Pkg.Store(part, []byte(x))
	return nil
}

var strXValues = regexp.MustCompile(`<xVal><strRef><f>([^<]*)</f></strRef></xVal>`)

// withErrorBars gives each whiskered series custom error bars (drawn
// from the ranges refs[j]: minus, plus), before its categories.
func withErrorBars(x string, series []excelize.ChartSeries, refs [][2]string) (string, error) {
	ref := func(r string) string {
		var b strings.Builder
		xml.EscapeText(&b, []byte(r))
		return `<numRef><f>` + b.String() + `</f></numRef>`
	}
	parts := strings.Split(x, "<ser>")
	if len(parts)-1 != len(series) {
		return x, fmt.Errorf("%d series in the chart XML, want %d", len(parts)-1, len(series))
	}
	for j := range series {
		if refs[j][0] == "" {
			continue
		}
		p := parts[j+1]
		at := strings.Index(p, "<cat>")
		if at < 0 {
			return x, fmt.Errorf("series %d has no categories", j)
		}
		bars := `<errBars><errBarType val="both"></errBarType><errValType val="cust"></errValType><noEndCap val="0"></noEndCap>` +
			`<plus>` + ref(refs[j][1]) + `</plus><minus>` + ref(refs[j][0]) + `</minus>` +
			`<spPr><a:ln w="9525"><a:solidFill><a:srgbClr val="222222"></a:srgbClr></a:solidFill></a:ln></spPr></errBars>`
		parts[j+1] = p[:at] + bars + p[at:]
	}
	return strings.Join(parts, "<ser>"), nil
}
