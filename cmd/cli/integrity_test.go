package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// runCLI runs c and returns its exit status and combined output.
func runCLI(t *testing.T, c *exec.Cmd) (int, string) {
	t.Helper()
	out, err := c.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// A second run on a directory in use fails at once, naming the directory
// and the first run's PID; the first finishes with one record per key.
func TestSecondRunOnBusyDirectoryFails(t *testing.T) {
	const n = 300
	hold, release := holdAfter(t, n-10, nil) // the first run holds the directory until the second has ended
	url := simtest.Start(t, sim.Config{TTFT: 15 * time.Millisecond, OnRequest: hold})
	dir := t.TempDir()
	cfg := writeExperiment(t, dir, n)
	out := filepath.Join(dir, "run")
	args := []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}
	first, se := startRun(t, args, out, 10)
	code, msg := runCLI(t, cli(args...))
	release()
	if code == 0 || !strings.Contains(msg, out) || !strings.Contains(msg, fmt.Sprintf("process %d", first.Process.Pid)) {
		t.Errorf("second run: exit %d: %s", code, msg)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first run: %v\n%s", err, se.String())
	}
	keys := map[string]bool{}
	if err := records.Read(out, func(r *engine.Record) error {
		if keys[r.Key] {
			t.Errorf("two records for %s", r.Key)
		}
		keys[r.Key] = true
		return nil
	}); err != nil || len(keys) != n {
		t.Fatalf("%d keys: %v", len(keys), err)
	}
}

// smokeRun runs a smoke experiment into a fresh directory against a fresh
// simulator and returns the directory.
func smokeRun(t *testing.T, file string) string {
	t.Helper()
	url := simtest.Start(t, sim.Config{Facts: nil})
	out := t.TempDir()
	args := []string{"run", "--config", filepath.Join("../../testdata/experiments", file), "--out", out, "--cache-dir", filepath.Join(out, "cache"), "--endpoint", url}
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	return out
}

// A records file with every key twice (written by two runs at once before
// directories were locked) scores as once, and the report says so.
func TestReportIgnoresDuplicateRecords(t *testing.T) {
	out := smokeRun(t, "smoke-mdi.yaml")
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"report", "--run", out}, &so, &se); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(out, "tables", "accuracy.csv"))
	p := filepath.Join(out, records.FileName)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, append(b, b...), 0o644)
	// Scored directly: the report command would first repair the file
	// while completing the judge stage.
	r, err := bhasha.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteTables(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(out, "tables", "accuracy.csv"))
	if !bytes.Equal(got, want) {
		t.Errorf("accuracy changed with duplicated records:\n%s\nwas\n%s", got, want)
	}
	// The notes say the scored answers were stored before the records
	// doubled, and that the duplicates are ignored (after the run's own
	// warning: the simulator did not know the items).
	n := bytes.Count(b, []byte("\n"))
	notes := r.Notes()
	if len(notes) != 3 || !strings.Contains(notes[0], "without it knowing their item") ||
		!strings.Contains(notes[1], fmt.Sprintf("scored answers recomputed: %d new record(s)", n)) ||
		!strings.Contains(notes[2], fmt.Sprintf("%d duplicate record(s) ignored", n)) {
		t.Errorf("report did not say it ignored duplicates: %q", notes)
	}
}

// checkTables asserts that every CSV under dir is whole: it parses, every
// row has the header's width, and it equals the complete report's file.
func checkTables(t *testing.T, dir string, complete map[string][]byte) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := csv.NewReader(bytes.NewReader(b))
		if _, err := r.ReadAll(); err != nil || (len(b) > 0 && b[len(b)-1] != '\n') {
			t.Errorf("%s is torn (%d bytes): %v", filepath.Base(f), len(b), err)
			continue
		}
		if want, ok := complete[filepath.Base(f)]; ok && !bytes.Equal(b, want) {
			t.Errorf("%s differs from the complete report's (%d vs %d bytes)", filepath.Base(f), len(b), len(want))
		}
	}
}

// bigMDIRun runs the distractor study over n generated TriviaQA questions
// under two conditions, so that its report writes megabytes of tables.
func bigMDIRun(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `{"context": "Question: Which city is number %d on the list?\nAnswer:", "answer": "City %d", "aliases": ["City %d", "city no. %d"]}`+"\n", i, i, i, i)
	}
	os.WriteFile(filepath.Join(dir, "tqa.jsonl"), []byte(sb.String()), 0o644)
	cfg := filepath.Join(dir, "big.yaml")
	os.WriteFile(cfg, []byte(`name: big-mdi
study: mdi
dataset: {path: tqa.jsonl}
conditions: [clean, hi]
models: [{name: tiny-1b, served_name: sim-tiny-1b, endpoints: ["http://127.0.0.1:1/v1"], max_concurrency: 256}]
decoding: {max_tokens: 32}
`), 0o644)
	url := simtest.Start(t, sim.Config{})
	out := filepath.Join(dir, "run")
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	return out
}

