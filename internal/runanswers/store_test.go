package runanswers_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/analysis/tablestore"
	"github.com/bhashalab/bhasha/internal/runanswers"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// storeRun runs a small IndicKLAR experiment with a two-step strategy
// (whose answers read their first stage) and returns its directory.
func storeRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	exp := bhasha.IndicKLAR("../../testdata/indicklar/project_page_demo_hin_excerpt.json", bhasha.Languages("hin"), bhasha.SampleItems(4),
		bhasha.Strategies("baseline", "2step-en", "tint-cm"), bhasha.Models(bhasha.SimulatedModels()[0]))
	if _, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache"))); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "run")
}

// goRun is a small run of Distractors on TriviaQA (two conditions), made
// in Go, its answers scored and stored; it returns its directory.
func goRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	exp := bhasha.Distractors("../../testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(6))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Samples(); err != nil {
		t.Fatal(err)
	}
	return r.Dir()
}

// answersOf is the run in dir as Answers: its experiment the run's copy,
// read with the built-in studies.
func answersOf(ctx context.Context, t *testing.T, dir string, cfg runanswers.Config) *runanswers.Answers {
	t.Helper()
	a, err := openWith(ctx, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// openAnswers is answersOf with cfg (the zero Config when none), and its
// error.
func openAnswers(dir string, cfg ...runanswers.Config) (*runanswers.Answers, error) {
	var c runanswers.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	return openWith(context.Background(), dir, c)
}

func openWith(ctx context.Context, dir string, cfg runanswers.Config) (*runanswers.Answers, error) {
	m, err := run.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	exp, err := experiment.Load(ctx, filepath.Join(dir, run.ExperimentFile), experiment.LoadOptions{Studies: studies.Builtin()})
	if err != nil {
		return nil, err
	}
	return runanswers.New(ctx, dir, exp, m, nil, cfg), nil
}

// opened opens dir and builds the accuracy table, returning the steps
// reported. The tables kept from an earlier open are removed first:
// these tests are the store's (kept_test.go has the kept tables').
func opened(t *testing.T, dir string, cfg ...runanswers.Config) (*runanswers.Answers, *tables.Table, []string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, tablestore.DirName)); err != nil {
		t.Fatal(err)
	}
	var c runanswers.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	var steps []string
	c.Progress = func(p runanswers.Step) {
		if p.Final {
			steps = append(steps, p.Step)
		}
	}
	r := answersOf(context.Background(), t, dir, c)
	tab, err := r.Table("accuracy")
	if err != nil {
		t.Fatal(err)
	}
	return r, tab, steps
}

func TestScoredStoreServesTheSameRows(t *testing.T) {
	dir := storeRun(t)
	first, tab1, steps := opened(t, dir)
	if !slices.Contains(steps, "scoring") {
		t.Fatalf("first open did not score: %v", steps)
	}
	if _, err := os.Stat(filepath.Join(dir, scored.FileName)); err != nil {
		t.Fatalf("no store after the first open: %v", err)
	}
	second, tab2, steps := opened(t, dir)
	if slices.Contains(steps, "scoring") || !slices.Contains(steps, "reading scored answers") {
		t.Fatalf("second open scored again: %v", steps)
	}
	if !reflect.DeepEqual(first.Rows(), second.Rows()) {
		t.Errorf("stored rows differ from the scored ones")
	}
	if !reflect.DeepEqual(tab1.Rows, tab2.Rows) {
		t.Errorf("accuracy from the store differs")
	}
	if !reflect.DeepEqual(first.Notes(), second.Notes()) {
		t.Errorf("notes differ:\n%q\n%q", first.Notes(), second.Notes())
	}
	// The store is a cache: without it, scoring in memory gives the same.
	mem, _, _ := opened(t, dir, runanswers.Config{NoStore: true})
	if !reflect.DeepEqual(mem.Rows(), first.Rows()) {
		t.Errorf("NoScoredStore rows differ")
	}
}

func TestScoredStoreStaleness(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		note   string
	}{
		{"a new record", func(t *testing.T, dir string) {
			w, err := records.Create(dir)
			if err != nil {
				t.Fatal(err)
			}
			k := engine.Key{Experiment: "indicklar", Model: bhasha.SimulatedModels()[0].Name, Item: "no-such-item", Language: "hin", Form: "native", Strategy: "baseline"}
			rec := &engine.Record{Key: k.String(), Fields: k, Status: engine.StatusOK, Response: "x"}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}, "scored answers recomputed: 1 new record(s) since they were stored"},
		{"a scoring option", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "experiment.yaml")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			edited := strings.Replace(string(b), "lenient_json: false", "lenient_json: true", 1)
			if edited == string(b) {
				t.Fatalf("no lenient_json in the copy:\n%s", b)
			}
			if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "scoring option(s) changed since they were stored: experiment.yaml scoring"},
		{"another Bhasha", func(t *testing.T, dir string) {
			p := filepath.Join(dir, scored.FileName)
			rows, m, err := scored.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			m.Key["tool"] = "bhasha 0.0.9"
			r, err := bhasha.Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := scored.Write(p, rows, r.Experiment().AnswerSchema(), m); err != nil {
				t.Fatal(err)
			}
		}, "another Bhasha scored them (bhasha 0.0.9; this is " + run.ToolVersion + ")"},
		{"other code", func(t *testing.T, dir string) {
			p := filepath.Join(dir, scored.FileName)
			rows, m, err := scored.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			if m.Key["code"] == "" {
				t.Fatalf("the store's key names no code: %v", m.Key)
			}
			m.Key["code"] = "0123456789abcdef"
			r, err := bhasha.Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := scored.Write(p, rows, r.Experiment().AnswerSchema(), m); err != nil {
				t.Fatal(err)
			}
		}, "the program's code is not the code that scored them (this is "},
		{"a truncated store", func(t *testing.T, dir string) {
			p := filepath.Join(dir, scored.FileName)
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "could not be read"},
		{"a store of garbage", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, scored.FileName), []byte("not parquet"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "could not be read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := storeRun(t)
			first, _, _ := opened(t, dir)
			tc.change(t, dir)
			again, _, steps := opened(t, dir)
			if !slices.Contains(steps, "scoring") {
				t.Errorf("not scored again: %v", steps)
			}
			if !slices.ContainsFunc(again.Notes(), func(n string) bool { return strings.Contains(n, tc.note) }) {
				t.Errorf("notes %q lack %q", again.Notes(), tc.note)
			}
			if tc.name != "a scoring option" && !reflect.DeepEqual(first.Rows(), again.Rows()) {
				t.Errorf("rows changed")
			}
			// Scored again and stored: the next open reads the store.
			if _, _, steps := opened(t, dir); slices.Contains(steps, "scoring") {
				t.Errorf("third open scored again: %v", steps)
			}
		})
	}
}

