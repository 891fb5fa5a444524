package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/internal/simulate"
	"github.com/bhashalab/bhasha/runtime/grid"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// timingColumn reports whether a table column holds how long something
// took, which differs between any two runs of the same requests.
func timingColumn(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "latency") || strings.HasSuffix(n, "_ms") || strings.Contains(n, "seconds")
}

// csvWithoutTimings reads a CSV file as text with its timing columns
// (timingColumn) left out; answers.csv's rows, which follow the order the
// answers arrived in, are sorted.
func csvWithoutTimings(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rows) == 0 {
		return ""
	}
	var keep []int
	for i, h := range rows[0] {
		if !timingColumn(h) {
			keep = append(keep, i)
		}
	}
	lines := make([]string, len(rows))
	for n, row := range rows {
		var b strings.Builder
		for _, i := range keep {
			if i < len(row) {
				b.WriteString(row[i])
			}
			b.WriteByte('\t')
		}
		lines[n] = b.String()
	}
	if filepath.Base(path) == "answers.csv" {
		slices.Sort(lines[1:])
	}
	return strings.Join(lines, "\n")
}

// reportTables runs `bhasha report --run dir` and returns the directory
// its tables went to, read as csvWithoutTimings does, by file name.
func reportTables(t *testing.T, dir string) map[string]string {
	t.Helper()
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"report", "--run", dir}, &so, &se); err != nil {
		t.Fatalf("report --run %s: %v\n%s", dir, err, se.String())
	}
	out := dir
	if grid.IsGrid(dir) {
		out = filepath.Join(dir, grid.MergedDir)
	}
	files, err := filepath.Glob(filepath.Join(out, "tables", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("report --run %s wrote no tables under %s: %v\n%s", dir, out, err, so.String())
	}
	tables := map[string]string{}
	for _, f := range files {
		tables[filepath.Base(f)] = csvWithoutTimings(t, f)
	}
	return tables
}

// An experiment of each built-in study, run as 4 shards in separate
// processes against servers of their own, one of them stopped by SIGTERM
// part-way and run again, is opened as one run whose every table (and
// answers.csv) is the single-process run's, timings aside.
func TestGridEqualsSingleRun(t *testing.T) {
	const shards = 4
	dir := t.TempDir()
	if err := os.CopyFS(dir, bhasha.DefaultInputs()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"smoke-indicklar.yaml", "smoke-indicquest.yaml", "smoke-mdi.yaml"} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, "experiments", name)
			exp, err := bhasha.Load(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			simCfg := func() sim.Config { return sim.Config{Facts: sim.FactsOf(exp.Items()), Models: simulate.ModelsOf(exp)} }
			whole, g := filepath.Join(dir, "whole", name), filepath.Join(dir, "grid", name)
			var se bytes.Buffer
			if err := dispatch(ctx, []string{"run", "--config", f, "--out", whole, "--cache-dir", filepath.Join(dir, "cache-whole"), "--endpoint", simtest.Start(t, simCfg())}, &bytes.Buffer{}, &se); err != nil {
				t.Fatalf("single run: %v\n%s", err, se.String())
			}
			p, err := planOf(ctx, exp, shards)
			if err != nil {
				t.Fatal(err)
			}
			const stopped = 1 // the shard stopped part-way
			for k := range shards {
				args := []string{"run", "--config", f, "--out", g, "--cache-dir", filepath.Join(dir, "cache-grid", fmt.Sprint(k)), "--shard", fmt.Sprintf("%d/%d", k, shards)}
				if k != stopped {
					args = append(args, "--endpoint", simtest.Start(t, simCfg()))
					if msg, err := cli(args...).CombinedOutput(); err != nil {
						t.Fatalf("shard %d: %v\n%s", k, err, msg)
					}
					continue
				}
				half := max(p.layout.Shards[k].Requests/2, 1)
				held := make(chan struct{})
				var once sync.Once
				hold, release := holdAfter(t, half, nil)
				asked := atomic.Int64{}
				c := simCfg()
				c.OnRequest = func(path string, body []byte) {
					if asked.Add(1) > int64(half) {
						once.Do(func() { close(held) })
					}
					hold(path, body)
				}
				args = append(args, "--endpoint", simtest.Start(t, c))
				child, stderr := startShard(t, args, held)
				if err := child.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				var ee *exec.ExitError
				if err := child.Wait(); !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
					t.Fatalf("stopped shard: %v, want exit status %d\n%s", err, exitInterrupted, stderr.String())
				}
				sd := filepath.Join(g, fmt.Sprintf("shard-%03d-of-%03d", k, shards))
				if m, err := run.ReadManifest(sd); err != nil || m.Status != "interrupted" {
					t.Fatalf("manifest after SIGTERM: %+v, %v; want an interrupted shard", m, err)
				}
				// The grid opens as a partial run that names the stopped
				// shard, without asking anything.
				var se bytes.Buffer
				if err := dispatch(ctx, []string{"report", "--run", g}, &bytes.Buffer{}, &se); err != nil {
					t.Fatalf("report of the partial grid: %v\n%s", err, se.String())
				}
				for _, want := range []string{"the run is partial", "running the grid's missing and unfinished shards again resumes it", "shards not finished: shard-001-of-004 (interrupted)"} {
					if !strings.Contains(se.String(), want) {
						t.Errorf("the partial grid's report says no %q:\n%s", want, se.String())
					}
				}
				release()
				if msg, err := cli(args...).CombinedOutput(); err != nil {
					t.Fatalf("resumed shard %d: %v\n%s", k, err, msg)
				}
			}
			want, got := reportTables(t, whole), reportTables(t, g)
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
				t.Fatalf("the grid's tables %v, the single run's %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
			}
			if _, ok := want["answers.csv"]; !ok {
				t.Errorf("the report wrote no answers.csv")
			}
			for n, w := range want {
				if got[n] != w {
					t.Errorf("%s differs between the grid and the single run:\n%s", n, lineDiff(got[n], w))
				}
			}
			m, err := run.ReadManifest(filepath.Join(g, grid.MergedDir))
			if err != nil || m.Status != "complete" || len(m.Warnings) != 0 {
				t.Errorf("merged manifest: %+v, %v; want complete without warnings", m, err)
			}
		})
	}
}

// lineDiff names the first lines that differ between got and want.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	n := 0
	for i := range max(len(g), len(w)) {
		var a, c string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			c = w[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n  grid:   %q\n  single: %q\n", i+1, a, c)
			if n++; n == 5 {
				break
			}
		}
	}
	fmt.Fprintf(&b, "(%d and %d lines)", len(g), len(w))
	return b.String()
}