// A report killed at any moment leaves each table either absent or whole:
// half the trials kill at a random time within the report's run time, the
// other half the moment answers.csv (or its temporary file) appears.
func TestKilledReportLeavesNoTornTable(t *testing.T) {
	out := bigMDIRun(t, 4000)
	tables := filepath.Join(out, "tables")
	start := time.Now()
	if code, msg := runCLI(t, cli("report", "--run", out)); code != 0 {
		t.Fatalf("report: %s", msg)
	}
	took := time.Since(start)
	complete := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(tables, "*.csv"))
	for _, f := range files {
		complete[filepath.Base(f)], _ = os.ReadFile(f)
	}
	if len(complete) < 5 || len(complete["answers.csv"]) < 500<<10 {
		t.Fatalf("the report wrote %d tables, answers.csv %d bytes", len(complete), len(complete["answers.csv"]))
	}
	writingAnswers := func() bool {
		es, _ := os.ReadDir(tables)
		for _, e := range es {
			if strings.Contains(e.Name(), "answers") {
				return true
			}
		}
		return false
	}
	for trial := range 6 {
		os.RemoveAll(tables)
		c := cli("report", "--run", out)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if trial%2 == 0 {
			time.Sleep(time.Duration(rand.Int64N(int64(took))))
		} else {
			for deadline := time.Now().Add(30 * time.Second); !writingAnswers() && time.Now().Before(deadline); {
				time.Sleep(50 * time.Microsecond)
			}
		}
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		checkTables(t, tables, complete)
	}
}

// On a full filesystem the run fails with "no space left on device" and
// its summary counts only what reached records.jsonl; a resume with room
// then completes exactly. Needs root to mount a small tmpfs.
func TestFullDiskCountsWhatWasWritten(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs (the writer's own test injects ENOSPC)")
	}
	mnt := t.TempDir()
	if msg, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, msg)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	const n = 160
	url := simtest.Start(t, sim.Config{})
	dir := t.TempDir()
	cfg := writeExperiment(t, dir, n)
	out := filepath.Join(mnt, "run")
	args := []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}
	code, msg := runCLI(t, cli(args...))
	if code == 0 || !strings.Contains(msg, "no space left on device") {
		t.Fatalf("exit %d: %s", code, msg)
	}
	whole := countLines(filepath.Join(out, records.FileName))
	if whole >= n {
		t.Fatalf("the tmpfs held all %d records; make it smaller", whole)
	}
	if !strings.Contains(msg, fmt.Sprintf(": %d records (%d ok", whole, whole)) {
		t.Errorf("the summary does not count the %d records in the file:\n%s", whole, msg)
	}
	if tmps, _ := filepath.Glob(filepath.Join(out, "*.tmp")); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	// Move the run to a disk with room and resume: exactly n records.
	moved := filepath.Join(dir, "moved")
	if err := exec.Command("cp", "-r", out, moved).Run(); err != nil {
		t.Fatal(err)
	}
	args[4] = moved
	if code, msg := runCLI(t, cli(args...)); code != 0 {
		t.Fatalf("resume: %s", msg)
	}
	m, err := run.ReadManifest(moved)
	if err != nil || m.Status != "complete" || m.Counts.Records != n || countLines(filepath.Join(moved, records.FileName)) != n {
		t.Errorf("after resume: %v %+v", err, m)
	}
}

