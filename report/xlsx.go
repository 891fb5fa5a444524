package report

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// MaxSampleRows bounds the samples sheet: a reviewer's sample, the rest
// of the answers being in the run directory's files.
const MaxSampleRows = 50_000

// MaxSheetRows bounds a long table's sheet (Excel's limit is 1,048,576
// rows).
const MaxSheetRows = 1_000_000

// WriteXLSX writes the workbook: a README sheet (title, SIMULATED when it
// is, the notes), one sheet per table (writeTable), a figures sheet (each
// figure's data beside the native chart of the same kind, writeFigures),
// a provenance sheet, and, when given, a samples sheet (Page.Samples, at
// most MaxSampleRows rows, the README saying that it holds n of the run's
// Page.SamplesTotal answers and where all of them are). Text from models
// and datasets is always a string cell, never a formula, whatever it
// starts with. Every sheet prints landscape, one page wide, within its
// print area, a table's header rows repeated on each page (pageSetup,
// printRange).
//
// Where Excel's limits force a cell's text to change (fitCell: over
// MaxCellChars characters, or characters XML cannot hold), the cell says
// so: its text ends in "… [cut: N characters, full text in FILE]" or
// shows the characters as their control pictures (␀, ␛), it has an
// orange fill and a comment saying what changed (the first
// MaxNoteComments of a sheet), and the README sheet counts the changed
// cells of every sheet.
func WriteXLSX(w io.Writer, p Page) error {
	return WriteXLSXContext(context.Background(), w, p, Options{})
}

// WriteXLSXContext is WriteXLSX stopping at ctx's end and telling
// o.Progress of each long sheet, with the long sheets cut at
// o.SheetRows. The workbook is assembled in memory, then written into w.
func WriteXLSXContext(ctx context.Context, w io.Writer, p Page, o Options) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetDefaultFont(fontName); err != nil {
		return err
	}
	styles, err := newStyles(f)
	if err != nil {
		return err
	}
	lines := []string{p.Title}
	if p.Simulated {
		lines = append(lines, "SIMULATED: these answers came from Bhasha's simulated models, not from a real LLM.")
	}
	lines = append(lines, p.Notes...)
	if len(p.MethodNotes) > 0 {
		lines = append(lines, "Method notes (how these numbers were made):")
		lines = append(lines, p.MethodNotes...)
	}
	samples := p.Samples
	if samples != nil {
		lines = append(lines, "One sheet per table but the answers (every scored answer is in the run directory's tables/answers.csv and scored.parquet); 'figures' holds each figure's data beside its native chart; 'provenance' says what was run; 'samples' holds scored answers with their prompts and responses.")
	} else {
		lines = append(lines, "One sheet per table; 'figures' holds each figure's data beside its native chart; 'provenance' says what was run.")
	}
	if err := startReadme(f, styles, lines); err != nil {
		return err
	}
	used := map[string]bool{readme: true}
	streamed := map[string]bool{} // the sheets written with excelize's StreamWriter
	var cuts []string             // the README's lines on sheets cut at o.SheetRows
	for _, t := range p.Tables {
		if t.Name == "answers" && samples != nil {
			continue // the run's files hold every answer; the samples sheet holds the sample's, with their prompts and responses
		}
		name := sheetName(t.Name, used)
		streamed[name] = true
		var long *longRows
		if t.Len() > StreamRows {
			long = &longRows{total: t.Len(), limit: o.sheetRows(), rest: "the run directory's tables/" + tables.FileName(t.Name) + ".csv", o: o}
		} else {
			t = t.Held() // a short table made row by row
		}
		left, err := writeTable(ctx, f, name, t, styles, long)
		if err != nil {
			return fmt.Errorf("sheet %s: %w", name, err)
		}
		if long != nil {
			cuts = append(cuts, cutNote(name, left, t.Len(), long.rest))
		}
	}
	if err := writeFigures(f, sheetName("figures", used), p.Figures, p.Simulated, styles); err != nil {
		return err
	}
	prov := sheetName("provenance", used)
	f.NewSheet(prov)
	if err := pageSetup(f, prov); err != nil {
		return err
	}
	f.SetCellStyle(prov, "A1", "B1", styles.header)
	rows := [][]string{{"what", "value"}}
	for i := range p.Provenance {
		rows = append(rows, p.Provenance[i][:])
	}
	if err := writeRows(f, prov, rows, provWidths[:], styles); err != nil {
		return err
	}
	if len(p.Provenance) > 0 {
		f.SetCellStyle(prov, "A2", cellName(2, len(p.Provenance)+1), styles.wrap)
	}
	styles.log.apply(f, prov, styles.changed)
	f.SetColWidth(prov, "A", "A", provWidths[0])
	f.SetColWidth(prov, "B", "B", provWidths[1])
	if err := printRange(f, prov, 2, len(p.Provenance)+1, 1); err != nil {
		return err
	}
	if samples != nil {
		name := sheetName("samples", used)
		streamed[name] = true
		long := &longRows{total: samples.Len(), limit: min(o.sheetRows(), MaxSampleRows), o: o,
			rest: "the run directory's tables/answers.csv and scored.parquet (their prompts and responses in its records, records-*.parquet and records.jsonl)"}
		left, err := writeTable(ctx, f, name, samples, styles, long)
		if err != nil {
			return fmt.Errorf("sheet %s: %w", name, err)
		}
		cuts = append(cuts, sampleNote(name, samples.Len()-left, max(p.SamplesTotal, samples.Len()), p.SamplesHow), cutNote(name, left, samples.Len(), long.rest))
	}
	if err := endReadme(f, styles, len(lines), slices.DeleteFunc(cuts, func(s string) bool { return s == "" })); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	step := o.Step("workbook file", 0)
	defer step.At(0, true)
	return writeWorkbook(f, w, streamed)
}

