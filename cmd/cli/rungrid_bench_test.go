package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/runtime/run"
)

// BenchmarkRunGrid measures `bhasha run --no-tables` of the papers' grid
// as a user runs it (the target: peak RSS at most 400 MB at 6.4 M
// requests, not growing with the run): asking and recording alone, since
// the scoring a complete run ends with holds every scored answer at once
// (BenchmarkPapersGrid's finish step measures it). The grid's experiment (gridExperiment: the
// IndicKLAR main evaluation's nine strategies over the paper's languages
// and forms, nine simulated models at max_concurrency 16 each) on its
// generated dataset, against `bhasha sim --config` of it in another
// process, into a new run directory with a new response cache directory,
// so that every answer is new to the cache and joins its index.
//
// BHASHA_BENCH_RUN_RECORDS sets the requests (default 6,364,170, the
// papers' grid; gridFactsFor). The run takes about 30 minutes at the
// default on a 2-core machine and about 4.5 GB under $TMPDIR (the run
// directory, the cache and its index).
//
// It reports the wall time, requests a second, the run's peak resident
// memory (rusage), and the highest resident memory sampled in each
// quarter of the run's time (rss-q1-MB … rss-q4-MB), which show whether
// it grows with the run.
func BenchmarkRunGrid(b *testing.B) {
	n := envCount(b, "BHASHA_BENCH_RUN_RECORDS", 6364170)
	const models = 9
	spec := gridSpec{Facts: gridFactsFor(n, models), Models: models, Concurrency: 16}
	root := b.TempDir()
	data := filepath.Join(root, "dataset")
	if err := gridWriteDataset(data, spec.Facts, len(gridRelations), gridPaperLanguages); err != nil {
		b.Fatal(err)
	}
	exp := filepath.Join(root, "experiment.yaml")
	if err := os.WriteFile(exp, gridExperiment("indicklar-grid", data, spec), 0o644); err != nil {
		b.Fatal(err)
	}
	url := simChild(b, "--config", exp)
	for i := range b.N {
		out := filepath.Join(root, fmt.Sprint("run", i))
		c := cli("run", "--config", exp, "--out", out, "--endpoint", url, "--cache-dir", filepath.Join(root, fmt.Sprint("cache", i)), "--no-tables")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		start := time.Now()
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		samples := sampleRSS(c.Process.Pid, 500*time.Millisecond)
		err := c.Wait()
		el := time.Since(start)
		rss := <-samples
		if err != nil {
			b.Fatalf("bhasha run: %v\n%s", err, tail(stderr.Bytes(), 4000))
		}
		m, err := run.ReadManifest(out)
		if err != nil {
			b.Fatal(err)
		}
		if m.Counts.Failed != 0 || m.Counts.SentThisRun+m.Counts.DuplicatesThisRun != m.Counts.Records || m.Counts.Records < n*9/10 {
			b.Fatalf("counts %+v for about %d requests:\n%s", m.Counts, n, tail(stderr.Bytes(), 4000))
		}
		ru, _ := c.ProcessState.SysUsage().(*syscall.Rusage)
		if ru != nil {
			b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
		}
		for q, kb := range rss.quarters(el) {
			b.ReportMetric(float64(kb)/1024, fmt.Sprintf("rss-q%d-MB", q+1))
		}
		b.ReportMetric(float64(m.Counts.Records), "requests")
		b.ReportMetric(el.Seconds(), "wall-s")
		b.ReportMetric(float64(m.Counts.Records)/el.Seconds(), "req/s")
	}
}

// rssSamples are a process's resident set sizes (KB) at times since its
// start.
type rssSamples struct {
	at []time.Duration
	kb []int
}

// quarters returns the highest sample in each quarter of d.
func (s rssSamples) quarters(d time.Duration) [4]int {
	var q [4]int
	for i, t := range s.at {
		k := min(3, int(4*t/max(d, 1)))
		q[k] = max(q[k], s.kb[i])
	}
	return q
}

// sampleRSS reads pid's VmRSS every period until the process is gone and
// then sends the samples.
func sampleRSS(pid int, period time.Duration) <-chan rssSamples {
	ch := make(chan rssSamples, 1)
	start := time.Now()
	go func() {
		var s rssSamples
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil || bytes.Contains(b, []byte("State:\tZ")) {
				break
			}
			if i := bytes.Index(b, []byte("VmRSS:")); i >= 0 {
				var kb int
				fmt.Sscan(string(b[i+len("VmRSS:"):]), &kb)
				s.at, s.kb = append(s.at, time.Since(start)), append(s.kb, kb)
			}
			time.Sleep(period)
		}
		ch <- s
	}()
	return ch
}
