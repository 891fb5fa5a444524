package report

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/xuri/excelize/v2"
)

// The rows Bhasha writes into a streamed sheet read back, through
// excelize, as the rows excelize's StreamWriter writes: every value, type
// and style, text with markup characters, spaces at the ends, line breaks
// and Indic scripts, numbers of every kind, booleans, empty cells (a NaN: empty, in its
// column's format).
func TestRawSheetReadsAsStreamWriter(t *testing.T) {
	rows := [][]any{
		{"plain", 1, 0.25, true, nil, "नमस्ते <b>&amp;</b>"},
		{" lead", int64(-7), 1e-300, false, "trail\t", "a\nb\r\nc"},
		{"=SUM(A1)", uint8(3), math.NaN(), nil, "", "'quoted' \"double\""},
		{"x", 12345678901, 3.0, true, "ময়", float32(1.5)},
	}
	styles := []int{0, 0, 0, 0, 0, 0}
	build := func(raw bool) *excelize.File {
		f := excelize.NewFile()
		st, err := f.NewStyle(&excelize.Style{NumFmt: 2})
		if err != nil {
			t.Fatal(err)
		}
		f.NewSheet("s")
		var b bytes.Buffer
		if raw {
			ss := append([]int(nil), styles...)
			ss[2] = st
			b.Write(rawWorkbook(t, f, "s", "F5", rows, ss))
		} else {
			sw, err := f.NewStreamWriter("s")
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rows {
				vals := make([]any, len(r))
				for c, v := range r {
					switch x := v.(type) {
					case float64: // NaN: an empty cell in the column's format
						vals[c] = excelize.Cell{StyleID: st, Value: x}
						if math.IsNaN(x) {
							vals[c] = excelize.Cell{StyleID: st}
						}
					case string:
						vals[c] = excelize.Cell{Value: x}
					default:
						vals[c] = v
					}
				}
				if err := sw.SetRow(cellName(1, i+1), vals); err != nil {
					t.Fatal(err)
				}
			}
			if err := sw.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := writeWorkbook(context.Background(), f, &b, nil); err != nil {
				t.Fatal(err)
			}
		}
		g, err := excelize.OpenReader(&b)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	want, got := build(false), build(true)
	for r := 1; r <= len(rows); r++ {
		for c := 1; c <= 6; c++ {
			cell := cellName(c, r)
			wv, _ := want.GetCellValue("s", cell, excelize.Options{RawCellValue: true})
			gv, _ := got.GetCellValue("s", cell, excelize.Options{RawCellValue: true})
			wt, _ := want.GetCellType("s", cell)
			gt, _ := got.GetCellType("s", cell)
			ws, _ := want.GetCellStyle("s", cell)
			gs, _ := got.GetCellStyle("s", cell)
			wf, _ := want.GetCellFormula("s", cell)
			gf, _ := got.GetCellFormula("s", cell)
			if wv != gv || wt != gt || ws != gs || wf != gf {
				t.Errorf("%s: %q (type %v, style %d, formula %q); the StreamWriter's %q (type %v, style %d, formula %q)", cell, gv, gt, gs, gf, wv, wt, ws, wf)
			}
		}
	}
	if d, _ := got.GetSheetDimension("s"); d != "A1:F5" {
		t.Errorf("dimension %q", d)
	}
}

// A cell right after its row's previous one carries no reference; the
// first after a gap (an absent cell), or after a column skipped, does.
func TestRowReferencesOnlyAfterGaps(t *testing.T) {
	cases := []struct {
		name   string
		cells  []any
		styles []int
		want   string
	}{
		{"contiguous", []any{"a", 1.5, true}, []int{0, 0, 0},
			`<row r="7"><c t="inlineStr"><is><t>a</t></is></c><c><v>1.5</v></c><c t="b"><v>1</v></c></row>`},
		{"first absent", []any{nil, 2.0}, []int{0, 0},
			`<row r="7"><c r="B7"><v>2</v></c></row>`},
		{"gap", []any{1.0, nil, nil, 4.0, 5.0}, []int{0, 0, 0, 0, 0},
			`<row r="7"><c><v>1</v></c><c r="D7"><v>4</v></c><c><v>5</v></c></row>`},
		{"empty styled cell is a cell", []any{1.0, math.NaN(), 3.0}, []int{0, 9, 0},
			`<row r="7"><c><v>1</v></c><c s="9"/><c><v>3</v></c></row>`},
		{"empty unstyled cell is a gap", []any{1.0, math.NaN(), 3.0}, []int{0, 0, 0},
			`<row r="7"><c><v>1</v></c><c r="C7"><v>3</v></c></row>`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			w := newSheetWriter(&b)
			if err := w.row(7, c.cells, c.styles); err != nil {
				t.Fatal(err)
			}
			if err := w.flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("got  %s\nwant %s", b.String(), c.want)
			}
		})
	}
}

// rawWorkbook is f's workbook with sheet's rows (its last cell lastRef)
// written by the sheet writer, each row's cells in styles.
func rawWorkbook(t *testing.T, f *excelize.File, sheet, lastRef string, rows [][]any, styles []int) []byte {
	t.Helper()
	path, err := sheetPath(f, sheet)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := deflateSheet(path, lastRef, func(w *sheetWriter) error {
		for i, r := range rows {
			if err := w.row(i+1, r, styles); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeWorkbook(context.Background(), f, &b, []rawSheet{rs}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
