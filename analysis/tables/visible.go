package tables

import (
	"strings"
	"unicode/utf8"
)

// Visible is Bhasha's one policy for the characters an export cannot hold
// or a reader cannot see (NUL, U+0001 and ESC from a dataset make an SVG
// invalid XML and a LaTeX table one pdflatex refuses): each C0 control
// character but tab and line feed (U+0000–U+001F: NUL, U+0001, ESC, CR,
// …) becomes its Unicode control picture (U+2400–U+241F: ␀ ␁ ␛ ␍), DEL
// (U+007F) its picture ␡ (U+2421), and a byte that is not UTF-8, or a
// noncharacter XML forbids (U+FFFE, U+FFFF), the replacement character
// U+FFFD. The text stays readable and still says which character stood
// where; everything else (C1 controls included, which XML 1.0 and UTF-8
// LaTeX hold) is kept, and s itself is returned when nothing changes.
//
// The figures (ECharts options, so their SVG and PNG), the LaTeX and the
// Markdown tables show text through Visible; the workbook changes only
// what XML cannot hold (VisibleXML); CSV files hold the exact text.
func Visible(s string) string {
	v, _ := visible(s, func(r rune) bool { return r == '\t' || r == '\n' })
	return v
}

// VisibleXML applies Visible's replacements only to what an XML document
// cannot hold (C0 controls but tab, line feed and carriage return;
// U+FFFE, U+FFFF; bytes that are not UTF-8), as a workbook's cells need,
// and says how many characters it replaced.
func VisibleXML(s string) (string, int) {
	return visible(s, func(r rune) bool { return r == '\t' || r == '\n' || r == '\r' || r == 0x7f })
}

// ControlPicture is the character Visible shows for r: its Unicode
// control picture for a C0 control or DEL, U+FFFD for U+FFFE, U+FFFF or
// utf8.RuneError, else r itself.
func ControlPicture(r rune) rune {
	switch {
	case r < 0x20:
		return 0x2400 + r
	case r == 0x7f:
		return 0x2421
	case r == 0xfffe || r == 0xffff:
		return utf8.RuneError
	}
	return r
}

// visible replaces every character ControlPicture changes, except those
// keep holds, and counts them.
func visible(s string, keep func(rune) bool) (string, int) {
	var sb strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		// a byte that is not UTF-8 (a real U+FFFD is 3 bytes), or a character to show
		bad := r == utf8.RuneError && size == 1 || r != utf8.RuneError && ControlPicture(r) != r && !keep(r)
		switch {
		case bad:
			if n == 0 {
				sb.Grow(len(s) + 8)
				sb.WriteString(s[:i])
			}
			sb.WriteRune(ControlPicture(r))
			n++
		case n > 0:
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	if n == 0 {
		return s, 0
	}
	return sb.String(), n
}