// sampleNote is the README's line on the samples sheet: n of total, drawn as how says.
func sampleNote(sheet string, n, total int, how string) string {
	if n >= total {
		return fmt.Sprintf("Sheet '%s' holds all %d scored answers with their prompts and responses (as do the run directory's tables/answers.csv, scored.parquet and its records).", sheet, total)
	}
	if how == "" {
		how = "the first in table order"
	}
	englishNumbers := message.NewPrinter(language.English) // 50,000
	return fmt.Sprintf("Sheet '%s' holds a sample of %s of the %s scored answers (%s), with their prompts and responses: every answer is in the run directory's tables/answers.csv and scored.parquet, its prompt and response in its records (records-*.parquet and records.jsonl).", sheet, englishNumbers.Sprint(n), englishNumbers.Sprint(total), how)
}

// cutNote is the README's line on a sheet left rows short ("" for none).
func cutNote(sheet string, left, total int, rest string) string {
	if left == 0 {
		return ""
	}
	return fmt.Sprintf("Sheet '%s' keeps the first %d of %d rows (a sheet holds at most the workbook's row limit; Excel's is 1,048,576): the other %d are in %s.", sheet, total-left, total, left, rest)
}

const readme = "README" // a workbook's first sheet

// startReadme names the first sheet README and writes lines.
func startReadme(f *excelize.File, st styleSet, lines []string) error {
	f.SetSheetName("Sheet1", readme)
	if err := pageSetup(f, readme); err != nil {
		return err
	}
	rows := make([][]string, len(lines))
	for i, l := range lines {
		rows[i] = []string{l}
	}
	return writeRows(f, readme, rows, []float64{readmeWidth}, st)
}

// writeRows writes rows from row 1 on, each as tall as its texts wrapped in widths.
func writeRows(f *excelize.File, sheet string, rows [][]string, widths []float64, st styleSet) error {
	for i, row := range rows {
		height := lineHeight
		for c, v := range row {
			if err := setCell(f, sheet, c+1, i+1, v, "manifest.json", st); err != nil {
				return err
			}
			height = max(height, textHeight(v, widths[c]))
		}
		f.SetRowHeight(sheet, i+1, height)
	}
	return nil
}

