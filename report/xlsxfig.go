package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"
)

// echartsOption is the part of an ECharts option a workbook chart needs.
type echartsOption struct {
	Title struct {
		Text string `json:"text"`
	} `json:"title"`
	XAxis []struct {
		Type string `json:"type"`
		Name string `json:"name"`
		Data []any  `json:"data"`
	} `json:"xAxis"`
	YAxis []struct {
		Data []any `json:"data"`
	} `json:"yAxis"`
	Radar *struct {
		Indicator []struct {
			Name string `json:"name"`
		} `json:"indicator"`
	} `json:"radar"`
	Series []struct {
		Type       string            `json:"type"`
		Name       string            `json:"name"`
		XAxisIndex int               `json:"xAxisIndex"`
		Stack      string            `json:"stack"`
		Data       []json.RawMessage `json:"data"`
	} `json:"series"`
}

// datum is one series item: a bare value or {"name", "value"}.
type datum struct {
	Name  string
	Value any
}

func (d *datum) UnmarshalJSON(b []byte) error {
	var obj struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		d.Name, d.Value = obj.Name, obj.Value
		return nil
	}
	return json.Unmarshal(b, &d.Value)
}

// block is a figure's data laid out as a sheet range: a header row, then
// one row per category (or per x value), and the chart drawn from it.
type block struct {
	title  string // the chart's title (the figure's own)
	header []string
	rows   [][]any
	kind   excelize.ChartType
	series []int // the value columns charted (column indexes into header)
	scale  bool  // a heatmap: no chart, a colour scale over the values
}

