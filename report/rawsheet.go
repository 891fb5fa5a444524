package report

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// A streamed sheet's rows, and a table's (writeTable), are written by
// Bhasha, not by excelize: the sheet is made with excelize (its views,
// page setup, column widths, merged cells, comments, colour scales,
// autofilter, chart and defined names), its rows are written and
// deflated once (deflateSheet, part.go), and when the workbook is
// written its part's <sheetData> is replaced by them. Each cell is
// written as excelize's StreamWriter writes it (numbers in 'f' format,
// booleans t="b", a style where the column has one, an empty value with
// a style as an empty cell), but for its texts: items of the shared
// strings table, each distinct text once (sst.go), where the
// StreamWriter writes each inline and escaped. This is several times
// faster than the StreamWriter, whose per-cell escaping was most of a
// long workbook's time, and than excelize's cells and XML marshalling
// for the tables (nine models' 27 table sheets: 2.4 s of CPU to set
// and marshal their cells, where the workbook file now takes 0.2 s).

// rawSheet is a streamed sheet whose rows the workbook writer writes.
type rawSheet struct {
	path    string // the sheet's part: xl/worksheets/sheetN.xml
	lastRef string // the last cell, for the sheet's dimension
	body    *deflatedRows
	shared  *sharedStrings // its block of the shared strings table; nil: none
}

// deflateSheet writes the rows of the sheet whose part is path (its last
// cell lastRef) now, through rows, as its <sheetData> element, deflated
// for the workbook writer. The rawSheet holds a temporary file until the
// workbook is written (or close).
func deflateSheet(path, lastRef string, rows func(w *sheetWriter) error) (rawSheet, error) {
	d, err := newRowsDeflater()
	if err != nil {
		return rawSheet{}, err
	}
	sw := newSheetWriter(d)
	_, err = sw.w.WriteString("<sheetData>")
	if err == nil {
		err = rows(sw)
	}
	if err == nil {
		_, err = sw.w.WriteString("</sheetData>")
	}
	if err == nil {
		err = sw.flush()
	}
	body, ferr := d.finish()
	if err != nil {
		body.close()
		return rawSheet{}, err
	}
	if ferr != nil {
		return rawSheet{}, ferr
	}
	return rawSheet{path: path, lastRef: lastRef, body: body}, nil
}

// deflateShared is deflateSheet for sheet (its part path) whose texts
// are its block of f's shared strings table: rows gets the block, which
// is reserved in f's table once the rows are written (sst.go), and
// returned with them.
func deflateShared(f *excelize.File, sheet, path, lastRef string, rows func(w *sheetWriter, shared *sharedStrings) error) (rawSheet, error) {
	shared, err := newSharedStrings(f, sheet)
	if err != nil {
		return rawSheet{}, err
	}
	raw, err := deflateSheet(path, lastRef, func(w *sheetWriter) error { return rows(w, shared) })
	if err == nil {
		err = shared.reserve(f)
	}
	if err != nil {
		shared.close()
		raw.close()
		return rawSheet{}, err
	}
	raw.shared = shared
	return raw, nil
}

// close lets the sheet's rows and texts go, if they were not written.
func (r rawSheet) close() {
	r.body.close()
	r.shared.close()
}

// sheetPath is the part excelize writes sheet into.
func sheetPath(f *excelize.File, sheet string) (string, error) {
	for id, name := range f.GetSheetMap() {
		if name == sheet {
			return "xl/worksheets/sheet" + strconv.Itoa(id) + ".xml", nil
		}
	}
	return "", fmt.Errorf("sheet %s: not in the workbook", sheet)
}

// sheetWriter writes a sheet's rows as SpreadsheetML.
type sheetWriter struct {
	w    *bufio.Writer
	cols [][]byte // column letters
	buf  []byte
}