// endReadme writes notes and the changed cells' account after line n and a blank row.
func endReadme(f *excelize.File, st styleSet, n int, notes []string) error {
	last := n
	for i, l := range append(notes, st.log.lines()...) {
		last = n + 2 + i
		if err := f.SetCellStr(readme, cellName(1, last), l); err != nil {
			return err
		}
		f.SetRowHeight(readme, last, textHeight(l, readmeWidth))
	}
	f.SetColWidth(readme, "A", "A", readmeWidth)
	f.SetCellStyle(readme, "A1", cellName(1, last), st.wrap)
	st.log.apply(f, readme, st.changed)
	return printRange(f, readme, 1, last, 0)
}

// styleSet is a workbook's cell styles and its log of changed cells.
type styleSet struct {
	header, pvalue, count int
	decimals              int // three decimals: rates, interval bounds, other numbers
	wrap                  int // long text (README, provenance): wrapped, top-aligned
	wrapCell              int // a table's long text: wrapped, bottom-aligned as the numbers beside it
	changed               int // a cell whose text fitCell changed
	log                   *changeLog
}

// The workbook's font (Excel's default) and a line's height, in points.
const (
	fontName     = "Calibri"
	fontSize     = 11.0
	lineHeight   = 15.0
	maxRowHeight = 409.0 // Excel's limit, in points
	readmeWidth  = 120.0 // the README's column, in characters
)

var provWidths = [2]float64{28, 100} // the provenance sheet's columns, in characters

const widthRows = 2000 // the rows textWidths reads

// colWidth is a column's width for its label and widest text: 10 to 40.
func colWidth(label string, text float64) float64 {
	return math.Max(10, math.Min(40, math.Max(float64(len(label)+4), text+2)))
}

// textWidths is each column's widest text among t's first rows rows, in runes.
func textWidths(ctx context.Context, t *tables.Table, rows int) ([]float64, error) {
	w := make([]float64, len(t.Header))
	var row []any
	for r := range min(rows, t.Len()) {
		if r%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row = t.Row(r, row)
		for c, v := range row[:min(len(row), len(w))] {
			if x, ok := v.(string); ok {
				w[c] = max(w[c], float64(utf8.RuneCountInString(x)))
			}
		}
	}
	return w, nil
}

// textHeight is the height of a row holding s wrapped at width (erring tall).
func textHeight(s string, width float64) float64 {
	per := max(1, int(width)-1)
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		n += max(1, (utf8.RuneCountInString(line)+per-1)/per)
	}
	return min(maxRowHeight, float64(n)*lineHeight)
}

func newStyles(f *excelize.File) (styleSet, error) {
	s := styleSet{log: &changeLog{counts: map[string]*sheetChanges{}}}
	font := &excelize.Font{Family: fontName, Size: fontSize}
	f3, pv := "0.000", `[<0.000000000000000222]"< 2.2e-16";0.00E+00` // tables.FormatP: a p-value never shows as zero
	for _, x := range []struct {
		id    *int
		style *excelize.Style
	}{
		{&s.changed, &excelize.Style{Fill: solid(changedFill)}},
		{&s.header, &excelize.Style{Font: &excelize.Font{Bold: true, Family: fontName, Size: fontSize}, Fill: solid("#F2F2F2"), Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}}},
		{&s.wrap, &excelize.Style{Font: font, Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}}},
		{&s.wrapCell, &excelize.Style{Font: font, Alignment: &excelize.Alignment{WrapText: true}}},
		{&s.decimals, &excelize.Style{CustomNumFmt: &f3}},
		{&s.pvalue, &excelize.Style{CustomNumFmt: &pv}},
		{&s.count, &excelize.Style{NumFmt: 1}},
	} {
		var err error
		if *x.id, err = f.NewStyle(x.style); err != nil {
			return s, err
		}
	}
	return s, nil
}

// longRows is a long table's plain sheet: its first limit of total rows, the rest in file rest.
type longRows struct {
	total, limit int
	rest         string
	o            Options
}

