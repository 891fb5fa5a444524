package report

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Two streamed sheets, with texts excelize numbers before, between and
// after them, read back through excelize cell by cell as written: each
// sheet's texts are items of the one shared strings table, each distinct
// text of a sheet written there once; repeated texts (a prompt every
// model is sent), spaces at the ends, markup, Indic scripts, an empty
// text; a text fitCell changes is changed and marked in every cell that
// holds it.
func TestSharedStringsBlocks(t *testing.T) {
	prompt := "Q: राजधानी <b>&</b>\nA:"
	control := "bell\x07 here"
	sheets := map[string][][]any{
		"one": {
			{"m1", prompt, " lead", 0.5},
			{"m2", prompt, "trail\n", 0.25},
			{"m3", prompt, "", 1.0},
			{"m1", control, "রোম", 0.0},
			{"m2", control, "রোম", 0.0},
		},
		"two": {
			{"m1", prompt, "x", 0.5},
			{"m2", "second's own", "x", 0.5},
		},
	}
	f := excelize.NewFile()
	st, err := newStyles(f)
	if err != nil {
		t.Fatal(err)
	}
	f.SetCellStr("Sheet1", "A1", "before")
	var raws []rawSheet
	defer func() {
		for _, r := range raws {
			r.close()
		}
	}()
	for i, name := range []string{"one", "two"} {
		tb := &tables.Table{Name: name, Header: []string{"model", "prompt", "response", "rate"}, Rows: sheets[name]}
		_, raw, err := writeStream(context.Background(), f, name, TableRows(tb), 0, 100, "x.csv", st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
		f.SetCellStr("Sheet1", cellName(1, i+2), []string{"between", "after"}[i])
	}
	var b bytes.Buffer
	if err := writeWorkbook(context.Background(), f, &b, raws); err != nil {
		t.Fatal(err)
	}
	g, err := excelize.OpenReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range []string{"before", "between", "after"} {
		if got, _ := g.GetCellValue("Sheet1", cellName(1, r+1)); got != want {
			t.Errorf("Sheet1 A%d: %q, want %q", r+1, got, want)
		}
	}
	for name, rows := range sheets {
		for r, row := range rows {
			for c, v := range row {
				cell := cellName(c+1, r+2)
				got, _ := g.GetCellValue(name, cell, excelize.Options{RawCellValue: true})
				want, ok := v.(string)
				if !ok {
					continue
				}
				if want == control {
					want = "bell␇ here"
				}
				if got != want {
					t.Errorf("%s %s: %q, want %q", name, cell, got, want)
				}
				typ, _ := g.GetCellType(name, cell)
				if want != "" && typ != excelize.CellTypeSharedString {
					t.Errorf("%s %s: type %v, want a shared string", name, cell, typ)
				}
				if style, _ := g.GetCellStyle(name, cell); (v == control) != (style == st.changed) {
					t.Errorf("%s %s: style %d; the changed text's is %d", name, cell, style, st.changed)
				}
			}
		}
	}
	zr, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var sst string
	for _, zf := range zr.File {
		if zf.Name == sharedPart {
			rc, err := zf.Open()
			if err != nil {
				t.Fatal(err)
			}
			x, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			sst = string(x)
		}
	}
	// The prompt: once for each sheet. Its escaped text is the proof.
	if n := strings.Count(sst, "Q: राजधानी &lt;b&gt;&amp;&lt;/b&gt;\nA:"); n != 2 {
		t.Errorf("the shared prompt is in the table %d times, want 2 (once a sheet)", n)
	}
	if n := strings.Count(sst, "রোম"); n != 1 {
		t.Errorf("রোম is in the table %d times, want 1", n)
	}
	if strings.Contains(sst, emptyItem) {
		t.Error("an empty item excelize was given for a sheet's text is still in the table")
	}
}

// Past maxSharedItems, a sheet's new texts are written inline, fitted;
// the texts already in the block are still shared.
func TestSharedStringsFull(t *testing.T) {
	f := excelize.NewFile()
	s, err := newSharedStrings(f, "Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	first, _, err := s.cell("first", "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	s.n = maxSharedItems
	// Past the limit a text by reference is an inline cell of its own,
	// not the buffer Text reads it into.
	buf := []byte("by reference")
	ref, _, err := s.cellRef(7, func(TextRef) (string, error) { return unsafe.String(unsafe.SliceData(buf), len(buf)), nil }, "x.csv")
	copy(buf, "overwritten!")
	if err != nil || ref != "by reference" {
		t.Errorf("cellRef past the limit: %v (%v), want the text inline", ref, err)
	}
	for _, tc := range []struct {
		text string
		want any
	}{
		{"first", first},
		{"new\x00", "new␀"},
	} {
		got, _, err := s.cell(tc.text, "x.csv")
		if err != nil || got != tc.want {
			t.Errorf("cell(%q): %v (%v), want %v", tc.text, got, err, tc.want)
		}
	}
}

// cutShared finds each block's empty items among excelize's, whatever
// form the items before them take, and refuses a table whose items
// there are not empty.
func TestCutShared(t *testing.T) {
	head, tail := `<sst count="6" uniqueCount="6">`, `</sst>`
	for _, tc := range []struct {
		name   string
		xml    string
		blocks []*sharedStrings
		want   []string
		err    bool
	}{
		{"two blocks", head + `<si><t>a</t></si><si></si><si></si><si><r><t>b</t></r></si><si/><si></si>` + tail,
			[]*sharedStrings{{base: 1, n: 2}, {base: 5, n: 1}},
			[]string{head + `<si><t>a</t></si>`, `<si><r><t>b</t></r></si><si/>`, tail}, false},
		{"at the start", head + `<si></si><si><t>a</t></si>` + tail, []*sharedStrings{{base: 0, n: 1}},
			[]string{head, `<si><t>a</t></si>` + tail}, false},
		{"not empty", head + `<si><t>a</t></si><si><t>b</t></si>` + tail, []*sharedStrings{{base: 1, n: 1}}, nil, true},
		{"past the end", head + `<si><t>a</t></si>` + tail, []*sharedStrings{{base: 1, n: 1}}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cutShared([]byte(tc.xml), tc.blocks)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d pieces %q, want %q", len(got), got, tc.want)
			}
			for i := range got {
				if string(got[i]) != tc.want[i] {
					t.Errorf("piece %d %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// A text by reference (TextRef) is read through Rows.Text once, however
// many cells hold it, and reads back as itself, fitted and marked as a
// text given as itself is; rows with a reference and no Text are
// refused.
func TestSharedStringsByReference(t *testing.T) {
	texts := map[TextRef]string{1: "Q: राजधानी <b>&</b>\nA:", 2: "second", 3: "bell\x07 here"}
	rows := [][]any{
		{"m1", TextRef(1)},
		{"m2", TextRef(1)},
		{"m1", TextRef(2)},
		{"m2", TextRef(3)},
		{"m3", TextRef(3)},
		{"m3", TextRef(1)},
	}
	reads := map[TextRef]int{}
	each := func(ctx context.Context, fn func([]any) error) error {
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
	f := excelize.NewFile()
	st, err := newStyles(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte // Text's text holds only until the next call: the buffer is reused
	rs := &Rows{Name: "refs", Header: []string{"model", "prompt"}, Len: len(rows), Each: each,
		Text: func(ref TextRef) (string, error) {
			reads[ref]++
			buf = append(buf[:0], texts[ref]...)
			return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
		}}
	_, raw, err := writeStream(context.Background(), f, "refs", rs, 0, 100, "x.csv", st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeWorkbook(context.Background(), f, &b, []rawSheet{raw}); err != nil {
		t.Fatal(err)
	}
	for ref, n := range reads {
		if n != 1 {
			t.Errorf("ref %d read %d times, want once", ref, n)
		}
	}
	if len(reads) != 3 {
		t.Errorf("%d refs read, want 3", len(reads))
	}
	g, err := excelize.OpenReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for r, row := range rows {
		cell := cellName(2, r+2)
		ref := row[1].(TextRef)
		want := texts[ref]
		if ref == 3 {
			want = "bell␇ here"
		}
		if got, _ := g.GetCellValue("refs", cell); got != want {
			t.Errorf("%s: %q, want %q", cell, got, want)
		}
		if typ, _ := g.GetCellType("refs", cell); typ != excelize.CellTypeSharedString {
			t.Errorf("%s: type %v, want a shared string", cell, typ)
		}
		if style, _ := g.GetCellStyle("refs", cell); (ref == 3) != (style == st.changed) {
			t.Errorf("%s: style %d; the changed text's is %d", cell, style, st.changed)
		}
	}

	rs.Text = nil
	g2 := excelize.NewFile()
	st2, err := newStyles(g2)
	if err != nil {
		t.Fatal(err)
	}
	if _, raw, err := writeStream(context.Background(), g2, "refs", rs, 0, 100, "x.csv", st2, Options{}); err == nil {
		raw.close()
		t.Error("rows with a text by reference and no Text: written")
	}
}
