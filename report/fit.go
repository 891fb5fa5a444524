package report

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// MaxCellChars is Excel's limit on the text of one cell: 32,767
// characters, counted as Excel counts them (UTF-16 code units).
const MaxCellChars = 32767

// MaxNoteComments bounds the comments one sheet gets on the cells whose
// text had to change (each comment is a shape in the workbook); past it a
// changed cell keeps its fill and its text's own mark.
const MaxNoteComments = 1000

// changedFill is the fill of a cell whose text had to change to fit.
const changedFill = "#FCE4D6"

// fitted is a text as a cell can hold it (fitCell) and what changed.
type fitted struct {
	text     string
	controls int // characters XML cannot hold, now their control pictures
	cut      int // the text's length in characters when it was cut, else 0
}

func (f fitted) changed() bool { return f.controls > 0 || f.cut > 0 }

// fitCell is s as a cell holds it: control pictures for what XML cannot hold,
// over MaxCellChars cut at a grapheme to end in "… [cut: N characters, full text in FULL]".
func fitCell(s, full string) fitted {
	v, n := tables.VisibleXML(s)
	f := fitted{text: v, controls: n}
	if len(v) <= MaxCellChars || utf16Len(v) <= MaxCellChars { // a UTF-16 unit takes at least a byte
		return f
	}
	f.cut = utf8.RuneCountInString(s)
	mark := fmt.Sprintf("… [cut: %d characters, full text in %s]", f.cut, full)
	room, units := MaxCellChars-utf16Len(mark), 0
	for i, r := range v {
		if units += utf16.RuneLen(r); units > room {
			f.text = v[:graphemeStart(v, i)] + mark
			break
		}
	}
	return f
}

// utf16Len is s's length in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

const recordsFile = "records.jsonl"

// fullTextIn names the run directory's file holding column c of table name in
// full: records.jsonl, tables/answers.csv for a sample's texts, else its CSV.
func fullTextIn(name string, header []string, c int) string {
	if name == "samples" {
		if c < len(header) && (header[c] == "prompt" || header[c] == "response" || header[c] == "error") {
			return recordsFile
		}
		return "tables/answers.csv"
	}
	return "tables/" + tables.FileName(name) + ".csv"
}

// changeLog records the cells whose text fitCell changed: each sheet's
// cells still to mark (apply) and counts (lines).
type changeLog struct {
	sheets []string
	counts map[string]*sheetChanges
}

type sheetChanges struct {
	cut, controlCells, controls, comments int
	where                                 []string    // the files the full texts are in
	pending                               [][2]string // the cells still to be marked, and their notes
}

// add logs that cell of sheet holds fit, its exact text in file full.
func (l *changeLog) add(sheet, cell string, fit fitted, full string) {
	c := l.counts[sheet]
	if c == nil {
		c = &sheetChanges{}
		l.counts[sheet] = c
		l.sheets = append(l.sheets, sheet)
	}
	var what []string
	if fit.cut > 0 {
		c.cut++
		what = append(what, fmt.Sprintf("cut from %d characters to Excel's limit of %d", fit.cut, MaxCellChars))
	}
	if fit.controls > 0 {
		c.controlCells++
		c.controls += fit.controls
		what = append(what, fmt.Sprintf("%d control character(s) that XML cannot hold shown as their Unicode control pictures (%s)", fit.controls, pictures(fit.text)))
	}
	if !slices.Contains(c.where, full) {
		c.where = append(c.where, full)
	}
	c.pending = append(c.pending, [2]string{cell, "Bhasha changed this cell's text to fit Excel: " + strings.Join(what, "; ") + ". The exact text is in the run directory's " + full + "."})
}

// pictures lists the distinct control pictures in s ("␀ ␁ ␛").
func pictures(s string) string {
	var seen []string
	for _, r := range s {
		if r >= 0x2400 && r <= 0x2421 && !slices.Contains(seen, string(r)) {
			seen = append(seen, string(r))
		}
	}
	return strings.Join(seen, " ")
}

// apply marks sheet's logged cells not yet marked: the fill style (0:
// none) and, for the first MaxNoteComments, a comment on what changed.
func (l *changeLog) apply(f *excelize.File, sheet string, style int) {
	n := l.counts[sheet]
	if n == nil {
		return
	}
	for _, c := range n.pending {
		if style != 0 {
			f.SetCellStyle(sheet, c[0], c[0], style)
		}
		if n.comments < MaxNoteComments {
			if f.AddComment(sheet, excelize.Comment{Cell: c[0], Author: "Bhasha", Paragraph: []excelize.RichTextRun{{Text: c[1]}}}) == nil {
				n.comments++
			}
		}
	}
	n.pending = nil
}

// lines are the README's account of the changed cells (none when none).
func (l *changeLog) lines() []string {
	if len(l.sheets) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("Text changed to fit Excel's limits (cells of at most %d characters; no control character XML cannot hold): each such cell has an orange fill and a comment saying what changed (the first %d of a sheet); a cut text ends in \"… [cut: N characters, full text in FILE]\"; control characters show as their Unicode control pictures (␀ for NUL U+0000, ␁ for U+0001, ␛ for ESC U+001B, …). The exact texts are in the run directory's files named.", MaxCellChars, MaxNoteComments)}
	for _, s := range l.sheets {
		c := l.counts[s]
		var parts []string
		if c.cut > 0 {
			parts = append(parts, fmt.Sprintf("%d cell(s) cut", c.cut))
		}
		if c.controlCells > 0 {
			parts = append(parts, fmt.Sprintf("%d cell(s) with %d control character(s) shown as pictures", c.controlCells, c.controls))
		}
		out = append(out, fmt.Sprintf("Sheet '%s': %s (exact text in %s).", s, strings.Join(parts, ", "), strings.Join(c.where, ", ")))
	}
	return out
}