// writeTable streams t into a new sheet and returns how many of its rows
// it leaves out. A table's sheet (long nil) is dressed: number formats,
// wrapped text, header comments, an autofilter, colour scales, its chart,
// the papers' two header rows; a long one is plain, cut at long.limit.
func writeTable(ctx context.Context, f *excelize.File, sheet string, t *tables.Table, st styleSet, long *longRows) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if _, err := f.NewSheet(sheet); err != nil {
		return 0, err
	}
	if err := pageSetup(f, sheet); err != nil {
		return 0, err
	}
	cols := t.Columns()
	n, left, o := t.Len(), 0, Options{}
	var groups []tables.ColumnGroup
	if long == nil {
		groups = t.ColumnGroups()
	} else {
		n, o = min(n, long.limit), long.o
		left = max(long.total, t.Len()) - n
	}
	head := headRows(cols, groups)
	hdr := len(head)
	texts, err := textWidths(ctx, t, min(n, widthRows))
	if err != nil {
		return 0, err
	}
	// wraps: a dressed table's text columns wider than their width
	widths := make([]float64, len(cols))
	wraps := make([]bool, len(cols))
	full := make([]string, len(cols)) // the file holding each column's full texts
	styles := make([]int, len(cols))  // each column's format
	wholeAsInt := make([]bool, len(cols))
	for c, col := range cols {
		full[c] = fullTextIn(t.Name, t.Header, c)
		// whole numbers without decimals, as displayCell: all but rates, bounds, p-values, times
		wholeAsInt[c] = long == nil && col.Type == tables.Float && (col.Kind == tables.KindNone || col.Kind == tables.KindStatistic || col.Kind == tables.KindCount)
		switch {
		case long != nil:
		case col.Kind == tables.KindPValue:
			styles[c] = st.pvalue
		case col.Type == tables.Float || col.Kind == tables.KindRate || col.Kind == tables.KindLower || col.Kind == tables.KindUpper:
			styles[c] = st.decimals
		case col.Type == tables.Int:
			styles[c] = st.count
		}
	}
	labels := [2][]string{make([]string, len(cols)), make([]string, len(cols))}
	heights := []float64{lineHeight, lineHeight} // the header rows'
	tableWidth := 0.0                            // its columns', in characters
	var merges [][2]string
	for r, row := range head {
		for _, h := range row {
			c := h.Col
			labels[r][c] = h.Text
			if h.Rowspan > 1 || h.Colspan > 1 {
				merges = append(merges, [2]string{cellName(c+1, r+1), cellName(c+h.Colspan, r+h.Rowspan)})
			}
			if h.Group {
				continue
			}
			if col := cols[c]; col.Description != "" && long == nil {
				f.AddComment(sheet, excelize.Comment{Cell: cellName(c+1, r+1), Author: "Bhasha", Paragraph: []excelize.RichTextRun{{Text: col.Name + ": " + col.Description}}})
			}
			widths[c] = colWidth(h.Text, texts[c])
			tableWidth += widths[c]
			wraps[c] = long == nil && cols[c].Type == tables.String && texts[c]+2 > widths[c]
			if h.Rowspan == 1 {
				heights[hdr-1] = max(heights[hdr-1], textHeight(h.Text, widths[c]))
			}
		}
	}
	// Last to first: excelize prepends each, Excel wants them ascending.
	for c := len(widths); c >= 1; c-- {
		if err := f.SetColWidth(sheet, colName(c), colName(c), widths[c-1]); err != nil {
			return 0, err
		}
	}
	last := n + hdr // the last row of data, or of the row saying why there is none
	if n == 0 && long == nil {
		last++
	}
	end := last // the sheet's last row
	if left > 0 {
		end++
	}
	// The range first: the StreamWriter writes it as it starts.
	if err := f.SetSheetDimension(sheet, "A1:"+cellName(max(1, len(cols)), end)); err != nil {
		return 0, err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return 0, err
	}
	if len(cols) > 0 {
		if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: hdr, TopLeftCell: cellName(1, hdr+1), ActivePane: "bottomLeft"}); err != nil {
			return 0, err
		}
	}
	for _, m := range merges {
		if err := sw.MergeCell(m[0], m[1]); err != nil {
			return 0, err
		}
	}
	vals := make([]any, len(cols))
	empty := func(c int) any {
		if styles[c] == 0 {
			return nil
		}
		return excelize.Cell{StyleID: styles[c]}
	}
	for r := range hdr {
		for c := range cols {
			vals[c] = excelize.Cell{StyleID: st.header}
			if s := labels[r][c]; s != "" {
				vals[c] = textCell(sheet, r+1, c, s, full[c], st.header, st)
			}
		}
		var opts []excelize.RowOpts
		if long == nil {
			opts = append(opts, excelize.RowOpts{Height: heights[r]})
		}
		if err := sw.SetRow(cellName(1, r+1), vals, opts...); err != nil {
			return 0, err
		}
	}
	if n == 0 && long == nil {
		// Why, as the HTML report says, in a cell merged across the table.
		why := noRows(t)
		if len(cols) == 0 {
			if err := sw.SetRow(cellName(1, hdr+1), []any{textCell(sheet, hdr+1, 0, why, fullTextIn(t.Name, t.Header, 0), 0, st)}); err != nil {
				return 0, err
			}
		} else {
			for c := range cols {
				vals[c] = empty(c)
			}
			vals[0] = textCell(sheet, hdr+1, 0, why, full[0], st.wrap, st)
			if err := sw.SetRow(cellName(1, hdr+1), vals, excelize.RowOpts{Height: textHeight(why, tableWidth)}); err != nil {
				return 0, err
			}
			if len(cols) > 1 {
				if err := sw.MergeCell(cellName(1, hdr+1), cellName(len(cols), hdr+1)); err != nil {
					return 0, err
				}
			}
		}
	}
	step := o.Step("sheet "+sheet, n)
	var row []any
	for i := range n {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		row = t.Row(i, row)
		r := i + hdr + 1
		height := lineHeight // the row's wrapped texts' height
		for c := range cols {
			vals[c] = empty(c)
			if c >= len(row) {
				continue
			}
			style := styles[c]
			if s, ok := row[c].(string); ok && wraps[c] {
				style, height = st.wrapCell, max(height, textHeight(s, widths[c]))
			}
			switch x := row[c].(type) {
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					break
				}
				if wholeAsInt[c] && whole(x) {
					style = st.count // a whole number in a column of numbers: 2619, never 2619.000
				} else if long != nil {
					style = st.decimals
				}
				vals[c] = excelize.Cell{StyleID: style, Value: x}
			case nil:
			case int, bool:
				vals[c] = excelize.Cell{StyleID: style, Value: x}
			case string: // a string cell: never a formula
				if x == "" {
					if long == nil {
						vals[c] = excelize.Cell{StyleID: style} // a missing text: an empty cell, as in the CSV
					} // else no cell: a long text beside it shows over it, as over any empty cell
					break
				}
				vals[c] = textCell(sheet, r, c, x, full[c], style, st)
			default:
				vals[c] = textCell(sheet, r, c, fmt.Sprint(x), full[c], style, st)
			}
		}
		var opts []excelize.RowOpts
		if height > lineHeight {
			opts = append(opts, excelize.RowOpts{Height: height})
		}
		if err := sw.SetRow(cellName(1, r), vals, opts...); err != nil {
			return 0, err
		}
		step.At(i+1, false)
	}
	step.At(n, true)
	if left > 0 {
		if err := sw.SetRow(cellName(1, end), []any{fmt.Sprintf("… %d more rows are in %s; the sheet keeps the first %d of %d", left, long.rest, n, n+left)}); err != nil {
			return 0, err
		}
	}
	st.log.apply(f, sheet, 0) // the fill is each changed cell's style
	lastCol, lastRow := 0, 0
	if long == nil {
		for c, col := range cols {
			if col.Kind == tables.KindRate && last > hdr {
				f.SetConditionalFormat(sheet, cellName(c+1, hdr+1)+":"+cellName(c+1, last), []excelize.ConditionalFormatOptions{rateScale(col)})
			}
		}
		if len(cols) > 0 {
			f.AutoFilter(sheet, cellName(1, hdr)+":"+cellName(len(cols), last), nil)
		}
		if lastCol, lastRow, err = addChart(f, sheet, t, len(cols), hdr, last); err != nil {
			return 0, err
		}
	}
	if wide := pagesWide(tableWidth); len(cols) > 0 && wide > 1 { // else pageSetup's one page
		if err := f.SetPageLayout(sheet, &excelize.PageLayoutOptions{FitToWidth: &wide}); err != nil {
			return 0, err
		}
	}
	if err := printRange(f, sheet, max(len(cols), lastCol), max(end, lastRow), hdr); err != nil {
		return 0, err
	}
	return left, sw.Flush()
}

