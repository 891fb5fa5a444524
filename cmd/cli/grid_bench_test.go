package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/runtime/run"
)

// The papers' grid from disk: BenchmarkPapersGrid writes an
// IndicKLAR run directory of BHASHA_BENCH_RECORDS requests (default
// 6,364,170, the size of the papers' 2,619 facts × 30 language forms × 9
// strategies × 9 models) with gridWrite (the experiment's requests,
// the real engine and records writer, the simulator in-process), then
// measures what a user does with it, each step in a fresh process as a
// GoNB cell or a command runs:
//
//	write    gridWrite: the dataset, the experiment and the run directory
//	cold     bhasha.Open + r.Table("accuracy") on the run directory as
//	         written, nothing scored yet (what a cell pays when no
//	         command kept the scored answers: scoring)
//	finish   what bhasha run does once the answers are in (runTables:
//	         scoring, keeping the scored answers and every table, the
//	         CSV tables), on the directory as written
//	open1    bhasha.Open + r.Table("accuracy") after finish: what the
//	         first notebook cell after bhasha run pays
//	open2    the same again, in a new process (what a later cell pays)
//	tables   bhasha.Open + every table of r.Tables(), each built with r.Table
//	report   bhasha report --run DIR --html F --xlsx F (the command, in full)
//	duck     node tools/duckscan/scan.mjs DIR: DuckDB's scan of the same
//	         records (count, count distinct key, the bytes of every response),
//	         right before cold (the ratios' anchor) and again at the end
//	         (duck-after: how far the machine's speed drifted meanwhile)
//
// For each it reports the wall time (s) and the peak resident memory of
// its process (MB, from the child's rusage), the ratio of each open
// to DuckDB's scan, and the report's to cold; the directory's bytes per record after writing and
// after the steps (with whatever they keep in it). Every file of the run
// directory is read once before the steps (warm), so that all of them,
// DuckDB's scan included, read the records from the page cache. The grid asks 240
// requests per fact and model (gridPerFact: 186 answers, 54
// translations), so N records are gridFactsFor(N, 9) facts.
//
// BHASHA_BENCH_DIR keeps the grid (ROOT/dataset, ROOT/experiment.yaml,
// ROOT/run, ROOT/grid.json) for the next run of the benchmark: a complete
// grid of the same size there is reused (the write step is then not
// measured), and what the steps added to the run directory (the tables,
// a scored store, the reports) is removed first, so that open1 is a
// first open again. Without it the grid goes to a temporary directory,
// removed at the end. It skips, saying so, without node or DuckDB's
// package (make duckscan).
func BenchmarkPapersGrid(b *testing.B) {
	n := envCount(b, "BHASHA_BENCH_RECORDS", 6364170)
	scan := duckScanner(b)
	const models = 9
	spec := gridSpec{Facts: gridFactsFor(n, models), Models: models}
	root := os.Getenv("BHASHA_BENCH_DIR")
	if root == "" {
		root = b.TempDir()
	}
	l := gridLayout{Root: root}
	for range b.N {
		g, reused := readGrid(b, l, spec)
		if !reused {
			prepareGridDir(b, l)
			b.Logf("writing a %d-fact grid (%d records) to %s", spec.Facts, spec.Facts*models*gridPerFact, root)
			st := step(b, "write", gridChild("write", l, spec), os.Stderr)
			if err := json.Unmarshal(lastLine(st.out), &g.gridSummary); err != nil {
				b.Fatalf("write: %v (%s)", err, st.out)
			}
			g.Entries = entries(b, l.Run())
			g.Facts, g.DiskBytes = spec.Facts, dirBytes(b, l.Run())
			writeGrid(b, l, g)
			b.ReportMetric(st.wall.Seconds(), "write-s")
			b.ReportMetric(st.rssMB, "write-MB")
		} else {
			b.Logf("reusing the %d-record grid in %s (the write step is not measured)", g.Records, root)
			resetRun(b, l, g)
		}
		recs := float64(g.Records)
		b.ReportMetric(recs, "records")
		b.ReportMetric(float64(g.DiskBytes)/recs, "disk-B/record")

		warm(b, l.Run())
		// DuckDB's scan right before the first open, which it is compared
		// with (the machine's speed drifts over the minutes the steps
		// take), and again at the end.
		scanned := func(name string) stepRun {
			dk := step(b, name, scan(l.Run()), nil)
			var d struct {
				Records, Keys int
				ResponseBytes int64 `json:"response_bytes"`
			}
			if err := json.Unmarshal(lastLine(dk.out), &d); err != nil || d.Records != g.Records || d.Keys != g.Records || (g.ResponseBytes > 0 && d.ResponseBytes != g.ResponseBytes) {
				b.Fatalf("DuckDB's scan: %s (want %d records, %d distinct keys, %d bytes of responses)", dk.out, g.Records, g.Records, g.ResponseBytes)
			}
			return dk
		}
		dk := scanned("duck")
		opened := func(name string) stepRun {
			st := step(b, name, gridChild("open", l, spec), nil)
			var o struct{ Scored, Rows int }
			if err := json.Unmarshal(lastLine(st.out), &o); err != nil || o.Scored != g.Answers || o.Rows == 0 {
				b.Fatalf("%s: %s (want %d scored answers and an accuracy table)", name, st.out, g.Answers)
			}
			b.ReportMetric(st.wall.Seconds(), name+"-s")
			b.ReportMetric(st.rssMB, name+"-MB")
			return st
		}
		cold := opened("cold")
		resetRun(b, l, g)
		fin := step(b, "finish", gridChild("finish", l, spec), nil)
		if !bytes.Contains(fin.out, []byte(fmt.Sprintf("%d scored answers", g.Answers))) {
			b.Fatalf("finish: %s (want it to count %d scored answers)", fin.out, g.Answers)
		}
		b.ReportMetric(fin.wall.Seconds(), "finish-s")
		b.ReportMetric(fin.rssMB, "finish-MB")
		var opens [2]stepRun
		for i := range opens {
			opens[i] = opened(fmt.Sprintf("open%d", i+1))
		}
		tb := step(b, "tables", gridChild("tables", l, spec), nil)
		var tt struct{ Tables, Rows int }
		if err := json.Unmarshal(lastLine(tb.out), &tt); err != nil || tt.Tables == 0 {
			b.Fatalf("tables: %s", tb.out)
		}
		b.ReportMetric(tb.wall.Seconds(), "tables-s")
		b.ReportMetric(tb.rssMB, "tables-MB")
		b.ReportMetric(float64(tt.Tables), "tables")

		html, xlsx := filepath.Join(root, "report.html"), filepath.Join(root, "report.xlsx")
		rp := step(b, "report", cli("report", "--run", l.Run(), "--html", html, "--xlsx", xlsx), nil)
		if !bytes.Contains(rp.out, []byte(strconv.Itoa(g.Answers))) {
			b.Fatalf("report: %s (want it to count %d scored answers)", rp.out, g.Answers)
		}
		b.ReportMetric(rp.wall.Seconds(), "report-s")
		b.ReportMetric(rp.rssMB, "report-MB")
		b.ReportMetric(float64(fileSize(b, html))/1e6, "html-MB")
		b.ReportMetric(float64(fileSize(b, xlsx))/1e6, "xlsx-MB")
		b.ReportMetric(float64(dirBytes(b, l.Run()))/recs, "after-B/record")

		dk2 := scanned("duck-after")
		duck := dk.wall.Seconds()
		b.ReportMetric(duck, "duck-s")
		b.ReportMetric(dk.rssMB, "duck-MB")
		b.ReportMetric(dk2.wall.Seconds(), "duck-after-s")
		b.ReportMetric(cold.wall.Seconds()/duck, "cold/duck")
		b.ReportMetric(opens[0].wall.Seconds()/duck, "open1/duck")
		b.ReportMetric(opens[1].wall.Seconds()/duck, "open2/duck")
		b.ReportMetric(rp.wall.Seconds()/cold.wall.Seconds(), "report/cold")
		b.Logf("%d records (%d facts × %d models × %d requests): write %s; cold %.1f s %.0f MB, finish %.1f s %.0f MB, open1 %.1f s %.0f MB, open2 %.1f s %.0f MB, tables %.1f s %.0f MB, report %.1f s %.0f MB; DuckDB %.2f s %.0f MB before cold, %.2f s after the report",
			g.Records, g.Facts, models, gridPerFact, map[bool]string{true: "reused", false: "measured"}[reused],
			cold.wall.Seconds(), cold.rssMB, fin.wall.Seconds(), fin.rssMB, opens[0].wall.Seconds(), opens[0].rssMB, opens[1].wall.Seconds(), opens[1].rssMB,
			tb.wall.Seconds(), tb.rssMB, rp.wall.Seconds(), rp.rssMB, duck, dk.rssMB, dk2.wall.Seconds())
	}
}

