package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// sealNow seals out's live records into the next segment, as a run does
// once its records.jsonl is large.
func sealNow(t *testing.T, out string) string {
	t.Helper()
	lk, err := records.LockDir(out, records.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	seg, err := records.Seal(lk, out, 0, nil)
	if err != nil || seg == "" {
		t.Fatalf("seal: %q %v", seg, err)
	}
	return seg
}

// A run killed with SIGKILL, its records then sealed into a segment,
// resumes without sending a request of a sealed record again, ends with
// one record per key across the segments and records.jsonl, and a third
// start after another seal sends nothing.
func TestResumeAfterSealing(t *testing.T) {
	const n = 300
	log := &bodyLog{}
	hold, release := holdAfter(t, n-10, log.add) // the run is killed before it can finish
	url := simtest.Start(t, sim.Config{TTFT: 15 * time.Millisecond, OnRequest: hold})
	dir := t.TempDir()
	cfg := writeExperiment(t, dir, n)
	out, cdir := filepath.Join(dir, "run"), filepath.Join(dir, "cache")
	args := []string{"run", "--config", cfg, "--out", out, "--cache-dir", cdir, "--endpoint", url}

	child, _ := startRun(t, args, out, 40)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	release()
	log.take()
	// The killed run may have left a torn last line: the resume repairs
	// it, so seal after a scan has cut it.
	if _, _, err := records.Prepare(out); err != nil {
		t.Fatal(err)
	}
	sealNow(t, out)
	sealed := map[string]bool{}
	records.Read(out, func(r *engine.Record) error { sealed[string(r.Request)] = true; return nil })
	if len(sealed) == 0 || len(sealed) >= n {
		t.Fatalf("%d records sealed", len(sealed))
	}

	if msg, err := cli(args...).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, msg)
	}
	for _, b := range log.take() {
		if sealed[string(b)] {
			t.Errorf("the resume sent a sealed record's request again: %s", b)
		}
	}
	files, _ := records.Files(out)
	if len(files) != 2 || filepath.Base(files[0]) != records.SegmentName(1) || filepath.Base(files[1]) != records.FileName {
		t.Errorf("files %v", files)
	}
	sealNow(t, out)
	msg, err := cli(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("third run: %v\n%s", err, msg)
	}
	if sent := len(log.take()); sent != 0 {
		t.Errorf("re-running a finished, sealed experiment sent %d requests", sent)
	}
	if segs, _ := filepath.Glob(filepath.Join(out, "records-*.parquet")); len(segs) != 2 {
		t.Fatalf("segments after two seals: %v", segs)
	}
	keys := map[string]bool{}
	if err := records.Read(out, func(r *engine.Record) error {
		if keys[r.Key] {
			t.Errorf("two records for %s", r.Key)
		}
		keys[r.Key] = true
		return nil
	}); err != nil || len(keys) != n {
		t.Fatalf("%d keys, %v", len(keys), err)
	}
	var m struct {
		Status string
		Counts struct{ Records, OK int }
	}
	b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	json.Unmarshal(b, &m)
	if m.Status != "complete" || m.Counts.Records != n || m.Counts.OK != n {
		t.Errorf("manifest %s", b)
	}

	// The report reads the sealed run as it reads the same records in one
	// plain records.jsonl: the same tables.
	plain := filepath.Join(dir, "plain")
	os.MkdirAll(plain, 0o755)
	w, err := records.Create(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := records.Read(out, w.Write); err != nil { // the same lines, sealed again
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manifest.json", "experiment.yaml"} {
		b, _ := os.ReadFile(filepath.Join(out, name))
		os.WriteFile(filepath.Join(plain, name), b, 0o644)
	}
	for _, d := range []string{out, plain} {
		if code, msg := runCLI(t, cli("report", "--run", d)); code != 0 {
			t.Fatalf("report %s: %s", d, msg)
		}
	}
	tables, _ := filepath.Glob(filepath.Join(out, "tables", "*.csv"))
	if len(tables) == 0 {
		t.Fatal("no tables")
	}
	for _, tp := range tables {
		a, _ := os.ReadFile(tp)
		b, _ := os.ReadFile(filepath.Join(plain, "tables", filepath.Base(tp)))
		if string(a) != string(b) {
			t.Errorf("%s differs between the sealed run and its plain copy", filepath.Base(tp))
		}
	}
}