// figureBlock turns a figure's option into workbook data and the native
// chart type that mirrors it: bars (the whiskers left to the HTML
// report) → clustered (or stacked) columns; lines over categories → lines; value-axis
// lines and scatters → XY scatter; radar → radar; heatmap → a grid with
// a colour scale. A Sankey has no Excel counterpart (ok false).
func figureBlock(f Figure) (block, bool, error) {
	var o echartsOption
	if err := json.Unmarshal(f.Option, &o); err != nil {
		return block{}, false, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	if len(o.Series) == 0 {
		return block{}, false, nil
	}
	b, ok, err := blockOf(f, o)
	b.title = o.Title.Text
	if b.title == "" {
		b.title = f.Name
	}
	return b, ok, err
}

// blockOf lays out the data of an option figureBlock has read.
func blockOf(f Figure, o echartsOption) (block, bool, error) {
	items := func(s int) ([]datum, error) {
		out := make([]datum, len(o.Series[s].Data))
		for i, raw := range o.Series[s].Data {
			if err := json.Unmarshal(raw, &out[i]); err != nil {
				return nil, fmt.Errorf("figure %s series %q item %d: %w", f.Name, o.Series[s].Name, i, err)
			}
		}
		return out, nil
	}
	value := func(v any) any { // "-" (no bar) as an empty cell
		if s, ok := v.(string); ok && s == "-" {
			return nil
		}
		return v
	}
	switch typ := o.Series[0].Type; {
	case typ == "radar" && o.Radar != nil:
		b := block{header: []string{"axis"}, kind: excelize.Radar}
		for _, ind := range o.Radar.Indicator {
			b.rows = append(b.rows, []any{ind.Name})
		}
		for s := range o.Series {
			ds, err := items(s)
			if err != nil {
				return b, false, err
			}
			for _, d := range ds {
				vals, _ := d.Value.([]any)
				name := d.Name
				if name == "" {
					name = o.Series[s].Name
				}
				b.header = append(b.header, name)
				b.series = append(b.series, len(b.header)-1)
				for i := range b.rows {
					var v any
					if i < len(vals) {
						v = value(vals[i])
					}
					b.rows[i] = append(b.rows[i], v)
				}
			}
		}
		return b, true, nil
	case typ == "heatmap" && len(o.XAxis) > 0 && len(o.YAxis) > 0:
		b := block{header: []string{""}, scale: true}
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
		ds, err := items(0)
		if err != nil {
			return b, false, err
		}
		for _, d := range ds {
			v, _ := d.Value.([]any)
			if len(v) != 3 {
				continue
			}
			c, okc := col[fmt.Sprint(v[0])]
			r, okr := row[fmt.Sprint(v[1])]
			if okc && okr {
				b.rows[r][c] = value(v[2])
			}
		}
		return b, true, nil
	case (typ == "bar" || typ == "line") && len(o.XAxis) > 0 && o.XAxis[0].Type != "value" && o.XAxis[0].Type != "log":
		b := block{header: []string{"category"}, kind: excelize.Col}
		switch {
		case typ == "line":
			b.kind = excelize.Line
		case o.Series[0].Stack != "":
			b.kind = excelize.ColStacked
		}
		for _, c := range o.XAxis[0].Data {
			b.rows = append(b.rows, []any{fmt.Sprint(c)})
		}
		for s, se := range o.Series {
			if se.XAxisIndex != 0 || se.Type != typ { // the whiskers' segments
				continue
			}
			ds, err := items(s)
			if err != nil {
				return b, false, err
			}
			b.header = append(b.header, se.Name)
			b.series = append(b.series, len(b.header)-1)
			for i := range b.rows {
				var v any
				if i < len(ds) {
					v = value(ds[i].Value)
				}
				b.rows[i] = append(b.rows[i], v)
			}
		}
		return b, len(b.series) > 0, nil
	case typ == "scatter" || typ == "line":
		// XY points: one x column and one y column per series, a row per point
		name := "x"
		if len(o.XAxis) > 0 && o.XAxis[0].Name != "" {
			name = o.XAxis[0].Name
		}
		b := block{header: []string{"point", name}, kind: excelize.Scatter}
		for s, se := range o.Series {
			ds, err := items(s)
			if err != nil {
				return b, false, err
			}
			b.header = append(b.header, se.Name)
			b.series = append(b.series, len(b.header)-1)
			for _, d := range ds {
				xy, _ := d.Value.([]any)
				if len(xy) != 2 {
					continue
				}
				r := make([]any, len(o.Series)+2)
				r[0], r[1], r[len(b.header)-1] = d.Name, value(xy[0]), value(xy[1])
				b.rows = append(b.rows, r)
			}
		}
		return b, len(b.rows) > 0, nil
	}
	return block{}, false, nil
}

// writeFigures writes the "figures" sheet: per figure its caption, its
// data and, beside the data, the native Excel chart of the same kind
// (titled with the figure's title, and SIMULATED when it is). It returns
// how many figures it wrote.
func writeFigures(f *excelize.File, sheet string, figs []Figure, simulated bool, st styleSet) (int, error) {
	q := "'" + strings.ReplaceAll(sheet, "'", "''") + "'!"
	row, written := 1, 0
	for _, fig := range figs {
		b, ok, err := figureBlock(fig)
		if err != nil {
			return written, err
		}
		if !ok {
			continue
		}
		if written == 0 {
			if _, err := f.NewSheet(sheet); err != nil {
				return 0, err
			}
			f.SetColWidth(sheet, "A", "A", 28)
		}
		written++
		caption := fig.Caption
		if fig.Mirrors != "" {
			caption += " (mirrors " + fig.Mirrors + ")"
		}
		if err := f.SetCellStr(sheet, cellName(1, row), caption); err != nil {
			return written, err
		}
		head := row + 1
		for c, h := range b.header {
			f.SetCellStr(sheet, cellName(c+1, head), h)
		}
		f.SetCellStyle(sheet, cellName(1, head), cellName(len(b.header), head), st.header)
		for r, vals := range b.rows {
			for c, v := range vals {
				if v == nil {
					continue
				}
				if err := setCell(f, sheet, cellName(c+1, head+1+r), v, "tables/*.csv", st); err != nil {
					return written, err
				}
			}
		}
		last := head + len(b.rows)
		if b.scale && len(b.rows) > 0 {
			f.SetCellStyle(sheet, cellName(2, head+1), cellName(len(b.header), last), st.rate)
		}
		for _, c := range b.series {
			if len(b.rows) > 0 {
				f.SetCellStyle(sheet, cellName(c+1, head+1), cellName(c+1, last), st.rate)
			}
		}
		height := len(b.rows) + 2
		if b.scale && len(b.rows) > 0 {
			f.SetConditionalFormat(sheet, cellName(2, head+1)+":"+cellName(len(b.header), last), []excelize.ConditionalFormatOptions{{
				Type: "3_color_scale", Criteria: "=", MinType: "num", MinValue: "0", MidType: "num", MidValue: "0.5", MaxType: "num", MaxValue: "1",
				MinColor: "#F8696B", MidColor: "#FFEB84", MaxColor: "#63BE7B"}})
		}
		if !b.scale && len(b.rows) > 0 {
			var series []excelize.ChartSeries
			for _, c := range b.series {
				s := excelize.ChartSeries{Name: q + absolute(cellName(c+1, head)),
					Categories: q + absolute(cellName(1, head+1)) + ":" + absolute(cellName(1, last)),
					Values:     q + absolute(cellName(c+1, head+1)) + ":" + absolute(cellName(c+1, last))}
				if b.kind == excelize.Scatter {
					s.Categories = q + absolute(cellName(2, head+1)) + ":" + absolute(cellName(2, last))
					s.Marker = excelize.ChartMarker{Symbol: "circle", Size: 7}
				}
				series = append(series, s)
			}
			title := b.title
			if simulated {
				title += " — SIMULATED"
			}
			if err := f.AddChart(sheet, cellName(len(b.header)+2, head), &excelize.Chart{Type: b.kind, Series: series,
				Title:     excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: title}}},
				Dimension: excelize.ChartDimension{Width: 640, Height: 320}, Legend: excelize.ChartLegend{Position: "bottom"}}); err != nil {
				return written, fmt.Errorf("chart of %s: %w", fig.Name, err)
			}
			height = max(height, 18)
		}
		row = head + height + 2
	}
	if written > 0 {
		st.log.apply(f, sheet, st.changed)
	}
	return written, nil
}
