package report

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/xuri/excelize/v2"
)

// A streamed sheet's texts are written as Excel writes them: each
// distinct text once, as an item of the workbook's shared strings table
// (the part xl/sharedStrings.xml, ECMA-376 Part 1 §18.4), each cell
// holding its item's index (t="s"). A run's samples repeat most of their
// texts (the models of a run are sent the same prompts; a model, a
// language, a strategy fill a column), so each is fitted, escaped and
// deflated once, and the sheet is a fraction of what inline strings make
// of it.
//
// excelize owns the table: the texts of the sheets it writes are items
// of it. A streamed sheet's items are a block of the table: the block
// starts at the table's length when the sheet's rows are written (base);
// once they are written, as many empty items are put in excelize's table
// (reserve), so that the texts excelize gets later are numbered after
// the block. When the workbook is written, the block's empty items in
// excelize's part are replaced by the sheet's items, deflated ahead with
// its rows (rawZip.finishShared).

// maxSharedItems bounds a sheet's block, and so the index of its items
// by hash (a 16-byte key and a 4-byte place in a Go map: an estimated 40
// bytes an item, not measured): past it, a text not in the block is
// written inline in its cell.
const maxSharedItems = 1 << 21

// sharedIndex is a cell holding the shared string item at this index.
type sharedIndex int

// sharedStrings is a streamed sheet's block of the shared strings table.
type sharedStrings struct {
	base    int                 // the index of the block's first item in the table
	n       int                 // items in the block
	items   map[[2]uint64]int32 // an item's place in the block, by its text's hash
	refs    map[TextRef]int32   // an item's place in the block, by a reference to its text
	changed map[int32]fitted    // the items whose text fitCell changed, and how
	seed    [2]maphash.Seed
	d       *rowsDeflater // the items, deflated (d.d once reserve ends the block)
	w       *bufio.Writer
	buf     []byte
}

// newSharedStrings starts the block of sheet's texts, at the end of f's
// table (which it makes, if f has none yet, by giving the sheet's first
// cell an empty text: the streamed rows replace the cells excelize
// holds).
func newSharedStrings(f *excelize.File, sheet string) (*sharedStrings, error) {
	if f.SharedStrings == nil {
		if err := f.SetCellStr(sheet, "A1", ""); err != nil {
			return nil, err
		}
	}
	if f.SharedStrings == nil {
		return nil, fmt.Errorf("sheet %s: excelize made no shared strings table", sheet)
	}
	d, err := newRowsDeflater()
	if err != nil {
		return nil, err
	}
	return &sharedStrings{base: len(f.SharedStrings.SI), items: map[[2]uint64]int32{}, refs: map[TextRef]int32{}, changed: map[int32]fitted{},
		seed: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, d: d, w: bufio.NewWriterSize(d, 64<<10)}, nil
}

// cell is the cell holding text s (full: the file its exact text is in):
// its item's index, and how fitCell changed s (fitted{} when it did
// not). A text met before is found by its 128-bit hash (two maphash
// seeds), and neither fitted nor written again. Past maxSharedItems
// items, a text not in the block is its fitted text, written inline.
func (t *sharedStrings) cell(s, full string) (any, fitted, error) {
	h := [2]uint64{maphash.String(t.seed[0], s), maphash.String(t.seed[1], s)}
	if i, ok := t.items[h]; ok {
		return sharedIndex(t.base + int(i)), t.changed[i], nil
	}
	c, fit, i, err := t.add(s, full)
	if i >= 0 {
		t.items[h] = i
	}
	return c, fit, err
}

// cellRef is cell for the text ref stands for, read (through text) only
// when ref is met first. The item is found by ref, not by the text: a
// text met both by reference and as itself is two items of the same
// text.
func (t *sharedStrings) cellRef(ref TextRef, text func(TextRef) (string, error), full string) (any, fitted, error) {
	if i, ok := t.refs[ref]; ok {
		return sharedIndex(t.base + int(i)), t.changed[i], nil
	}
	s, err := text(ref)
	if err != nil {
		return nil, fitted{}, fmt.Errorf("reading a text by reference: %w", err)
	}
	c, fit, i, err := t.add(s, full)
	if i >= 0 {
		t.refs[ref] = i
	} else if err == nil && !fit.changed() { // an inline cell: s itself, which text may reuse
		fit.text = strings.Clone(fit.text)
		c = fit.text
	}
	return c, fit, err
}