var neutralScale = []string{"#F7FBFF", "#6BAED6"} // the HTML heatmaps' blues

// rateScale is a rate column's scale over 0–1: red to green where its
// description says higher is better, green to red where lower, else neutral.
func rateScale(col tables.Column) excelize.ConditionalFormatOptions {
	d := strings.ToLower(col.Description)
	up := strings.Contains(d, "accuracy") || strings.Contains(d, "cross-lingual consistency") || strings.Contains(d, "clc(l)")
	down := slices.ContainsFunc([]string{"halluc", "abstain", "abstention", "switched", "failed", "error"}, func(w string) bool { return strings.Contains(d, w) })
	switch {
	case up && !down:
		return colourScale([]string{"#F8696B", "#FFEB84", "#63BE7B"}, 0, 1)
	case down && !up:
		return colourScale([]string{"#63BE7B", "#FFEB84", "#F8696B"}, 0, 1)
	}
	return colourScale(neutralScale, 0, 1)
}

// colourScale is colours c (low, middle, high) over lo–hi.
func colourScale(c []string, lo, hi float64) excelize.ConditionalFormatOptions {
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	o := excelize.ConditionalFormatOptions{Type: "2_color_scale", Criteria: "=", MinType: "num", MinValue: num(lo), MaxType: "num", MaxValue: num(hi),
		MinColor: c[0], MaxColor: c[len(c)-1]}
	if len(c) > 2 {
		o.Type, o.MidType, o.MidValue, o.MidColor = "3_color_scale", "num", num((lo+hi)/2), c[len(c)/2]
	}
	return o
}