func TestScoredStoreUnwritableDirectory(t *testing.T) {
	dir := storeRun(t)
	// A directory where the store would go: the rename fails even for root.
	if err := os.MkdirAll(filepath.Join(dir, scored.FileName, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, tab, _ := opened(t, dir)
	if len(tab.Rows) == 0 || !slices.ContainsFunc(r.Notes(), func(n string) bool { return strings.Contains(n, "scored answers not stored") }) {
		t.Errorf("rows %d, notes %q", len(tab.Rows), r.Notes())
	}
	if os.Geteuid() == 0 {
		return // root writes into a read-only directory
	}
	ro := storeRun(t)
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	r, tab, _ = opened(t, ro)
	if len(tab.Rows) == 0 || !slices.ContainsFunc(r.Notes(), func(n string) bool {
		return strings.Contains(n, "cannot be written") || strings.Contains(n, "is read-only: its scored answers were not stored")
	}) {
		t.Errorf("read-only: rows %d, notes %q", len(tab.Rows), r.Notes())
	}
}

func TestScoringCancelledLeavesNoStore(t *testing.T) {
	dir := storeRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := answersOf(ctx, t, dir, runanswers.Config{Progress: func(p runanswers.Step) {
		if p.Step == "scoring" && p.Done > 0 {
			cancel() // mid-scoring: after the first batch of records
		}
	}})
	if _, err := r.Table("accuracy"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Table: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, scored.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a store after a cancelled scoring: %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "."+scored.FileName+"-*"))
	if len(matches) > 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

// A run made in Go (no experiment file) keys its stored answers as the
// run directory's copy of its experiment (its portable YAML) keys them
// when the directory is opened: they are read back, with no note that
// they were recomputed.
func TestScoredStoreOfARunMadeInGo(t *testing.T) {
	dir := goRun(t) // scored and stored
	if _, err := os.Stat(filepath.Join(dir, scored.FileName)); err != nil {
		t.Fatal(err)
	}
	r, err := bhasha.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Table("accuracy"); err != nil {
		t.Fatal(err)
	}
	for _, n := range r.Notes() {
		if strings.Contains(n, "recomputed") {
			t.Errorf("note %q", n)
		}
	}
}

// A store with a byte flipped (its pages, its footer, its metadata, its
// tail) is never served: the records are scored again, to the same rows,
// the store is written anew, and a note names the file and says it could
// not be read and was rewritten from the records.
func TestDamagedScoredStoreRescored(t *testing.T) {
	dir := storeRun(t)
	first, tab, _ := opened(t, dir)
	p := filepath.Join(dir, scored.FileName)
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	n := len(orig)
	footer := n - 8 - int(binary.LittleEndian.Uint32(orig[n-8:]))
	notes := bytes.LastIndex(orig, []byte("bhasha.notes"))
	cases := []struct {
		name string
		at   int
	}{
		{"magic", 2},
		{"a page", footer / 3},
		{"another page", 2 * footer / 3},
		{"the footer's schema", footer + 20},
		{"the metadata's notes", notes + len("bhasha.notes") + 4},
		{"the footer's end", n - 9},
		{"the tail", n - 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := bytes.Clone(orig)
			b[c.at] ^= 0x08
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			again, got, steps := opened(t, dir)
			if !slices.Contains(steps, "scoring") {
				t.Fatalf("not scored again: %v", steps)
			}
			if !slices.ContainsFunc(again.Notes(), func(n string) bool {
				return strings.Contains(n, p+" could not be read") && strings.Contains(n, "rewritten from the records")
			}) {
				t.Errorf("notes %q lack one on the damaged store", again.Notes())
			}
			if !reflect.DeepEqual(first.Rows(), again.Rows()) || !reflect.DeepEqual(got.Rows, tab.Rows) {
				t.Errorf("rows changed")
			}
			if _, _, err := scored.Read(p); err != nil {
				t.Errorf("the store is not written anew: %v", err)
			}
		})
	}
}