// A run with failed requests exits 3 and says how to resume; the resumed
// run retries only those and exits 0. Bad bounds and URLs are refused
// before anything is sent.
func TestExitStatusesAndBounds(t *testing.T) {
	dir := t.TempDir()
	cfg := writeExperiment(t, dir, 20)
	b, _ := os.ReadFile(cfg)
	// The same keys, asked for more tokens than the model's context: every
	// request gets a 400 and fails at once.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, bytes.Replace(b, []byte("max_tokens: 8"), []byte("max_tokens: 1048576"), 1), 0o644)
	url := simtest.Start(t, sim.Config{})
	out := filepath.Join(dir, "run")
	code, msg := runCLI(t, cli("run", "--config", bad, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url))
	if code != exitIncomplete || !strings.Contains(msg, "20 request(s) failed") || !strings.Contains(msg, "run the same command again") {
		t.Errorf("failed requests: exit %d: %s", code, msg)
	}
	// An incomplete run is not scored: its tables would count failures
	// the resumed run retries.
	if left := scoredFiles(out); len(left) > 0 {
		t.Errorf("the incomplete run wrote %v", left)
	}
	code, msg = runCLI(t, cli("run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url))
	if code != 0 || !strings.Contains(msg, "20 records (20 ok, 0 failed)") || !strings.Contains(msg, out+": 20 scored answers") {
		t.Errorf("resumed: exit %d: %s", code, msg)
	}

	for _, c := range []struct {
		name  string
		extra []string
		yaml  string
		want  string
	}{
		{"negative concurrency", []string{"--concurrency", "-3"}, "", "--concurrency must be positive"},
		{"credentials in --endpoint", []string{"--endpoint", "http://user:s3cret@127.0.0.1:1/v1"}, "", "carries credentials"},
		{"negative max_attempts", nil, "engine: {max_attempts: -2}\n", "line 6: engine.max_attempts must be positive"},
		{"credentials in the file", nil, "judge: {name: j, served_name: x, endpoints: [\"http://user:s3cret@h/v1\"]}\n", "line 6: judge: endpoint http://***@h/v1 carries credentials"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := cfg
			if c.yaml != "" {
				cfg = filepath.Join(t.TempDir(), "exp.yaml")
				os.WriteFile(cfg, append(b, c.yaml...), 0o644)
			}
			args := []string{"run", "--config", cfg, "--out", filepath.Join(t.TempDir(), "run")}
			code, msg := runCLI(t, cli(append(args, c.extra...)...))
			if code != exitFailed || !strings.Contains(msg, c.want) || strings.Contains(msg, "s3cret") {
				t.Errorf("exit %d: %s", code, msg)
			}
		})
	}
}

// SIGINT stops a dataset load (exit 130), in datasets check and in run:
// the error names the file whose reading it stopped.
func TestInterruptDuringDatasetLoad(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	sb.WriteString(`{"Data": [`)
	for i := range 400000 {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, `{"Question": "Question number %d about a city?", "QuestionId": "q%d", "Answer": {"Value": "City %d", "Aliases": ["City %d"], "NormalizedAliases": ["city %d"]}}`, i, i, i, i, i)
	}
	sb.WriteString("]}\n")
	data := filepath.Join(dir, "big.json")
	os.WriteFile(data, []byte(sb.String()), 0o644)
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte("name: big\nstudy: mdi\ndataset: {path: big.json}\nconditions: [clean]\nmodels: [{name: m, served_name: sim-tiny-1b, endpoints: [\"http://127.0.0.1:1/v1\"]}]\n"), 0o644)
	for _, args := range [][]string{{"datasets", "check", data}, {"run", "--config", cfg, "--out", filepath.Join(dir, "run")}} {
		reading := args[2] // the file being read when the signal comes
		c := cli(args...)
		var se bytes.Buffer
		c.Stderr = &se
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// Signal once the child has the dataset open: it is loading, and its
		// handler, installed first thing in main, is in place, whatever the
		// machine's load.
		for deadline := time.Now().Add(20 * time.Second); !hasOpen(c.Process.Pid, data) && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		c.Process.Signal(syscall.SIGINT)
		err := c.Wait()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != exitInterrupted || !strings.Contains(se.String(), reading+": context canceled") {
			t.Errorf("%s: %v: %s", args[0], err, se.String())
		}
	}
}

// hasOpen reports whether process pid has the file path open
// (/proc/PID/fd).
func hasOpen(pid int, path string) bool {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == path {
			return true
		}
	}
	return false
}