// pageSetup prints sheet landscape, one page wide, its name and page in the footer.
func pageSetup(f *excelize.File, sheet string) error {
	landscape, wide, tall, fit := "landscape", 1, 0, true
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return err
	}
	if err := f.SetPageLayout(sheet, &excelize.PageLayoutOptions{Orientation: &landscape, FitToWidth: &wide, FitToHeight: &tall}); err != nil {
		return err
	}
	side, edge, band := 0.4, 0.6, 0.3
	if err := f.SetPageMargins(sheet, &excelize.PageLayoutMarginsOptions{Left: &side, Right: &side, Top: &edge, Bottom: &edge, Header: &band, Footer: &band}); err != nil {
		return err
	}
	return f.SetHeaderFooter(sheet, &excelize.HeaderFooterOptions{OddFooter: "&L&A&R&P / &N"})
}

// The characters a landscape page holds at 100%, and the least scale.
const (
	pageChars     = 135.0
	minPrintScale = 0.65
)

// pagesWide is how many pages wide width characters print at minPrintScale.
func pagesWide(width float64) int {
	return max(1, int(math.Ceil(width*minPrintScale/pageChars)))
}

// printRange sets the print area A1:(lastCol, lastRow), titles rows repeated.
func printRange(f *excelize.File, sheet string, lastCol, lastRow, titles int) error {
	if err := f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Area", RefersTo: rangeRef(sheet, 1, 1, max(1, lastCol), max(1, lastRow)), Scope: sheet}); err != nil {
		return err
	}
	if titles <= 0 {
		return nil
	}
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", RefersTo: fmt.Sprintf("%s$1:$%d", sheetRef(sheet), titles), Scope: sheet})
}

// chartEnd is the last column and row a w × h pixel chart at (col, row) covers.
func chartEnd(col, row int, w, h uint) (int, int) {
	return col + int((w+63)/64), row + int((h+19)/20)
}

