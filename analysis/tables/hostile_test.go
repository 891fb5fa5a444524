package tables

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is text a dataset or a model may hand the renderers: formulas,
// a negative number, control characters, markup.
var hostile = []string{
	"=cmd|' /C calc'!A0", "+1+1", "-0.5", "@SUM(A1)", "\t=HYPERLINK(\"http://x\")", "\r=1",
	"NUL\x00 SOH\x01 ESC\x1b[31m DEL\x7f", "line\nbreak", `m<svg onload="alert(1)">'`, "हिन्दी\u0000",
}

// FileName keeps a name that is already safe, and makes every other one
// a single file name inside its folder: no separator, no "..", no
// leading dot, nothing but letters, marks, digits, '-', '_' and '.'; a
// changed name ends in its hash.
func TestFileName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"accuracy", "accuracy"},
		{"conditions_tiny-1b", "conditions_tiny-1b"},
		{"form_accuracy_Qwen2.5-7B_baseline", "form_accuracy_Qwen2.5-7B_baseline"},
		{"हिन्दी_मॉडल", "हिन्दी_मॉडल"}, // letters of any script, with their vowel signs
		{"তামিল১২", "তামিল১২"},
		{"../../../../../../ESCAPED-model", "_ESCAPED-model-"},
		{"domains_../../x_judge", "domains_x_judge-"},
		{`m<svg onload=alert(1)>"'`, "m_svg_onload_alert_1_-"},
		{"..", "_-"},
		{".hidden", "_hidden-"},
		{"trailing.", "trailing_-"},
		{"a/b", "a_b-"},
		{"C:\\x", "C_x-"},
		{"nul\x00byte", "nul_byte-"},
		{"", "_-"},
		{"CON", "_CON-"},
		{"lpt1.txt", "_lpt1.txt-"},
		{"bad\xffutf8", "bad_utf8-"},
	} {
		got := FileName(c.in)
		if strings.HasSuffix(c.want, "-") {
			if !strings.HasPrefix(got, c.want) || len(got) != len(c.want)+8 {
				t.Errorf("FileName(%q) = %q, want %q and 8 hex digits", c.in, got, c.want)
			}
		} else if got != c.want {
			t.Errorf("FileName(%q) = %q, want %q", c.in, got, c.want)
		}
		checkFileName(t, c.in, got)
	}
	long := FileName(strings.Repeat("मॉडल", 100))
	if !utf8.ValidString(long) || len(long) > MaxFileName+9 {
		t.Errorf("a long name gives %d bytes (valid UTF-8 %v)", len(long), utf8.ValidString(long))
	}
	for _, h := range hostile {
		checkFileName(t, h, FileName(h))
	}
	// Names that sanitise alike keep distinct files.
	seen := map[string]string{}
	for _, n := range []string{"a/b", "a:b", "a b", "a_b", "a<b", strings.Repeat("x", 300), strings.Repeat("x", 301)} {
		f := FileName(n)
		if o, ok := seen[f]; ok {
			t.Errorf("%q and %q both give %q", o, n, f)
		}
		seen[f] = n
	}
}

func checkFileName(t *testing.T, in, got string) {
	t.Helper()
	if got == "" || got == "." || got == ".." || strings.HasPrefix(got, ".") || strings.Contains(got, "..") || filepath.Base(got) != got ||
		strings.ContainsAny(got, "/\\<>:\"'|?* \x00") || len(got) > MaxFileName+9 {
		t.Errorf("FileName(%q) = %q is not one safe file name", in, got)
	}
}

// FileNames keeps names apart that only case tells apart (one file on
// macOS and Windows).
func TestFileNames(t *testing.T) {
	var u FileNames
	var got []string
	for _, n := range []string{"tiny", "Tiny", "TINY", "tiny-2", "a/b", "a/b"} {
		got = append(got, u.Name(n))
	}
	lower := map[string]bool{}
	for _, g := range got {
		if lower[strings.ToLower(g)] {
			t.Errorf("file names collide: %q", got)
		}
		lower[strings.ToLower(g)] = true
	}
	if got[0] != "tiny" || got[1] != "Tiny-2" || got[3] != "tiny-2-2" {
		t.Errorf("names %q", got)
	}
}