// gridFile is ROOT/grid.json: what the write step wrote, and the run
// directory's entries then (what resetRun keeps).
const gridFile = "grid.json"

type gridState struct {
	gridSummary
	DiskBytes int64    `json:"disk_bytes"`
	Entries   []string `json:"entries"`
}

// readGrid reads ROOT/grid.json and reports whether it describes a
// complete grid of spec's size whose run directory says so too.
func readGrid(b *testing.B, l gridLayout, spec gridSpec) (gridState, bool) {
	var g gridState
	raw, err := os.ReadFile(filepath.Join(l.Root, gridFile))
	if err != nil || json.Unmarshal(raw, &g) != nil || g.Facts != spec.Facts || g.Models != spec.Models {
		return gridState{}, false
	}
	m, err := run.ReadManifest(l.Run())
	if err != nil || m.Status != "complete" || m.Counts.Records != g.Records {
		return gridState{}, false
	}
	return g, true
}

func writeGrid(b *testing.B, l gridLayout, g gridState) {
	raw, _ := json.MarshalIndent(g, "", "  ")
	if err := os.WriteFile(filepath.Join(l.Root, gridFile), append(raw, '\n'), 0o644); err != nil {
		b.Fatal(err)
	}
}

// gridMark marks a directory the benchmark writes grids into: only such a
// directory (or an empty one) is cleared for a new grid.
const gridMark = ".bhasha-bench-grid"

