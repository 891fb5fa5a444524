package records

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/internal/benchdata"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// benchDir is a run directory of n records: Parquet segments, then a live
// file, a tenth of the keys repeated.
func benchDir(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	lk, err := LockDir(dir, Exclusive)
	if err != nil {
		b.Fatal(err)
	}
	defer lk.Unlock()
	w, err := CreateWith(dir, Options{Lock: lk, SealBytes: 4 << 20, CloseSealBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	w.FlushEvery = 0
	for i := range n {
		if err := w.Write(segRec(i%(n-n/10), engine.StatusOK)); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// reportCPU reports the CPU time per op since start, a figure the load of
// a shared machine changes less than the wall time.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(benchdata.CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkScanDir(b *testing.B) {
	dir := benchDir(b, 40000)
	b.ResetTimer()
	defer reportCPU(b, benchdata.CPUTime())
	for range b.N {
		s, err := ScanDir(dir, "e")
		if err != nil || s.Lines != 40000 {
			b.Fatal(err, s.Lines)
		}
	}
}

func BenchmarkPrepare(b *testing.B) {
	src := benchDir(b, 40000)
	es, err := os.ReadDir(src)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	defer reportCPU(b, benchdata.CPUTime())
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		for _, e := range es {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if _, _, err := Prepare(dir); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnique(b *testing.B) {
	dir := benchDir(b, 40000)
	b.ResetTimer()
	defer reportCPU(b, benchdata.CPUTime())
	for range b.N {
		out, _, _, _, err := Unique(context.Background(), dir, StreamOptions{}, func(_ int, r *engine.Record) (string, error) { return r.Response, nil })
		if err != nil || len(out) != 36000 {
			b.Fatal(err, len(out))
		}
	}
}

func BenchmarkRead(b *testing.B) {
	dir := benchDir(b, 40000)
	b.ResetTimer()
	defer reportCPU(b, benchdata.CPUTime())
	for range b.N {
		n := 0
		if err := Read(dir, func(*engine.Record) error { n++; return nil }); err != nil || n != 40000 {
			b.Fatal(err, n)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	defer reportCPU(b, benchdata.CPUTime())
	for range b.N {
		benchDir(b, 40000)
	}
}
