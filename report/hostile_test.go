package report

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// hostileModels are model names that would leave the figures folder, put
// markup into a file name, or sanitise alike.
var hostileModels = []string{"../../../../../../ESCAPED-model", `m<svg onload="alert(1)">'`, "a/b", "a:b", "Tiny", "tiny", "मॉडल"}

// hostileFigures are the figures of a distractor run and an IndicQuest
// run whose models have hostile names and whose domains hold NUL,
// U+0001, ESC and a no-break space.
func hostileFigures(t *testing.T) ([]*tables.Table, []Figure) {
	t.Helper()
	mdi := table("accuracy", []string{"study", "model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate"})
	dom := table("domains", []string{"model", "language", "domain", "protocol", "k", "n", "rate"})
	for _, m := range hostileModels {
		for _, c := range []string{"clean", "hi"} {
			mdi.Rows = append(mdi.Rows, []any{"mdi", m, "eng", "english", "qa", c, "correct", 5, 10, 0.5},
				[]any{"mdi", m, "eng", "english", "qa", c, "abstain", 1, 10, 0.1})
		}
		for _, d := range []string{"Poli\x01tics", "Sci\x1bence", "Geo\x00graphy", "Arts\u00a0& <b>"} {
			dom.Rows = append(dom.Rows, []any{m, "hin", d, "judge", 1, 2, 0.5})
		}
	}
	figs := drawn(t, "hostile") // drawn from these tables (studies' TestReportFixtures)
	// and a figure made by hand, not by Figures: its text too is shown visibly
	figs = append(figs, Figure{Name: "../../hand\x00made", Caption: "x", Option: json.RawMessage(`{"title":{"text":"hand\u0000made \u001b[31m"}}`)})
	return []*tables.Table{mdi, dom}, figs
}

// browser is headless Chromium, or "" when it is not installed (a test
// fails instead when BHASHA_REQUIRE_BROWSER is set).
func browser(t *testing.T) string {
	b, err := exec.LookPath("chromium")
	if err != nil && os.Getenv("BHASHA_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium is required (BHASHA_REQUIRE_BROWSER) but not installed")
	}
	return b
}

// Exports of figures whose models have hostile names land inside the
// figures folder, every parent folder holding nothing else, one file per
// figure and kind (names that sanitise alike, or differ by case only,
// stay apart), of safe names; every SVG is XML; no figure's JSON holds a
// control character; the tables get their companion note.
func TestHostileNamesStayInFolder(t *testing.T) {
	ts, figs := hostileFigures(t)
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c", "d", "exports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	br := browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := WriteExports(ctx, dir, Page{Tables: ts, Figures: figs}, br); err != nil {
		t.Fatal(err)
	}
	checkInside(t, root, dir)
	kinds := []string{".json"}
	if br != "" {
		kinds = append(kinds, ".svg", ".png")
	}
	files, _ := os.ReadDir(filepath.Join(dir, "figures"))
	if len(files) != len(figs)*len(kinds) {
		t.Errorf("%d files for %d figures × %d kinds", len(files), len(figs), len(kinds))
	}
	lower := map[string]bool{}
	for _, f := range files {
		n := f.Name()
		if lower[strings.ToLower(n)] {
			t.Errorf("%s: another file differs only by case", n)
		}
		lower[strings.ToLower(n)] = true
		if strings.ContainsAny(n, "/\\<>:\"'|?* \x00\x01\x1b") || strings.Contains(n, "..") || strings.HasPrefix(n, ".") {
			t.Errorf("unsafe file name %q", n)
		}
		b, err := os.ReadFile(filepath.Join(dir, "figures", n))
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(n) {
		case ".svg":
			if err := parseXML(b); err != nil {
				t.Errorf("%s is not XML: %v", n, err)
			}
			if !strings.Contains(string(b), "Geo␀graphy") && strings.HasPrefix(n, "domains_") {
				t.Errorf("%s does not show NUL as ␀", n)
			}
		case ".json":
			var o any
			if err := json.Unmarshal(b, &o); err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			walkStrings(o, func(s string) {
				if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f }) {
					t.Errorf("%s holds a control character in %q", n, s)
				}
			})
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tables", tables.CSVNoteFile)); err != nil {
		t.Errorf("no companion note beside the CSV tables: %v", err)
	}
}