// Batch import reads responses with the engine's parser: a 200 whose
// content is null is a failed record, not an empty answer, and is not
// cached.
func TestBatchImportNullContent(t *testing.T) {
	url, _, _, out, cdir, so := exportBatch(t, 5)
	var se bytes.Buffer
	ofile := playBatch(t, filepath.Join(out, "batch", "input.jsonl"), url, -1)
	b, _ := os.ReadFile(ofile)
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = strings.Replace(lines[2], `"content":"`, `"content":null,"was":"`, 1)
	os.WriteFile(ofile, []byte(strings.Join(lines, "")), 0o644)
	so.Reset()
	if err := dispatch(context.Background(), []string{"batch", "import", "--out", out, "--file", ofile, "--cache-dir", cdir}, so, &se); err != nil {
		t.Fatalf("%v %s", err, se.String())
	}
	if !strings.Contains(so.String(), "imported 4 ok, 1 failed") {
		t.Fatalf("import said %q", so.String())
	}
	failed := 0
	records.Read(out, func(r *engine.Record) error {
		if r.Status == engine.StatusFailed {
			failed++
			if !strings.Contains(r.Error, "message.content is null") {
				t.Errorf("%s: %s", r.Key, r.Error)
			}
		} else if r.Response == "" {
			t.Errorf("%s: ok and empty", r.Key)
		}
		return nil
	})
	if failed != 1 {
		t.Errorf("%d failed records", failed)
	}
}

// bhasha demo runs from any directory: its experiments and data are
// built in, and every table it writes says simulated.
func TestDemoFromAnyDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	c := cli("demo", "--out", out)
	c.Dir = t.TempDir()
	if code, msg := runCLI(t, c); code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	if idx, err := os.ReadFile(filepath.Join(out, "report.html")); err != nil || !strings.Contains(string(idx), `href="smoke-mdi/report.html"`) || !strings.Contains(string(idx), "SIMULATED") {
		t.Errorf("the demo's index: %v", err)
	}
	_, browser := exec.LookPath("chromium")
	for _, name := range []string{"smoke-bmlama", "smoke-indicklar", "smoke-indicquest", "smoke-klar", "smoke-mdi", "smoke-mdi-truthfulqa"} {
		b, err := os.ReadFile(filepath.Join(out, name, "tables", "accuracy.csv"))
		if err != nil || !strings.HasPrefix(string(b), "simulated,") || !strings.Contains(string(b), "\ntrue,") {
			t.Errorf("%s: %v %.100s", name, err, b)
		}
		// The report, the workbook and the paper-ready exports.
		for _, f := range []string{filepath.Join(name, "report.html"), filepath.Join(name, "report.xlsx"), filepath.Join("figures", name, "tables", "accuracy.tex")} {
			if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s: %v", name, f, err)
			}
		}
		html, _ := os.ReadFile(filepath.Join(out, name, "report.html"))
		charts := strings.Count(string(html), `<div class="chart"`)
		if svgs, _ := filepath.Glob(filepath.Join(out, "figures", name, "figures", "*.svg")); browser == nil && len(svgs) != charts {
			t.Errorf("%s: %d SVG figures for %d charts", name, len(svgs), charts)
		}
	}
	// The demo shows the study's headline metric: CLC over every pair of
	// BMLAMA's four Indian languages, as a table and as Fig. 4's heatmap.
	if b, _ := os.ReadFile(filepath.Join(out, "smoke-bmlama", "tables", "clc_mean.csv")); strings.Count(string(b), "\n") < 9 {
		t.Errorf("smoke-bmlama's clc_mean has no rows:\n%s", b)
	}
	if html, _ := os.ReadFile(filepath.Join(out, "smoke-bmlama", "report.html")); !strings.Contains(string(html), "Fig. 4") {
		t.Error("smoke-bmlama's report has no CLC heatmap (Fig. 4)")
	}
	// The index workbook: every run, linked, and its headline tables.
	f, err := excelize.OpenFile(filepath.Join(out, "report.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("experiments")
	if len(rows) != 7 || rows[0][0] != "experiment" {
		t.Errorf("index workbook rows %q", rows)
	}
	if ok, link, _ := f.GetCellHyperLink("experiments", "F2"); !ok || !strings.HasSuffix(link, "/report.html") {
		t.Errorf("index workbook F2 links to %q", link)
	}
	sheets := strings.Join(f.GetSheetList(), "|")
	for _, want := range []string{"smoke-mdi conditions", "smoke-indicquest domains", "smoke-indicklar acc_clc", "SIMULATED"} {
		if want == "SIMULATED" {
			if v, _ := f.GetCellValue("README", "A2"); !strings.HasPrefix(v, want) {
				t.Errorf("index workbook README A2 %q", v)
			}
			continue
		}
		if !strings.Contains(sheets, want) {
			t.Errorf("index workbook lacks a %q sheet: %s", want, sheets)
		}
	}
}

// Running into a directory after the experiment changed stops before
// sending anything and says what changed; --archive-changed moves the old
// records aside and asks again; an unchanged finished run sends nothing.
func TestResumeAfterChange(t *testing.T) {
	const n = 12
	log := &bodyLog{}
	url := simtest.Start(t, sim.Config{OnRequest: log.add})
	dir := t.TempDir()
	cfg := writeExperiment(t, dir, n)
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, bytes.Replace(b, []byte("max_tokens: 8"), []byte("max_tokens: 4"), 1), 0o644)
	out := filepath.Join(dir, "run")
	args := []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}
	if code, msg := runCLI(t, cli(args...)); code != 0 {
		t.Fatalf("first run: %s", msg)
	}
	log.take()
	os.WriteFile(cfg, bytes.Replace(b, []byte("max_tokens: 8"), []byte("max_tokens: 64"), 1), 0o644)
	code, msg := runCLI(t, cli(args...))
	want := fmt.Sprintf("%d of the %d recorded request(s) of stage 1 are now asked differently: decoding.max_tokens 4 → 64 (%d). Nothing was sent", n, n, n)
	if code != exitFailed || !strings.Contains(msg, want) || !strings.Contains(msg, "--archive-changed") {
		t.Errorf("changed experiment: exit %d: %s", code, msg)
	}
	if sent := len(log.take()); sent != 0 {
		t.Errorf("the changed run sent %d requests", sent)
	}
	code, msg = runCLI(t, cli(append(args, "--archive-changed")...))
	if code != 0 || !strings.Contains(msg, fmt.Sprintf("%d record(s) moved to", n)) || !strings.Contains(msg, fmt.Sprintf("asked differently now: %d", n)) {
		t.Fatalf("--archive-changed: exit %d: %s", code, msg)
	}
	if sent := len(log.take()); sent != n {
		t.Errorf("--archive-changed sent %d requests, want %d", sent, n)
	}
	archived, _ := filepath.Glob(filepath.Join(out, records.ArchiveDir, "changed-*.jsonl"))
	if len(archived) != 1 || countLines(archived[0]) != n || countLines(filepath.Join(out, records.FileName)) != n {
		t.Errorf("archive %v, records %d", archived, countLines(filepath.Join(out, records.FileName)))
	}
	records.Read(out, func(r *engine.Record) error {
		if !bytes.Contains(r.Request, []byte(`"max_tokens":64`)) || r.RequestSHA256 != engine.RequestDigest(r.Request) {
			t.Errorf("%s: request %s", r.Key, r.Request)
		}
		return nil
	})
	m, err := run.ReadManifest(out)
	if err != nil || len(m.Archived) != 1 || m.Counts.Records != n || m.Decodings["synthetic"][0].MaxTokens != 64 {
		t.Errorf("manifest: %v %+v %+v", err, m.Archived, m.Decodings)
	}
	if code, msg := runCLI(t, cli(args...)); code != 0 || !strings.Contains(msg, "nothing to do") {
		t.Errorf("unchanged rerun: exit %d: %s", code, msg)
	}
	if sent := len(log.take()); sent != 0 {
		t.Errorf("the unchanged rerun sent %d requests", sent)
	}
}