// addChart adds t.Chart beside the table (a series a row, at most 12) and
// returns the last column and row it covers.
func addChart(f *excelize.File, sheet string, t *tables.Table, ncols, hdr, last int) (int, int, error) {
	if t.Chart == nil || ncols <= t.Chart.Keys || last <= hdr {
		return 0, 0, nil
	}
	keys := t.Chart.Keys
	var series []excelize.ChartSeries
	for r := hdr + 1; r <= min(last, hdr+12); r++ {
		series = append(series, excelize.ChartSeries{
			Name:       cellRef(sheet, keys, r),
			Categories: rangeRef(sheet, keys+1, 1, ncols, hdr),
			Values:     rangeRef(sheet, keys+1, r, ncols, r),
		})
	}
	ch := nativeChart(excelize.Col, series, t.Chart.Title, t.Simulated, excelize.ChartDimension{Width: 720, Height: 400})
	lastCol, lastRow := chartEnd(ncols+2, hdr+1, ch.Dimension.Width, ch.Dimension.Height)
	return lastCol, lastRow, f.AddChart(sheet, cellName(ncols+2, hdr+1), ch)
}

// nativeChart is a chart of kind over series, titled, its legend at the bottom.
func nativeChart(kind excelize.ChartType, series []excelize.ChartSeries, title string, simulated bool, dim excelize.ChartDimension) *excelize.Chart {
	if simulated {
		title += " — SIMULATED"
	}
	ch := &excelize.Chart{Type: kind, Series: series, Title: excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: title}}},
		Dimension: dim, Legend: excelize.ChartLegend{Position: "bottom"}}
	ch.XAxis.Font, ch.YAxis.Font = axisFont, axisFont
	if kind != excelize.Radar {
		ch.XAxis.TickLabelPosition = excelize.ChartTickLabelLow
	}
	return ch
}

// sheetRef is sheet's name quoted as a reference's prefix ('my sheet'!).
func sheetRef(sheet string) string { return "'" + strings.ReplaceAll(sheet, "'", "''") + "'!" }

// cellRef is the absolute reference to cell (c, r) of sheet.
func cellRef(sheet string, c, r int) string {
	abs, _ := excelize.CoordinatesToCellName(c, r, true)
	return sheetRef(sheet) + abs
}

// rangeRef is the absolute reference to sheet's range (c1, r1):(c2, r2).
func rangeRef(sheet string, c1, r1, c2, r2 int) string {
	abs, _ := excelize.CoordinatesToCellName(c2, r2, true)
	return cellRef(sheet, c1, r1) + ":" + abs
}

// setCell writes v into cell (col, row), 1-based: numbers and booleans
// as such, anything else as textCell's text.
func setCell(f *excelize.File, sheet string, col, row int, v any, full string, st styleSet) error {
	switch x := v.(type) {
	case nil:
		return nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	case int, bool:
	default:
		v = textCell(sheet, row, col-1, fmt.Sprint(v), full, 0, st).Value
	}
	return f.SetCellValue(sheet, cellName(col, row), v)
}

// StreamRows is the row count above which a table's sheet is written
// without its table's dressing (plain header and number formats, no
// autofilter, colour scale or comments; the long tables are the answers,
// not the papers' tables), capped at Options.SheetRows with a note.
const StreamRows = 50_000

// textCell is text s at column c (0-based), row r, as fitCell fits it
// (a change logged and filled).
func textCell(sheet string, r, c int, s, full string, style int, st styleSet) excelize.Cell {
	fit := fitCell(s, full)
	if fit.changed() {
		st.log.add(sheet, cellName(c+1, r), fit, full)
		style = st.changed
	}
	return excelize.Cell{StyleID: style, Value: fit.text}
}

func cellName(col, row int) string {
	s, _ := excelize.CoordinatesToCellName(col, row)
	return s
}

func colName(col int) string {
	s, _ := excelize.ColumnNumberToName(col)
	return s
}

// sheetName makes a valid, unused sheet name (31 characters at most).
func sheetName(name string, used map[string]bool) string {
	n := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return tables.ControlPicture(r)
		}
		if strings.ContainsRune(`[]:*?/\`, r) {
			return '_'
		}
		return r
	}, name)
	cut := func(s string, k int) string { // at most k characters (Excel's limit is 31)
		if r := []rune(s); len(r) > k {
			return string(r[:k])
		}
		return s
	}
	n = cut(n, 31)
	base, i := n, 2
	for used[n] {
		suffix := fmt.Sprintf("_%d", i)
		n = cut(base, 31-len(suffix)) + suffix
		i++
	}
	used[n] = true
	return n
}