// checkInside fails t for any file under root outside dir, and any
// entry of dir's parents (up to root) but the next folder down.
func checkInside(t *testing.T, root, dir string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		if rel, _ := filepath.Rel(dir, p); !d.IsDir() && (rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
			t.Errorf("%s was written outside %s", p, dir)
		}
		return nil
	})
	for p := dir; p != root; p = filepath.Dir(p) {
		es, _ := os.ReadDir(filepath.Dir(p))
		if len(es) != 1 || es[0].Name() != filepath.Base(p) {
			var names []string
			for _, e := range es {
				names = append(names, e.Name())
			}
			t.Errorf("%s holds %q, want only %s", filepath.Dir(p), names, filepath.Base(p))
		}
	}
}

func parseXML(b []byte) error {
	d := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		if _, err := d.Token(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func walkStrings(x any, f func(string)) {
	switch y := x.(type) {
	case string:
		f(y)
	case []any:
		for _, v := range y {
			walkStrings(v, f)
		}
	case map[string]any:
		for _, v := range y {
			walkStrings(v, f)
		}
	}
}

// fitCell keeps what a cell holds, shows what XML cannot hold as control
// pictures, and cuts what is over Excel's limit (counted in UTF-16 units,
// as Excel counts) with a mark saying so, within the limit.
func TestFitCell(t *testing.T) {
	emoji := strings.Repeat("😀", 16384) // 16,384 characters, 32,768 UTF-16 units
	for _, c := range []struct {
		name, in       string
		controls, cut  int
		prefix, suffix string
	}{
		{"plain", "=cmd|' /C calc'!A0", 0, 0, "=cmd", "A0"},
		{"tab, lf, cr kept", "a\tb\nc\r", 0, 0, "a\tb\nc\r", ""},
		{"controls", "a\x00b\x01c\x1bd", 3, 0, "a␀b␁c␛d", ""},
		{"at the limit", strings.Repeat("x", MaxCellChars), 0, 0, "xxx", "xxx"},
		{"over", strings.Repeat("x", 40006), 0, 40006, "xxx", "… [cut: 40006 characters, full text in records.jsonl]"},
		{"over in UTF-16", emoji, 0, 16384, "😀", "… [cut: 16384 characters, full text in records.jsonl]"},
		{"both", "\x00" + strings.Repeat("हि", 20000), 1, 40001, "␀हि", "full text in records.jsonl]"},
	} {
		f := fitCell(c.in, "records.jsonl")
		if f.controls != c.controls || f.cut != c.cut || !strings.HasPrefix(f.text, c.prefix) || !strings.HasSuffix(f.text, c.suffix) ||
			utf16Len(f.text) > MaxCellChars || !utf8.ValidString(f.text) {
			t.Errorf("%s: controls %d cut %d, %d units, text %.40q…%q", c.name, f.controls, f.cut, utf16Len(f.text), f.text, f.text[max(0, len(f.text)-60):])
		}
		if !f.changed() && f.text != c.in {
			t.Errorf("%s: changed without a mark", c.name)
		}
	}
}

// The workbook says where it had to change text: a cut cell ends in the
// mark and stays within Excel's limit, control characters show as their
// pictures, each changed cell has the fill and a comment, on a table's
// sheet and on the streamed samples sheet, and the README sheet counts
// them.
func TestWorkbookMarksChangedText(t *testing.T) {
	long := strings.Repeat("L", 40006)
	ans := table("domains", []string{"model", "gold", "prediction"},
		[]any{"m", long, "ok"}, []any{"m", "NUL\x00 SOH\x01 ESC\x1b", "=cmd|' /C calc'!A0"}, []any{"m", "plain", "-0.5"})
	samples := table("samples", []string{"model", "prompt", "response", "gold"},
		[]any{"m", "Q " + long, "A\x00", "g"}, []any{"m", "fine", "fine", "fine"})
	f := readBack(t, Page{Title: "hostile", Simulated: true, Tables: []*tables.Table{ans}, Samples: samples,
		Provenance: [][2]string{{"model", "m\x1b"}}})
	for _, c := range []struct {
		sheet, cell, want, comment string
	}{
		{"domains", "B2", "… [cut: 40006 characters, full text in tables/domains.csv]", "cut from 40006 characters"},
		{"domains", "B3", "NUL␀ SOH␁ ESC␛", "3 control character(s)"},
		{"samples", "B2", "… [cut: 40008 characters, full text in records.jsonl]", "cut from 40008"},
		{"samples", "C2", "A␀", "␀"},
		{"provenance", "B2", "m␛", "␛"},
	} {
		v, err := f.GetCellValue(c.sheet, c.cell)
		if err != nil || !strings.HasSuffix(v, c.want) || utf16Len(v) > MaxCellChars {
			t.Errorf("%s!%s: %d units ending %q, want the end %q (%v)", c.sheet, c.cell, utf16Len(v), v[max(0, len(v)-80):], c.want, err)
		}
		if fill := fillOf(t, f, c.sheet, c.cell); fill != changedFill {
			t.Errorf("%s!%s: fill %q, want %q", c.sheet, c.cell, fill, changedFill)
		}
		if cm := commentOn(t, f, c.sheet, c.cell); !strings.Contains(cm, c.comment) || !strings.Contains(cm, "exact text is in") {
			t.Errorf("%s!%s: comment %q lacks %q", c.sheet, c.cell, cm, c.comment)
		}
	}
	for _, c := range [][2]string{{"domains", "C3"}, {"domains", "B4"}, {"samples", "B3"}} {
		if fill := fillOf(t, f, c[0], c[1]); fill == changedFill {
			t.Errorf("%s!%s is marked changed, but is not", c[0], c[1])
		}
	}
	if formula, _ := f.GetCellFormula("domains", "C3"); formula != "" {
		t.Errorf("domains!C3 holds the formula %q", formula)
	}
	rows, _ := f.GetRows("README")
	var readme []string
	for _, r := range rows {
		readme = append(readme, strings.Join(r, " "))
	}
	all := strings.Join(readme, "\n")
	for _, want := range []string{"Text changed to fit Excel's limits", "Sheet 'domains': 1 cell(s) cut, 1 cell(s) with 3 control character(s) shown as pictures (exact text in tables/domains.csv)",
		"Sheet 'samples': 1 cell(s) cut, 1 cell(s) with 1 control character(s)", "Sheet 'provenance': 1 cell(s) with 1 control character(s)"} {
		if !strings.Contains(all, want) {
			t.Errorf("README lacks %q:\n%s", want, all)
		}
	}
	// A workbook that changed nothing says nothing about it.
	g := readBack(t, Page{Title: "plain", Tables: []*tables.Table{table("answers", []string{"gold"}, []any{"x"})}})
	if rows, _ := g.GetRows("README"); strings.Contains(strings.Join(rows[len(rows)-1], ""), "changed") {
		t.Errorf("README of an unchanged workbook: %q", rows)
	}
}

func fillOf(t *testing.T, f *excelize.File, sheet, cell string) string {
	t.Helper()
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil || len(st.Fill.Color) == 0 {
		return ""
	}
	return "#" + strings.TrimPrefix(st.Fill.Color[0], "#")
}

func commentOn(t *testing.T, f *excelize.File, sheet, cell string) string {
	t.Helper()
	cs, err := f.GetComments(sheet)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Cell == cell {
			var sb strings.Builder
			for _, p := range c.Paragraph {
				sb.WriteString(p.Text)
			}
			return sb.String() + c.Text
		}
	}
	return ""
}