// A study's manifest records the decoding of every strategy and stage,
// and report says when a dataset changed since the run.
func TestManifestDecodingsAndChangedInputs(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/triviaqa")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("../../testdata/experiments/smoke-mdi.yaml")
	cfg := filepath.Join(dir, "mdi.yaml")
	os.WriteFile(cfg, bytes.Replace(b, []byte("../triviaqa/"), nil, 1), 0o644)
	exp, err := bhasha.Load(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items())})
	out := filepath.Join(dir, "run")
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}, &so, &se); err != nil {
		t.Fatalf("%v %s", err, se.String())
	}
	m, err := run.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Decodings["qa"]; len(d) != 1 || d[0].MaxTokens != 32 {
		t.Errorf("decodings %+v", m.Decodings)
	}
	if d := m.Decodings["qa judge"]; len(d) != 1 || d[0].MaxTokens == 0 {
		t.Errorf("judge decoding %+v", m.Decodings)
	}
	data := filepath.Join(dir, "triviaqa_small.jsonl")
	db, _ := os.ReadFile(data)
	os.WriteFile(data, bytes.Replace(db, []byte("David Seville"), []byte("Ross Bagdasarian"), 1), 0o644)
	se.Reset()
	if err := dispatch(context.Background(), []string{"report", "--run", out, "--endpoint", url, "--cache-dir", filepath.Join(dir, "cache")}, &so, &se); err != nil {
		t.Fatalf("%v %s", err, se.String())
	}
	if !strings.Contains(se.String(), "triviaqa_small.jsonl changed since the run") {
		t.Errorf("report did not say the dataset changed: %s", se.String())
	}
}
