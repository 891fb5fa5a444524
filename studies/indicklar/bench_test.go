package indicklar

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/benchdata"
)

// BenchmarkAnalyses6M: every IndicKLAR table (accuracy with its three
// metrics, then tables.KLAR) over 6,364,170 scored rows;
// reports seconds and the process's peak resident memory (VmHWM).
//
// In memory and synthetic: the rows are benchdata.KLARRows, built in this
// process, with no run directory, no records read and no scoring; it
// measures the table code alone and does not stand for the user's path.
// BenchmarkPapersGrid (cli) measures that path from disk.
func BenchmarkAnalyses6M(b *testing.B) {
	rows := benchdata.KLARRows(2619, 30, 9, 9)
	b.ResetTimer()
	for range b.N {
		ms := []tables.Metric{tables.Correct(), {Name: "translit", Of: func(r *score.Row) bool { return r.Marks.Has(MarkTranslit) }}, {Name: "switched", Of: func(r *score.Row) bool { return r.Switched }}}
		ts := append([]*tables.Table{tables.Accuracy("indicklar", ms, rows)}, KLAR(rows, "", func(string) string { return "" })...)
		if len(ts[0].Rows) == 0 {
			b.Fatal("no accuracy rows")
		}
		for i, t := range ts {
			if t == nil {
				b.Fatalf("table %d of %d is nil", i, len(ts))
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(rows)), "rows")
	if s, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(s), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				kb, _ := strconv.Atoi(strings.Fields(l)[1])
				b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
			}
		}
	}
}
