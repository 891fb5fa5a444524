package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/run"
)

// BenchmarkRunDir measures a run directory of the user's own
// (BHASHA_BENCH_RUN=DIR, an absolute path; it skips without one), as
// docs/performance.md measures the 460,500-record BMLAMA-53 run
// (experiments/bench/bmlama-460k.yaml says how to write it):
// BHASHA_BENCH_ROUNDS rounds (default 3), each on fresh copies of the
// directory's run files (experiment.yaml, manifest.json, the records
// files, archive/: nothing a step derives, so DIR itself is never
// written), each step in a fresh process as BenchmarkPapersGrid runs
// them:
//
//	duck    node tools/duckscan/scan.mjs COPY: DuckDB's scan of the records
//	cold    bhasha.Open + r.Table("accuracy") with nothing scored (scoring)
//	finish  on a second copy: what bhasha run does once the answers are
//	        in (runTables)
//	open1   bhasha.Open + r.Table("accuracy") after finish (the first
//	        notebook cell after bhasha run)
//	open2   the same again (what a later notebook cell pays)
//	report  bhasha report --run COPY --html F --xlsx F (the command, in full)
//
// Each round's figures are logged as they are measured; the metrics are
// the means over the rounds (wall seconds, peak resident MB) and the
// ratios the targets are set on, of those means: cold/duck, open1/duck,
// open2/duck, report/cold. The machine's speed drifts between rounds,
// so only figures of the same rounds compare.
func BenchmarkRunDir(b *testing.B) {
	src := os.Getenv("BHASHA_BENCH_RUN")
	if src == "" {
		b.Skip("BenchmarkRunDir measures a run directory of your own: BHASHA_BENCH_RUN=DIR (experiments/bench/bmlama-460k.yaml writes the one docs/performance.md measures)")
	}
	rounds := 3
	if s := os.Getenv("BHASHA_BENCH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("BHASHA_BENCH_ROUNDS=%q: want a positive number of rounds", s)
		}
		rounds = n
	}
	if !filepath.IsAbs(src) {
		b.Fatalf("BHASHA_BENCH_RUN=%s: give an absolute path (BHASHA_BENCH_RUN=$PWD/%s): go test runs the benchmark in its package's directory", src, src)
	}
	m, err := run.ReadManifest(src)
	if err != nil {
		b.Fatalf("BHASHA_BENCH_RUN=%s: %v", src, err)
	}
	if m.Status != "complete" {
		b.Fatalf("BHASHA_BENCH_RUN=%s: the run is %s, not complete", src, m.Status)
	}
	scan := duckScanner(b)
	for range b.N {
		steps := []string{"duck", "cold", "finish", "open1", "open2", "report"}
		sum := map[string]*[2]float64{} // wall seconds, peak MB, summed over the rounds
		for _, s := range steps {
			sum[s] = &[2]float64{}
		}
		add := func(name string, r stepRun) {
			sum[name][0] += r.wall.Seconds()
			sum[name][1] += r.rssMB
		}
		var disk int64
		for i := range rounds {
			fresh := func() gridLayout {
				l := gridLayout{Root: b.TempDir()}
				if err := copyRunFiles(src, l.Run()); err != nil {
					b.Fatalf("copying %s: %v", src, err)
				}
				disk = dirBytes(b, l.Run())
				warm(b, l.Run())
				return l
			}
			l := fresh()
			line := make([]string, 0, len(steps))
			for _, s := range steps {
				var r stepRun
				switch s {
				case "duck":
					r = step(b, s, scan(l.Run()), nil)
				case "cold":
					r = step(b, s, gridChild("open", l, gridSpec{}), nil)
				case "finish":
					l = fresh()
					r = step(b, s, gridChild("finish", l, gridSpec{}), nil)
				case "open1", "open2":
					r = step(b, s, gridChild("open", l, gridSpec{}), nil)
				case "report":
					r = step(b, s, cli("report", "--run", l.Run(), "--html", filepath.Join(l.Root, "report.html"), "--xlsx", filepath.Join(l.Root, "report.xlsx")), nil)
				}
				add(s, r)
				line = append(line, fmt.Sprintf("%s %.2f s %.0f MB", s, r.wall.Seconds(), r.rssMB))
			}
			b.Logf("round %d: %s", i+1, strings.Join(line, ", "))
		}
		mean := func(s string, k int) float64 { return sum[s][k] / float64(rounds) }
		for _, s := range steps {
			b.ReportMetric(mean(s, 0), s+"-s")
			b.ReportMetric(mean(s, 1), s+"-MB")
		}
		b.ReportMetric(float64(m.Counts.Records), "records")
		b.ReportMetric(float64(disk)/float64(max(1, m.Counts.Records)), "disk-B/record")
		b.ReportMetric(mean("cold", 0)/mean("duck", 0), "cold/duck")
		b.ReportMetric(mean("open1", 0)/mean("duck", 0), "open1/duck")
		b.ReportMetric(mean("open2", 0)/mean("duck", 0), "open2/duck")
		b.ReportMetric(mean("report", 0)/mean("cold", 0), "report/cold")
		b.Logf("%d records, %d rounds, means: DuckDB %.2f s; cold %.2f s (%.2f× DuckDB); finish %.2f s; open1 %.2f s (%.2f× DuckDB); open2 %.2f s; report %.2f s (%.2f× cold)",
			m.Counts.Records, rounds, mean("duck", 0), mean("cold", 0), mean("cold", 0)/mean("duck", 0), mean("finish", 0),
			mean("open1", 0), mean("open1", 0)/mean("duck", 0), mean("open2", 0), mean("report", 0), mean("report", 0)/mean("cold", 0))
	}
}

// copyRunFiles copies the files a run wrote into dir (new): the
// experiment's copy, the manifest, every records file (segments,
// records.jsonl) and archive/, and nothing a later step
// derives from them (scored.parquet, tables/, reports).
func copyRunFiles(src, dir string) error {
	es, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, e := range es {
		name := e.Name()
		if name != run.ExperimentFile && name != run.ManifestFile && name != "archive" && !strings.HasPrefix(name, "records") {
			continue
		}
		from, to := filepath.Join(src, name), filepath.Join(dir, name)
		if e.IsDir() {
			err = os.CopyFS(to, os.DirFS(from))
		} else {
			err = copyFile(from, to)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies the file from to the new file to.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
