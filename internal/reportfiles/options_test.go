package reportfiles

import (
	"testing"

	"github.com/bhashalab/bhasha/report"
)

// The samples sheet holds at most report.MaxSampleRows answers, fewer
// when Options.SheetRows asks for fewer.
func TestSampleRowsBound(t *testing.T) {
	for _, c := range []struct{ sheetRows, want int }{
		{0, report.MaxSampleRows},
		{5, 5},
		{report.MaxSampleRows, report.MaxSampleRows},
		{report.MaxSampleRows + 1, report.MaxSampleRows},
		{1_000_000, report.MaxSampleRows},
	} {
		if got := (Options{SheetRows: c.sheetRows}).sampleRows(); got != c.want {
			t.Errorf("SheetRows %d: %d rows, want %d", c.sheetRows, got, c.want)
		}
	}
	if report.MaxSampleRows != 50_000 {
		t.Errorf("report.MaxSampleRows is %d, want 50,000", report.MaxSampleRows)
	}
}