// prepareGridDir empties ROOT for a new grid: a new or empty directory, or
// one the benchmark wrote before (gridMark); anything else is refused.
func prepareGridDir(b *testing.B, l gridLayout) {
	if err := os.MkdirAll(l.Root, 0o755); err != nil {
		b.Fatal(err)
	}
	es, err := os.ReadDir(l.Root)
	if err != nil {
		b.Fatal(err)
	}
	if len(es) > 0 {
		if _, err := os.Stat(filepath.Join(l.Root, gridMark)); err != nil {
			b.Fatalf("BHASHA_BENCH_DIR %s holds files the benchmark did not write: give it a new or empty directory", l.Root)
		}
		for _, e := range es {
			if err := os.RemoveAll(filepath.Join(l.Root, e.Name())); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(l.Root, gridMark), []byte("written by BenchmarkPapersGrid (cli)\n"), 0o644); err != nil {
		b.Fatal(err)
	}
}

// resetRun removes from a reused run directory what the steps added to it
// after the write (tables/, a scored store: entries not in g.Entries),
// never a records file, the manifest, the experiment's copy, the lock or
// the archive; and the reports beside it.
func resetRun(b *testing.B, l gridLayout, g gridState) {
	for _, name := range entries(b, l.Run()) {
		if slices.Contains(g.Entries, name) || strings.HasPrefix(name, "records") ||
			name == run.ManifestFile || name == run.ExperimentFile || name == ".lock" || name == "archive" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(l.Run(), name)); err != nil {
			b.Fatal(err)
		}
	}
	os.Remove(filepath.Join(l.Root, "report.html"))
	os.Remove(filepath.Join(l.Root, "report.xlsx"))
}

func entries(b *testing.B, dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name()
	}
	return out
}

// warm reads every file of dir once, so that each step (and DuckDB's
// scan) finds the records in the page cache, as a notebook does after a
// run has just written them: a grid reused hours later may have left the
// cache, and the first step to read it would pay the disk alone (open1
// took 40.7 s after such a pause and 27.7 s once the records were read).
func warm(b *testing.B, dir string) {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(io.Discard, f)
		return err
	})
	if err != nil {
		b.Fatalf("reading the run directory into the page cache: %v", err)
	}
}

// dirBytes is the size of every file under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func fileSize(b *testing.B, p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// stepRun is one step's process: its wall time, its peak resident
// memory and its standard output.
type stepRun struct {
	wall  time.Duration
	rssMB float64
	out   []byte
}

