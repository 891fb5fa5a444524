package report

import (
	"archive/zip"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/xuri/excelize/v2"
)

// checkEvery is how many rows a writer streams between looks at its ctx.
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

// Options are how the writers report progress and bound long sheets.
type Options struct {
	// Progress, when set, is told of each step: at its start, about every
	// progressEvery rows, and at its end.
	Progress func(Step)
	// SheetRows bounds a long table's sheet (0: MaxSheetRows, within
	// Excel's 1,048,576 rows a sheet), and the samples sheet (at most
	// MaxSampleRows): the rows past it are left out of the workbook, and
	// the sheet's last row and the README say how many and which file of
	// the run directory holds them all.
	SheetRows int
}

func (o Options) sheetRows() int {
	if o.SheetRows > 0 {
		return o.SheetRows
	}
	return MaxSheetRows
}

// progressEvery is how many rows a step reports between two states.
const progressEvery = 20_000

// Stepper tells Options.Progress about one step.
type Stepper struct {
	o     Options
	what  string
	total int
	start time.Time
}

// Step starts the step what of total rows (0 for a step without rows),
// telling o.Progress of its start.
func (o Options) Step(what string, total int) *Stepper {
	s := &Stepper{o: o, what: what, total: total, start: time.Now()}
	s.At(0, false)
	return s
}

// At tells o.Progress that done rows are done, every progressEvery rows
// and when final (the step's end, its total at least done).
func (s *Stepper) At(done int, final bool) {
	if s.o.Progress != nil && (final || done%progressEvery == 0) {
		total := s.total
		if final {
			total = max(total, done)
		}
		s.o.Progress(Step{What: s.what, Done: done, Total: total, Elapsed: time.Since(s.start), Final: final})
	}
}

// zipLevel is the workbook's deflate level (klauspost's flate).
const zipLevel = 6

// writeWorkbook writes f into w, each sheet but the streamed ones (which
// set their own) declaring the range its cells fill as its <dimension>
// (excelize says "A1", and openpyxl then reads one row).
func writeWorkbook(f *excelize.File, w io.Writer, streamed map[string]bool) error {
	for _, sheet := range f.GetSheetList() {
		if streamed[sheet] {
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
	f.SetZipWriter(func(w io.Writer) excelize.ZipWriter {
		zw := zip.NewWriter(w)
		zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) { return flate.NewWriter(out, zipLevel) })
		return zw
	})
	return f.Write(w)
}