// add writes s, fitted, as the block's next item (its place i), or, past
// maxSharedItems, returns it fitted as an inline cell (i = -1).
func (t *sharedStrings) add(s, full string) (any, fitted, int32, error) {
	if t.n >= maxSharedItems {
		fit := fitCell(s, full)
		return fit.text, fit, -1, nil
	}
	fit := fitted{text: s}
	b, ok := appendItem(t.buf[:0], s, true)
	if !ok {
		fit = fitCell(s, full)
		b, _ = appendItem(b[:0], fit.text, false)
	}
	i := int32(t.n)
	t.n++
	if fit.changed() {
		t.changed[i] = fit
	}
	t.buf = b
	if _, err := t.w.Write(b); err != nil {
		return nil, fitted{}, -1, fmt.Errorf("writing a shared text: %w", err)
	}
	return sharedIndex(t.base + int(i)), fit, i, nil
}

// appendItem appends an item of text x: fitted already, or when fit,
// only if fitCell leaves it as it is (ok false otherwise).
func appendItem(b []byte, x string, fit bool) (_ []byte, ok bool) {
	b = append(b, "<si><t"...)
	if x != "" && (isSpaceByte(x[0]) || isSpaceByte(x[len(x)-1])) {
		b = append(b, ` xml:space="preserve"`...)
	}
	b = append(b, '>')
	if !fit {
		b = appendEscapedValid(b, x) // fitted: UTF-8
	} else if b, ok = appendFitEscaped(b, x); !ok {
		return b, false
	}
	return append(b, "</t></si>"...), true
}

// reserve ends the block: its items are deflated, and as many empty
// items put at the end of f's table, which must not have grown since
// the block began.
func (t *sharedStrings) reserve(f *excelize.File) error {
	err := t.w.Flush()
	if _, ferr := t.d.finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("writing the shared texts: %w", err)
	}
	t.items, t.refs, t.changed = nil, nil, nil
	sst := f.SharedStrings
	if sst == nil || len(sst.SI) != t.base {
		return fmt.Errorf("writing the shared texts: excelize's table changed while a sheet's rows were written")
	}
	si := slices.Grow(sst.SI, t.n)
	si = si[:len(si)+t.n]
	clear(si[t.base:])
	sst.SI, sst.Count, sst.UniqueCount = si, len(si), len(si)
	return nil
}

// close lets the block's file go, if the workbook was not written.
func (t *sharedStrings) close() {
	if t != nil {
		t.d.d.close() // the block's body, deflated or not
	}
}

// emptyItem is an empty item as excelize writes it: what reserve puts in
// the table.
const emptyItem = "<si></si>"

// cutShared cuts excelize's shared strings part around the empty items
// of each block (in the order of their bases, none empty): the pieces
// before, between and after them, one more than the blocks.
func cutShared(xml []byte, blocks []*sharedStrings) ([][]byte, error) {
	var pieces [][]byte
	at, item := 0, 0 // a byte of xml, the index of the item there
	for _, b := range blocks {
		for ; item < b.base; item++ {
			j := bytes.Index(xml[at:], []byte("<si"))
			if j < 0 {
				return nil, fmt.Errorf("shared strings: no item %d (the table ends at %d)", b.base, item)
			}
			k := bytes.Index(xml[at+j:], []byte("</si>"))
			if bytes.HasPrefix(xml[at+j:], []byte("<si/>")) {
				k = len("<si/>") - len("</si>")
			} else if k < 0 {
				return nil, fmt.Errorf("shared strings: item %d has no end", item)
			}
			at += j + k + len("</si>")
		}
		j := bytes.Index(xml[at:], []byte("<si"))
		if j < 0 {
			return nil, fmt.Errorf("shared strings: no item %d for a sheet's texts", b.base)
		}
		start := at + j
		end := start + b.n*len(emptyItem)
		if end > len(xml) {
			return nil, fmt.Errorf("shared strings: %d items for a sheet's texts at %d, past the end", b.n, b.base)
		}
		for p := start; p < end; p += len(emptyItem) {
			if string(xml[p:p+len(emptyItem)]) != emptyItem {
				return nil, fmt.Errorf("shared strings: item %d is not the empty item a sheet's text takes the place of", b.base+(p-start)/len(emptyItem))
			}
		}
		pieces = append(pieces, xml[:start:start])
		xml, at = xml[end:], 0
		item = b.base + b.n
	}
	return append(pieces, xml), nil
}
