package report

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// Rows is a long table read row by row, in order, as often as a writer
// needs (the workbook reads a streamed sheet twice: once for the cells
// whose text must change to fit, once to write them), so that no writer
// holds every row: the workbook's samples sheet of a run of millions of
// answers streams its rows from the run directory through it.
type Rows struct {
	// Name is the table's name (the file holding a cell's full text is
	// named after it: fullTextAt).
	Name   string
	Header []string
	// Len is the number of rows Each yields.
	Len int
	// Each calls fn with every row in order (row is reused between calls:
	// fn must not keep it) and stops at fn's first error, or at ctx's.
	Each func(ctx context.Context, fn func(row []any) error) error
	// Text, when set, reads the text a TextRef cell of the rows stands
	// for. It is called on the writer's goroutine, beside Each's, at most
	// once a ref: cells with equal refs hold equal texts. The text need
	// hold only until Text is called again: the writer copies what it
	// keeps.
	Text func(ref TextRef) (string, error)
}

// TextRef is a text cell of Rows known by reference, read through
// Rows.Text: a long text that many rows share (a run's prompt, sent to
// each of its models), which the writer then reads, fits and hashes once,
// not once a row.
type TextRef int64

// TableRows reads a table as Rows: its held rows, or those its Source
// makes.
func TableRows(t *tables.Table) *Rows {
	return &Rows{Name: t.Name, Header: t.Header, Len: t.Len(), Each: func(ctx context.Context, fn func([]any) error) error {
		var made []any // a Source's row, reused
		for i := range t.Len() {
			if i%checkEvery == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			var r []any
			if t.Source != nil {
				made = t.Row(i, made)
				r = made
			} else {
				r = t.Rows[i] // held: no copy
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}}
}

// checkEvery is how many rows a writer streams between two looks at its
// context.
const checkEvery = 1024

// Step is how far a report writer has come: what it is writing (a
// sheet, the explorer) and how many of its rows are done; Final marks the
// step's end.
type Step struct {
	What        string
	Done, Total int
	Elapsed     time.Duration
	Final       bool
}

// Options are how the writers report progress and where they stop.
type Options struct {
	// Progress, when set, is told of each step: at its start, about every
	// progressEvery rows, and at its end.
	Progress func(Step)
	// SheetRows bounds a streamed sheet's rows (0: MaxSampleRows, within
	// Excel's 1,048,576 rows a sheet): the rows past it are left out of
	// the workbook, and the sheet's last row and the README say how many
	// and which file of the run directory holds them all.
	SheetRows int
}

func (o Options) sheetRows() int {
	if o.SheetRows > 0 {
		return o.SheetRows
	}
	return MaxSampleRows
}

// progressEvery is how many rows a step reports between two states.
const progressEvery = 20_000

// stepper tells Options.Progress about one step.
type stepper struct {
	o     Options
	what  string
	total int
	start time.Time
}

func (o Options) step(what string, total int) *stepper {
	s := &stepper{o: o, what: what, total: total, start: time.Now()}
	s.at(0, false)
	return s
}

func (s *stepper) at(done int, final bool) {
	if s.o.Progress != nil && (final || done%progressEvery == 0) {
		s.o.Progress(Step{What: s.what, Done: done, Total: s.total, Elapsed: time.Since(s.start), Final: final})
	}
}

// zipLevel is the workbook's deflate level: klauspost's level 5 writes a
// large workbook several times faster than archive/zip's default level 6,
// for a file about an eighth larger (measured on a samples sheet).
const zipLevel = 5

// writeWorkbook writes f's parts straight into w through one zip writer
// (excelize's WriteTo assembles the whole file in a bytes.Buffer first),
// each part deflated in chunks on every core (pflate), the streamed
// sheets raws' rows, deflated already, joined into their parts
// (rawsheet.go, part.go). A
// part over 4 GiB would need excelize's ZIP64 header fix, which writes
// into that buffer: no sheet is that large within SheetRows.
func writeWorkbook(ctx context.Context, f *excelize.File, w io.Writer, raws []rawSheet) error {
	z := &rawZip{ctx: ctx, raws: map[string]*rawSheet{}, done: map[string]bool{}}
	for i := range raws {
		z.raws[raws[i].path] = &raws[i]
		if b := raws[i].shared; b != nil && b.n > 0 {
			z.shared = append(z.shared, b)
		}
	}
	slices.SortFunc(z.shared, func(a, b *sharedStrings) int { return a.base - b.base })
	if err := setUsedRanges(f, z.raws); err != nil {
		return err
	}
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter {
		zw := zip.NewWriter(w)
		zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return newPflate(out, zipLevel, 0), nil
		})
		z.zw = zw
		return z
	})
	_, err := f.WriteTo(io.Discard)
	return err
}

// setUsedRanges declares, as its <dimension>, the range of cells each
// sheet of f holds but the streamed ones (raws, by part: theirs is set as
// their rows are joined in, rawZip.finish). excelize declares "A1" for a
// sheet whose cells it sets, and a reader that sizes a sheet by its
// dimension (openpyxl's read-only mode) then reads its first row only.
// It reads each such sheet's cells once (GetRows): the sheets excelize
// writes are the short ones (README, figures, provenance).
func setUsedRanges(f *excelize.File, raws map[string]*rawSheet) error {
	for _, sheet := range f.GetSheetList() {
		path, err := sheetPath(f, sheet)
		if err != nil {
			return err
		}
		if raws[path] != nil {
			continue
		}
		rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
		if err != nil {
			return fmt.Errorf("sheet %s: reading its cells for its dimension: %w", sheet, err)
		}
		last, cols := 0, 0
		for i, r := range rows {
			if len(r) > 0 {
				last, cols = i+1, max(cols, len(r))
			}
		}
		if last == 0 {
			continue // no cell: "A1", as an empty sheet declares
		}
		if err := f.SetSheetDimension(sheet, "A1:"+cellName(cols, last)); err != nil {
			return fmt.Errorf("sheet %s: %w", sheet, err)
		}
	}
	return nil
}