// step runs c to its end and measures it; its standard error goes to
// stderr when given (the write step's progress), else it is kept for the
// failure's message.
func step(b *testing.B, name string, c *exec.Cmd, stderr io.Writer) stepRun {
	b.Helper()
	var out, errb bytes.Buffer
	c.Stdout = &out
	c.Stderr = &errb
	if stderr != nil {
		c.Stderr = io.MultiWriter(&errb, stderr)
	}
	start := time.Now()
	err := c.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %s: %v\n%s%s", name, strings.Join(c.Args, " "), err, out.Bytes(), tail(errb.Bytes(), 4000))
	}
	ru, _ := c.ProcessState.SysUsage().(*syscall.Rusage)
	r := stepRun{wall: wall, out: out.Bytes()}
	if ru != nil {
		r.rssMB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
	}
	// Each figure as soon as it is measured: the whole benchmark takes an
	// hour at the full grid, and its metrics print only at its end.
	fmt.Fprintf(os.Stderr, "%s: %s: %.1f s, peak RSS %.0f MB\n", b.Name(), name, wall.Seconds(), r.rssMB)
	return r
}

// envCount is the positive number in the environment variable name
// (underscores allowed: 6_364_170), or def when it is unset.
func envCount(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil || v < 1 {
		b.Fatalf("%s=%q: want a positive number", name, s)
	}
	return v
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func lastLine(b []byte) []byte {
	ls := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return ls[len(ls)-1]
}

// duckScanner finds node and tools/duckscan's installed package, or skips
// the benchmark saying what to install; it returns the command that scans
// a run directory.
func duckScanner(b *testing.B) func(dir string) *exec.Cmd {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		b.Skip("BenchmarkPapersGrid sets DuckDB's scan of the same run directory beside Bhasha's and needs Node.js (node) on the PATH, then `make duckscan`")
	}
	tool, err := filepath.Abs(filepath.Join("..", "..", "tools", "duckscan"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tool, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		b.Skipf("BenchmarkPapersGrid needs DuckDB's node package in %s: run `make duckscan` (npm ci there)", tool)
	}
	return func(dir string) *exec.Cmd { return exec.Command(nodeBin, filepath.Join(tool, "scan.mjs"), dir) }
}

// gridChild is the test binary run again as one step of the benchmark
// (gridStep, from TestMain).
func gridChild(name string, l gridLayout, spec gridSpec) *exec.Cmd {
	c := exec.Command(os.Args[0])
	c.Env = append(os.Environ(), "BHASHA_GRID_STEP="+name, "BHASHA_GRID_ROOT="+l.Root,
		"BHASHA_GRID_FACTS="+strconv.Itoa(spec.Facts), "BHASHA_GRID_MODELS="+strconv.Itoa(spec.Models))
	return c
}

// gridStep runs one step of BenchmarkPapersGrid in this process (the test
// binary started by gridChild) and prints its result as one JSON line:
// write (gridWrite's Summary), finish (runTables' listing), open
// (bhasha.Open and the accuracy table: scored answers and rows) or tables
// (bhasha.Open and every table: how many, and their rows). It returns the
// exit status.
func gridStep(name string) int {
	ctx := context.Background()
	l := gridLayout{Root: os.Getenv("BHASHA_GRID_ROOT")}
	facts, _ := strconv.Atoi(os.Getenv("BHASHA_GRID_FACTS"))
	models, _ := strconv.Atoi(os.Getenv("BHASHA_GRID_MODELS"))
	var out any
	var err error
	switch name {
	case "write":
		out, err = gridWrite(ctx, l, gridSpec{Facts: facts, Models: models}, os.Stderr)
	case "finish":
		var buf bytes.Buffer
		release := holdRunHeap() // as cmdRun holds it
		err = runTables(ctx, bhasha.BuiltinStudies(), l.Run(), &buf, os.Stderr)
		release()
		if err == nil {
			out = buf.String()
		}
	case "open":
		var r *bhasha.Results
		if r, err = bhasha.Open(ctx, l.Run()); err == nil {
			var t *bhasha.Table
			if t, err = r.Table("accuracy"); err == nil {
				var n int
				n, err = r.Scored()
				out = struct{ Scored, Rows int }{n, len(t.Rows)}
			}
		}
	case "tables":
		var r *bhasha.Results
		if r, err = bhasha.Open(ctx, l.Run()); err == nil {
			var infos []bhasha.TableInfo
			if infos, err = r.Tables(); err == nil {
				rows := 0
				for _, ti := range infos {
					t, terr := r.Table(ti.Name)
					if terr != nil {
						err = terr
						break
					}
					rows += len(t.Rows)
				}
				out = struct{ Tables, Rows int }{len(infos), rows}
			}
		}
	default:
		err = errors.New("unknown step")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "grid step %s: %v\n", name, err)
		return 1
	}
	raw, _ := json.Marshal(out)
	fmt.Println(string(raw))
	return 0
}