// Visible shows each C0 control but tab and line feed, and DEL, as its
// control picture, and whatever XML forbids as U+FFFD; VisibleXML only
// what XML cannot hold.
func TestVisible(t *testing.T) {
	for _, c := range []struct{ in, want, xml string }{
		{"plain हिन्दी", "plain हिन्दी", "plain हिन्दी"},
		{"a\x00b\x01c\x1bd", "a␀b␁c␛d", "a␀b␁c␛d"},
		{"tab\tlf\ncr\r", "tab\tlf\ncr␍", "tab\tlf\ncr\r"},
		{"del\x7f", "del␡", "del\x7f"},
		{"c1\u0085", "c1\u0085", "c1\u0085"},
		{"bad\xff\ufffe\uffff", "bad\ufffd\ufffd\ufffd", "bad\ufffd\ufffd\ufffd"},
		{"real\ufffd", "real\ufffd", "real\ufffd"},
		{"nc\ufffe and \uffff", "nc\ufffd and \ufffd", "nc\ufffd and \ufffd"},
		{"near \uffef\ufffd\uffbe\uffff", "near \uffef\ufffd\uffbe\ufffd", "near \uffef\ufffd\uffbe\ufffd"},
		{"end \uffbf\u00ef", "end \uffbf\u00ef", "end \uffbf\u00ef"},
	} {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
		if got, _ := VisibleXML(c.in); got != c.xml {
			t.Errorf("VisibleXML(%q) = %q, want %q", c.in, got, c.xml)
		}
	}
	if _, n := VisibleXML("\x00\x01\x1b ok \x1b"); n != 4 {
		t.Errorf("VisibleXML counted %d, want 4", n)
	}
}

func hostileTable() *Table {
	tb := &Table{Name: "answers", Header: []string{"model", "prediction", "rate"}, Simulated: true}
	for _, h := range hostile {
		tb.Rows = append(tb.Rows, []any{"m\x1b", h, -0.5})
	}
	return tb
}

// No control byte but line feed and tab reaches a LaTeX or
// Markdown table; the control characters show as their pictures.
func TestRenderersShowControls(t *testing.T) {
	tb := hostileTable()
	for name, out := range map[string]string{"LaTeX": tb.LaTeX(), "Markdown": tb.Markdown()} {
		for i := 0; i < len(out); i++ {
			if b := out[i]; b < 0x20 && b != '\n' && b != '\t' || b == 0x7f {
				t.Errorf("%s holds the control byte %#x at %d: %q", name, b, i, out[max(0, i-20):min(len(out), i+20)])
			}
		}
		for _, want := range []string{"NUL␀ SOH␁ ESC␛[31m DEL␡", "m␛", "हिन्दी␀"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
		if strings.Contains(out, "\n\n") && name == "LaTeX" {
			t.Errorf("LaTeX has a blank line (ends the tabular's paragraph):\n%s", out)
		}
	}
}

// The CSV holds every hostile cell exactly (read back with encoding/csv),
// -0.5 as the number it is, and Write puts the companion note beside the
// tables.
func TestCSVExact(t *testing.T) {
	tb := hostileTable()
	var b bytes.Buffer
	if err := tb.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(hostile) {
		t.Fatalf("%d records", len(recs))
	}
	for i, h := range hostile {
		if r := recs[i+1]; r[1] != "m\x1b" || r[2] != h || r[3] != "-0.5" {
			t.Errorf("row %d reads back %q, want %q", i, recs[i+1], h)
		}
	}
	dir := t.TempDir()
	if err := Write(dir, []*Table{tb}); err != nil {
		t.Fatal(err)
	}
	note, err := os.ReadFile(filepath.Join(dir, CSVNoteFile))
	if err != nil || !bytes.Contains(note, []byte("Do NOT open them by double-click")) || !bytes.Contains(note, []byte("-0.5")) {
		t.Errorf("%s: %v\n%s", CSVNoteFile, err, note)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if !slices.Equal(files, []string{filepath.Join(dir, CSVNoteFile), filepath.Join(dir, "answers.csv")}) {
		t.Errorf("files %q", files)
	}
}