func newSheetWriter(w io.Writer) *sheetWriter {
	return &sheetWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// row writes row r (1-based) of cells, each with its style (0: none),
// at the default height; a nil cell, or a NaN or infinite number, is
// empty: absent without a style, an empty cell with its style. A cell
// right after the row's previous one (the first in column A) is written
// without its reference (r), which ECMA-376 Part 1 §18.3.1.4 makes
// optional: the cell is then the next of its row, as Excel, LibreOffice,
// Google Sheets, openpyxl, calamine and excelize read it. The references
// (a row number in every cell) were a third of a samples sheet's bytes
// and three quarters of it deflated: 322 MB deflating to 34 MB in 0.8 s,
// against 216 MB to 8.3 MB in 0.3 s without them (350,000 rows).
func (s *sheetWriter) row(r int, cells []any, styles []int) error {
	return s.rowHeight(r, 0, cells, styles)
}

// rowHeight is row with the row's height in points (0: the default), as
// excelize's SetRowHeight sets it (ht, customHeight).
func (s *sheetWriter) rowHeight(r int, ht float64, cells []any, styles []int) error {
	b := s.buf[:0]
	b = append(b, `<row r="`...)
	b = strconv.AppendInt(b, int64(r), 10)
	if ht > 0 {
		b = append(b, `" ht="`...)
		b = strconv.AppendFloat(b, ht, 'f', -1, 64)
		b = append(b, `" customHeight="1`...)
	}
	b = append(b, `">`...)
	prev := -1 // the column of the row's last cell written
	for c, v := range cells {
		if v == nil && styles[c] == 0 {
			continue
		}
		start := len(b)
		b = append(b, `<c`...)
		if c != prev+1 { // a cell after a gap says where it is
			for len(s.cols) <= c {
				s.cols = append(s.cols, []byte(colName(len(s.cols)+1)))
			}
			b = append(b, ` r="`...)
			b = append(b, s.cols[c]...)
			b = strconv.AppendInt(b, int64(r), 10)
			b = append(b, '"')
		}
		if st := styles[c]; st != 0 {
			b = append(b, ` s="`...)
			b = strconv.AppendInt(b, int64(st), 10)
			b = append(b, '"')
		}
		if f, ok := v.(float64); v == nil || ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			if styles[c] == 0 {
				b = b[:start]
			} else {
				b = append(b, `/>`...)
				prev = c
			}
			continue
		}
		prev = c
		switch x := v.(type) {
		case sharedIndex:
			b = append(b, ` t="s"><v>`...)
			b = strconv.AppendInt(b, int64(x), 10)
			b = append(b, `</v></c>`...)
		case string:
			b = append(b, ` t="inlineStr"><is><t`...)
			if x != "" && (isSpaceByte(x[0]) || isSpaceByte(x[len(x)-1])) {
				b = append(b, ` xml:space="preserve"`...)
			}
			b = append(b, '>')
			b = appendEscaped(b, x)
			b = append(b, `</t></is></c>`...)
		case bool:
			b = append(b, ` t="b"><v>`...)
			if x {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
			b = append(b, `</v></c>`...)
		case float64:
			b = append(b, `><v>`...)
			b = strconv.AppendFloat(b, x, 'f', -1, 64)
			b = append(b, `</v></c>`...)
		case float32:
			b = append(b, `><v>`...)
			b = strconv.AppendFloat(b, float64(x), 'f', -1, 32)
			b = append(b, `</v></c>`...)
		case int, int64, int32, int16, int8:
			b = append(b, `><v>`...)
			b = strconv.AppendInt(b, reflect.ValueOf(x).Int(), 10)
			b = append(b, `</v></c>`...)
		case uint, uint64, uint32, uint16, uint8:
			b = append(b, `><v>`...)
			b = strconv.AppendUint(b, reflect.ValueOf(x).Uint(), 10)
			b = append(b, `</v></c>`...)
		default: // as excelize writes a value of another type: its text
			b = append(b, ` t="inlineStr"><is><t>`...)
			b = appendEscaped(b, fmt.Sprint(x))
			b = append(b, `</t></is></c>`...)
		}
	}
	b = append(b, `</row>`...)
	s.buf = b
	_, err := s.w.Write(b)
	return err
}

// isSpaceByte is what makes excelize keep a text's spaces
// (xml:space="preserve"): a tab, newline, carriage return or space at
// either end.
func isSpaceByte(c byte) bool { return c == '\t' || c == '\n' || c == '\r' || c == ' ' }

// appendEscaped appends s as XML text: &, < and > as entities, a
// carriage return as &#xD; (kept through XML's line-end rule), invalid
// UTF-8 as U+FFFD. The texts reach here fitted (fitCell): no character
// XML cannot hold.
func appendEscaped(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return appendEscapedValid(b, s)
}

// appendEscapedValid is appendEscaped for s known to be UTF-8 (a fitted
// text).
func appendEscapedValid(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		esc := xmlEntity(s[i])
		if esc == "" {
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// xmlEntity is what byte c is written as in XML text when it is not
// itself: &, < and > as entities, a carriage return as &#xD; (kept
// through XML's line-end rule); "" for any other byte.
func xmlEntity(c byte) string {
	switch c {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '\r':
		return "&#xD;"
	}
	return ""
}

func (s *sheetWriter) flush() error { return s.w.Flush() }

// rawZip is the zip writer excelize writes the workbook's parts through,
// with the raw sheets' parts taken aside: each is held (it is small: no
// rows), then written with its <sheetData> replaced by the sheet's rows.
type rawZip struct {
	ctx     context.Context
	zw      *zip.Writer
	raws    map[string]*rawSheet
	shared  []*sharedStrings // the raw sheets' blocks of shared strings, by base
	pending *rawSheet
	sst     bool // the held part is the shared strings table
	part    bytes.Buffer
	done    map[string]bool
}

// sharedPart is the part excelize writes the shared strings table into.
const sharedPart = "xl/sharedStrings.xml"

func (z *rawZip) Create(name string) (io.Writer, error) {
	if err := z.finish(); err != nil {
		return nil, err
	}
	if r, ok := z.raws[name]; ok {
		z.pending = r
		z.part.Reset()
		return &z.part, nil
	}
	if name == sharedPart && len(z.shared) > 0 {
		z.sst = true
		z.part.Reset()
		return &z.part, nil
	}
	return z.zw.Create(name)
}

func (z *rawZip) AddFS(fsys fs.FS) error { return z.zw.AddFS(fsys) }

func (z *rawZip) Close() error {
	if err := z.finish(); err != nil {
		return err
	}
	for name := range z.raws {
		if !z.done[name] {
			return fmt.Errorf("writing the workbook: excelize wrote no part %s", name)
		}
	}
	if len(z.shared) > 0 && !z.done[sharedPart] {
		return fmt.Errorf("writing the workbook: excelize wrote no part %s", sharedPart)
	}
	return z.zw.Close()
}

// finish writes the held part, if any: up to its <sheetData>, the rows,
// then what follows it, the dimension set to the rows'.
func (z *rawZip) finish() error {
	if z.sst {
		return z.finishShared()
	}
	r := z.pending
	if r == nil {
		return nil
	}
	z.pending = nil
	xml := z.part.Bytes()
	head, tail, ok := cutSheetData(xml)
	if !ok {
		return fmt.Errorf("writing the workbook: %s has no <sheetData>", r.path)
	}
	head = setDimension(head, "A1:"+r.lastRef)
	if err := r.body.writePart(z.zw, r.path, head, tail); err != nil {
		return fmt.Errorf("writing the workbook: %s: %w", r.path, err)
	}
	z.done[r.path] = true
	return z.ctx.Err()
}

// finishShared writes the held shared strings table, each raw sheet's
// block of empty items replaced by its items.
func (z *rawZip) finishShared() error {
	z.sst = false
	cut, err := cutShared(z.part.Bytes(), z.shared)
	if err != nil {
		return fmt.Errorf("writing the workbook: %w", err)
	}
	pieces := []piece{{raw: cut[0]}}
	for i, b := range z.shared {
		pieces = append(pieces, piece{rows: b.d.d}, piece{raw: cut[i+1]})
	}
	if err := writeJoined(z.zw, sharedPart, pieces); err != nil {
		return fmt.Errorf("writing the workbook: %s: %w", sharedPart, err)
	}
	z.done[sharedPart] = true
	return z.ctx.Err()
}

// cutSheetData splits a worksheet part around its <sheetData> element
// (<sheetData/> or <sheetData>…</sheetData>, whatever excelize put in
// it): what comes before it and what comes after.
func cutSheetData(xml []byte) (head, tail []byte, ok bool) {
	i := bytes.Index(xml, []byte("<sheetData"))
	if i < 0 {
		return nil, nil, false
	}
	if j := bytes.Index(xml[i:], []byte("/>")); j >= 0 && !bytes.Contains(xml[i:i+j], []byte(">")) {
		return xml[:i], xml[i+j+2:], true
	}
	const end = "</sheetData>"
	j := bytes.Index(xml[i:], []byte(end))
	if j < 0 {
		return nil, nil, false
	}
	return xml[:i], xml[i+j+len(end):], true
}

// setDimension sets the ref of the part's <dimension> element.
func setDimension(head []byte, ref string) []byte {
	i := bytes.Index(head, []byte(`<dimension ref="`))
	if i < 0 {
		return head
	}
	i += len(`<dimension ref="`)
	j := bytes.IndexByte(head[i:], '"')
	if j < 0 {
		return head
	}
	out := make([]byte, 0, len(head)+len(ref))
	out = append(out, head[:i]...)
	out = append(out, ref...)
	return append(out, head[i+j:]...)
}
