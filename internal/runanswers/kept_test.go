package runanswers_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/analysis/tablestore"
	"github.com/bhashalab/bhasha/internal/runanswers"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// A table built once is kept in the run directory: later Answers get it,
// and the count of scored answers, without scoring or reading the scored
// answers back; records changed since, or a store that is no more and
// NoScoredStore, build it again from the records.
func TestKeptTables(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, dir string) // between the two opens
		opts []runanswers.Config
		kept bool // the second open's table is the kept one
	}{
		{"as it was", nil, nil, true},
		{"records touched", func(t *testing.T, dir string) {
			files, _ := filepath.Glob(filepath.Join(dir, "records*.jsonl*"))
			if len(files) == 0 {
				t.Fatal("no records file")
			}
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(files[0], later, later); err != nil {
				t.Fatal(err)
			}
		}, nil, false},
		{"kept file cut short", func(t *testing.T, dir string) {
			if err := os.WriteFile(tablestore.Path(dir, "accuracy"), []byte("PAR1"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, nil, false},
		{"no store asked for", nil, []runanswers.Config{{NoStore: true}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := goRun(t)
			first, err := openAnswers(dir)
			if err != nil {
				t.Fatal(err)
			}
			want, err := first.Table("accuracy")
			if err != nil {
				t.Fatal(err)
			}
			n, _ := first.Scored()
			if _, err := os.Stat(tablestore.Path(dir, "accuracy")); err != nil {
				t.Fatalf("the table was not kept: %v", err)
			}
			if c.edit != nil {
				c.edit(t, dir)
			}
			second, err := openAnswers(dir, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := second.Table("accuracy")
			if err != nil {
				t.Fatal(err)
			}
			if kept := !(second.Rows() != nil); kept != c.kept {
				t.Errorf("the table was kept: %v, want %v", kept, c.kept)
			}
			if m, err := second.Scored(); err != nil || m != n {
				t.Errorf("scored: %d (%v), want %d", m, err, n)
			}
			if c.kept && (second.Rows() != nil) {
				t.Error("counting the scored answers scored them")
			}
			if !slices.EqualFunc(got.Rows, want.Rows, slices.Equal) || got.Simulated != want.Simulated || !slices.Equal(got.Header, want.Header) {
				t.Errorf("table:\n%v\nwant\n%v", got.Rows, want.Rows)
			}
		})
	}
}

// The answers table, made row by row, is not kept, though a caller of
// Table gets it held (its file would be the size of the run).
func TestAnswersNotKept(t *testing.T) {
	dir := goRun(t)
	r, err := openAnswers(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := r.Table("answers")
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != nil || len(a.Rows) != len(r.Rows()) {
		t.Fatalf("answers: source %v, %d rows for %d answers", a.Source != nil, len(a.Rows), len(r.Rows()))
	}
	if _, err := r.Table("accuracy"); err != nil {
		t.Fatal(err)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, tablestore.DirName, "*.parquet"))
	if len(kept) == 0 || slices.ContainsFunc(kept, func(p string) bool { return filepath.Base(p) == "answers.parquet" }) {
		t.Errorf("kept: %v (want accuracy's, not the answers')", kept)
	}
}

// A table asked for again of the Answers that built it is the one built:
// its kept file is neither read (it was removed) nor written again.
func TestBuiltTableServedAgain(t *testing.T) {
	dir := goRun(t)
	res, err := openAnswers(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := res.Table("accuracy")
	if err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, tablestore.DirName)
	if err := os.RemoveAll(kept); err != nil {
		t.Fatal(err)
	}
	again, err := res.Table("accuracy")
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("the second call gave another table than the one built")
	}
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Errorf("the second call wrote the kept tables again (%v)", err)
	}
}

// A kept table with a byte flipped (its magic, its cells, its footer) is
// never served: the table is built again from the scored answers, equal to
// the one first built, kept anew, and a note names the file and says it
// was damaged and rebuilt.
func TestDamagedKeptTableRebuilt(t *testing.T) {
	dir := goRun(t)
	first, err := openAnswers(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := first.Table("accuracy")
	if err != nil {
		t.Fatal(err)
	}
	p := tablestore.Path(dir, "accuracy")
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	key := bytes.Index(orig, []byte("bhasha.key"))
	if key < 0 {
		t.Fatal("no key in the footer")
	}
	cases := []struct {
		name string
		at   int // -1: no byte flipped
	}{
		{"as written", -1},
		{"leading magic", 3},
		{"first page", 4},
		{"footer's key", key + len("bhasha.key") + 6},
		{"footer's length", len(orig) - 8},
		{"a quarter in", len(orig) / 4},
		{"half way", len(orig) / 2},
		{"three quarters in", 3 * len(orig) / 4},
		{"last byte", len(orig) - 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := bytes.Clone(orig)
			if c.at >= 0 {
				b[c.at] ^= 0x04
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := openAnswers(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := res.Table("accuracy")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got.Rows, want.Rows, slices.Equal) || !slices.Equal(got.Header, want.Header) {
				t.Fatalf("table:\n%v\nwant\n%v", got.Rows, want.Rows)
			}
			built := (res.Rows() != nil) // before Notes, which scores
			notes := res.Notes()
			noted := slices.ContainsFunc(notes, func(n string) bool {
				return strings.Contains(n, "table accuracy rebuilt") && strings.Contains(n, p) && strings.Contains(n, "damaged")
			})
			if damaged := c.at >= 0; built != damaged || noted != damaged {
				t.Fatalf("built again: %v, noted: %v (notes %q); want both %v", built, noted, notes, damaged)
			}
			if _, ok, err := tablestore.Read(dir, "accuracy", res.ReadKey()); !ok || err != nil {
				t.Fatalf("the table is not kept anew: ok %v, %v", ok, err)
			}
		})
	}
}

// Answers of an experiment loaded lazily serve a kept table without
// building it (its dataset unread), and build it to score; the input
// hashes handed in (Config.Inputs) are those of the scoring key: hashes
// other than the run's make the kept table stale.
func TestKeptTableOfALazyExperiment(t *testing.T) {
	dir := storeRun(t)
	first, err := openAnswers(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := first.Table("accuracy")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		inputs func(map[string]string) map[string]string // Config.Inputs from the files' hashes
		kept   bool
	}{
		{"inputs hashed here", func(map[string]string) map[string]string { return nil }, true},
		{"inputs handed in", func(in map[string]string) map[string]string { return in }, true},
		{"other inputs handed in", func(in map[string]string) map[string]string {
			out := map[string]string{}
			for p := range in {
				out[p] = strings.Repeat("0", 64)
			}
			return out
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := run.ReadManifest(dir)
			if err != nil {
				t.Fatal(err)
			}
			exp, err := experiment.Load(context.Background(), filepath.Join(dir, run.ExperimentFile), experiment.LoadOptions{Studies: studies.Builtin(), Lazy: true})
			if err != nil {
				t.Fatal(err)
			}
			in, err := exp.InputHashes()
			if err != nil || len(in) == 0 {
				t.Fatalf("input hashes: %v %v", in, err)
			}
			a := runanswers.New(context.Background(), dir, exp, m, nil, runanswers.Config{Inputs: c.inputs(in)})
			got, err := a.Table("accuracy")
			if err != nil {
				t.Fatal(err)
			}
			if kept := a.Rows() == nil; kept != c.kept || kept != (exp.Plan() == nil) {
				t.Fatalf("kept: %v, want %v; plan built: %v", kept, c.kept, exp.Plan() != nil)
			}
			if !slices.EqualFunc(got.Rows, want.Rows, slices.Equal) {
				t.Errorf("table:\n%v\nwant\n%v", got.Rows, want.Rows)
			}
			if err := a.Score(); err != nil || exp.Plan() == nil || len(a.Rows()) == 0 {
				t.Errorf("Score: %v, plan built %v, %d rows", err, exp.Plan() != nil, len(a.Rows()))
			}
		})
	}
}

// Once every table has been built and kept, later Answers read them all
// from the run directory in the same order, building only the answers
// table (made row by row); a kept table gone is built with its group, and
// records changed since build every group again, what was built being
// kept for the next. The tables are the same in every case.
func TestEveryTableKept(t *testing.T) {
	runs := []struct {
		name string
		dir  func(t *testing.T) string
	}{{"grouped (IndicKLAR)", storeRun}, {"one group (Distractors)", goRun}}
	cases := []struct {
		name   string
		edit   func(t *testing.T, dir string)
		builds func(n int) bool // of the second Answers
	}{
		{"as kept", nil, func(n int) bool { return n == 1 }},
		{"a kept table removed", func(t *testing.T, dir string) {
			if err := os.Remove(tablestore.Path(dir, "accuracy")); err != nil {
				t.Fatal(err)
			}
		}, func(n int) bool { return n == 2 }},
		{"records touched", func(t *testing.T, dir string) {
			files, _ := filepath.Glob(filepath.Join(dir, "records*"))
			later := time.Now().Add(time.Hour)
			if len(files) == 0 || os.Chtimes(files[0], later, later) != nil {
				t.Fatal("no records file to touch")
			}
		}, func(n int) bool { return n >= 2 }},
	}
	show := func(ts []*tables.Table) []string {
		var out []string
		for _, tb := range ts {
			out = append(out, fmt.Sprint(tb.Name, tb.Header, tb.Cols, tb.Description, tb.ColumnDocs, tb.Note, tb.Mirrors, tb.Simulated, tb.Source != nil, tb.Rows))
		}
		return out
	}
	for _, rn := range runs {
		for _, c := range cases {
			t.Run(rn.name+"/"+c.name, func(t *testing.T) {
				dir := rn.dir(t)
				all := func() (*runanswers.Answers, []*tables.Table) {
					r, err := openAnswers(dir)
					if err != nil {
						t.Fatal(err)
					}
					ts, err := r.AllTables()
					if err != nil {
						t.Fatal(err)
					}
					return r, ts
				}
				_, want := all()
				if _, err := os.Stat(filepath.Join(dir, tablestore.DirName, tablestore.IndexName)); err != nil {
					t.Fatalf("no list of the tables kept: %v", err)
				}
				if c.edit != nil {
					c.edit(t, dir)
				}
				second, got := all()
				if !slices.Equal(show(got), show(want)) {
					t.Errorf("tables:\n%q\nwant\n%q", show(got), show(want))
				}
				if n := second.Builds(); !c.builds(n) {
					t.Errorf("%d group(s) built", n)
				}
				if third, _ := all(); third.Builds() != 1 {
					t.Errorf("then %d group(s) built, want the answers table's alone: what was built was not kept", third.Builds())
				}
			})
		}
	}
}
