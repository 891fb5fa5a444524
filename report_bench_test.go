package bhasha

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/benchdata"
	"github.com/bhashalab/bhasha/internal/reportfiles"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/studies/indicklar"
)

// countingWriter counts the bytes written (the reports are measured, not
// kept).
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// peakRSS is the process's peak resident memory in MB (VmHWM).
func peakRSS() float64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(s), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.Atoi(strings.Fields(l)[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

// reportFiles reports the two files' times and sizes, and fails an HTML
// report over 25 MB.
func reportFiles(b *testing.B, htmlTime time.Duration, htmlBytes int64, xlsxTime time.Duration, xlsxBytes int64) {
	b.ReportMetric(htmlTime.Seconds(), "html-s")
	b.ReportMetric(float64(htmlBytes)/1e6, "html-MB")
	b.ReportMetric(xlsxTime.Seconds(), "xlsx-s")
	b.ReportMetric(float64(xlsxBytes)/1e6, "xlsx-MB")
	if htmlBytes > 25e6 {
		b.Errorf("HTML report %d bytes, over 25 MB", htmlBytes)
	}
}

// BenchmarkReport100k: a run of 100,000 requests (the synthetic study,
// answered by the in-process simulator, not timed) reopened from disk,
// then its tables (scoring included), its HTML report and its workbook
// (a sample of the answers), as `bhasha report --html --xlsx` writes them. Reports
// each step's seconds, the files' sizes and the peak resident memory (of
// the process: it runs before BenchmarkReport6M for that reason).
//
// Synthetic and in one process: the synthetic study's run is written and
// reopened in the benchmark's own process, not in a fresh one as a
// notebook cell or `bhasha report` opens it. BenchmarkPapersGrid
// (cli) measures the user's path at the papers' scale.
func BenchmarkReport100k(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "exp.yaml")
	os.WriteFile(p, []byte("name: bench100k\nsynthetic: {count: 100000}\nmodels:\n  - {name: tiny, served_name: sim-tiny-1b, max_concurrency: 64}\ndecoding: {max_tokens: 8}\n"), 0o644)
	ctx := context.Background()
	exp, err := Load(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	run, err := Run(ctx, exp, Out(filepath.Join(dir, "run")), NoCache(), Log(io.Discard))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r, err := Open(ctx, run.Dir())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Tables(); err != nil {
			b.Fatal(err)
		}
		scoring := time.Since(start)
		start = time.Now()
		html := reportSize(b, r, true)
		htmlTime := time.Since(start)
		start = time.Now()
		xlsx := reportSize(b, r, false)
		xlsxTime := time.Since(start)
		b.ReportMetric(scoring.Seconds(), "open+tables-s")
		reportFiles(b, htmlTime, html.n, xlsxTime, xlsx.n)
	}
	b.ReportMetric(peakRSS(), "peak-RSS-MB")
}

// BenchmarkReport6M: the reports of the IndicKLAR grid at the papers'
// scale, 6,364,170 scored rows (benchdata.KLARRows): the tables (accuracy,
// indicklar.KLAR, the answers), the figures, then the HTML report (every
// 319th answer offered to the explorer, as Results.WriteReport selects) and the
// workbook (the first 1,000,000 samples, the answers sheet streamed and
// cut at the same bound). The samples carry a prompt of the IndicKLAR
// baseline's size (three demonstrations and the candidates, 1.1 kB) and a
// JSON answer. Reports each step's seconds, both files' sizes and the
// peak resident memory.
//
// In memory and synthetic: the rows and samples are built in this process
// (benchdata.KLARRows), with no run directory, no records read and no
// scoring; it measures the report writers alone and does not stand for
// the user's path. BenchmarkPapersGrid (cli) writes the papers'
// grid to disk and runs `bhasha report --html --xlsx` on it.
func BenchmarkReport6M(b *testing.B) {
	rows := benchdata.KLARRows(2619, 30, 9, 9)
	prompt := strings.Repeat("प्रश्न: भारत की राजधानी क्या है? उत्तर: नई दिल्ली\n", 14)
	sample := func(i int) Sample {
		k := rows[i].Key
		return Sample{Model: k.Model, Item: k.Item, Language: k.Language, Form: k.Form, Strategy: k.Strategy, Prompt: prompt + k.Item,
			Response: `{"answer": "नई दिल्ली"}`, Answer: "नई दिल्ली", Normalized: "नई दिल्ली", Method: "json", Gold: "नई दिल्ली",
			Correct: rows[i].Correct, Chosen: -1, Simulated: true}
	}
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		ts := append([]*tables.Table{tables.Accuracy("indicklar", []tables.Metric{tables.Correct()}, rows)},
			indicklar.KLAR(rows, "", func(string) string { return "" })...)
		ts = append(ts, tables.Answers(rows, indicklar.AnswerSchema()))
		for _, t := range ts {
			t.Simulated = true
		}
		figs, err := indicklar.Figures(ts)
		if err == nil {
			figs, err = chart.Finish(figs)
		}
		if err != nil {
			b.Fatal(err)
		}
		analyses := time.Since(start)
		page := report.Page{Title: "Bhasha report: bench (6.4M rows)", Simulated: true, Tables: ts, Figures: figs, MaxRows: 500}

		start = time.Now()
		step := (len(rows) + reportfiles.ExplorerSamples - 1) / reportfiles.ExplorerSamples
		var ss []Sample
		for i := 0; i < len(rows) && len(ss) < reportfiles.ExplorerSamples; i += step {
			ss = append(ss, sample(i))
		}
		page.Samples, page.SamplesTotal, page.SamplesEvery = samplesTable(ss), len(rows), step
		var html countingWriter
		if err := report.WriteHTML(&html, page); err != nil {
			b.Fatal(err)
		}
		htmlTime := time.Since(start)

		start = time.Now()
		ss = make([]Sample, 0, report.MaxSampleRows)
		for i := range report.MaxSampleRows {
			ss = append(ss, sample(i))
		}
		page.Samples, page.SamplesTotal, page.SamplesEvery = samplesTable(ss), len(rows), 1
		ss = nil
		var xlsx countingWriter
		if err := report.WriteXLSX(&xlsx, page); err != nil {
			b.Fatal(err)
		}
		xlsxTime := time.Since(start)

		b.ReportMetric(float64(len(rows)), "rows")
		b.ReportMetric(analyses.Seconds(), "tables+figures-s")
		reportFiles(b, htmlTime, html.n, xlsxTime, xlsx.n)
	}
	b.ReportMetric(peakRSS(), "peak-RSS-MB")
}

// reportSize writes r's HTML report (html) or its workbook to a file
// (WriteReport) and returns its size.
func reportSize(b *testing.B, r *Results, html bool) countingWriter {
	path := filepath.Join(b.TempDir(), "report")
	h, x := path, ""
	if !html {
		h, x = "", path
	}
	if err := r.WriteReport(context.Background(), h, x, ReportOptions{}); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return countingWriter{n: fi.Size()}
}
