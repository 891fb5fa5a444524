package run

import (
	"cmp"
	"database/sql"
	"fmt"
	"hash/maphash"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	_ "modernc.org/sqlite"
)

// twoStage is a job whose second stage looks up the first stage's answer
// of every item, as the two-step strategies do.
func twoStage(items ...string) *Job {
	return &Job{Name: "e", Stages: 2, Requests: func(stage int, prior Lookup, withheld func(engine.Key)) iter.Seq2[engine.Request, error] {
		return func(yield func(engine.Request, error) bool) {
			for _, it := range items {
				k := engine.Key{Experiment: "e", Model: "m", Item: it}
				if stage == 1 {
					k.Role = engine.Translation()
					if !yield(engine.Request{Key: k, Prompt: it}, nil) {
						return
					}
					continue
				}
				k1 := k
				k1.Role = engine.Translation()
				rec, ok := prior(k1)
				if !ok || rec.Status != engine.StatusOK {
					if withheld != nil {
						withheld(k)
					}
					continue
				}
				if !yield(engine.Request{Key: k, Prompt: "Q: " + rec.Response}, nil) {
					return
				}
			}
		}
	}}
}

func TestPriorIndex(t *testing.T) {
	dir := t.TempDir()
	key := func(it string) engine.Key {
		return engine.Key{Experiment: "e", Model: "m", Item: it, Role: engine.Translation()}
	}
	w, err := records.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("ह", 5000) // longer than one read
	for _, r := range []engine.Record{
		{Fields: key("a"), Status: engine.StatusOK, Response: "first a"},
		{Fields: key("b"), Status: engine.StatusFailed, Error: "HTTP 500"},
		{Fields: key("a"), Status: engine.StatusOK, Response: "last a"},
		{Fields: key("c"), Status: engine.StatusOK, Response: long},
		{Fields: key("d"), Status: engine.StatusOK, Response: ""},
		{Fields: key("unasked"), Status: engine.StatusOK, Response: "x"},
	} {
		r.Key = r.Fields.String()
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	j := twoStage("a", "b", "c", "d", "never")
	if p, err := buildPrior(dir, j, 1); p != nil || err != nil {
		t.Fatalf("stage 1: %v %v, want no index", p, err)
	}
	p, err := buildPrior(dir, j, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.entries) != 4 { // a twice, c, d; not the failed b nor the key stage 2 does not look up
		t.Errorf("%d entries, want 4", len(p.entries))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".scratch-*")); len(left) > 0 {
		t.Errorf("scratch file left in the run directory: %v", left)
	}
	want := map[string]string{"a": "last a", "c": long, "d": ""}
	for _, it := range []string{"a", "b", "c", "d", "never", "unasked"} {
		rec, ok := p.Lookup(key(it))
		w, wantOK := want[it]
		if ok != wantOK || (ok && (rec.Response != w || rec.Status != engine.StatusOK || rec.Key != key(it).String() || rec.Fields != key(it))) {
			t.Errorf("Lookup(%s) = %+v, %v; want %.20q, %v", it, rec, ok, w, wantOK)
		}
	}
	// Entries whose hashes collide are told apart by their keys: every
	// entry given a's hash, a is still its last record, and c is not found.
	ha := maphash.String(p.seed, key("a").String())
	for i := range p.entries {
		p.entries[i].h = ha
	}
	slices.SortFunc(p.entries, func(x, y scratchEntry) int { return cmp.Compare(x.off, y.off) })
	if rec, ok := p.Lookup(key("a")); !ok || rec.Response != "last a" {
		t.Errorf("colliding hashes: Lookup(a) = %+v, %v", rec, ok)
	}
	if _, ok := p.Lookup(key("c")); ok {
		t.Error("colliding hashes: c found under a's hash")
	}
	if err := p.Err(); err != nil {
		t.Error(err)
	}
	// A run directory without records: nothing found, no error.
	empty, err := buildPrior(t.TempDir(), j, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if _, ok := empty.Lookup(key("a")); ok {
		t.Error("found a record in an empty run directory")
	}
	// A read error is kept and reported.
	p.f.Close()
	if _, ok := p.Lookup(engine.Key{Experiment: "e", Model: "m", Item: "a", Role: engine.Translation()}); ok || p.Err() == nil {
		t.Errorf("lookup on a closed scratch file: found %v, error %v", ok, p.Err())
	}
	os.Remove(p.path)
}

// BenchmarkPriorIndex indexes the first stage of a two-stage run of
// BHASHA_BENCH_PRIOR records (default 100,000, a 460,000-record grid's
// translations) and looks each up once, as the second stage does: with
// buildPrior's scratch file, and side by side with a temporary SQLite
// table (modernc.org/sqlite, as the response cache uses) in its place.
func BenchmarkPriorIndex(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("BHASHA_BENCH_PRIOR")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	w, err := records.Create(dir)
	if err != nil {
		b.Fatal(err)
	}
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("item-%07d", i)
		k := engine.Key{Experiment: "e", Model: "m", Item: items[i], Role: engine.Translation()}
		r := engine.Record{Key: k.String(), Fields: k, Status: engine.StatusOK, Response: strings.Repeat("translated question ", 5) + items[i]}
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	j := twoStage(items...)
	second := func(b *testing.B, lookup Lookup) {
		got := 0
		for _, err := range j.Requests(2, lookup, nil) {
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != n {
			b.Fatalf("%d second-stage requests, want %d", got, n)
		}
	}
	b.Run("scratch", func(b *testing.B) {
		for range b.N {
			p, err := buildPrior(dir, j, 2)
			if err != nil {
				b.Fatal(err)
			}
			second(b, p.Lookup)
			if err := p.Err(); err != nil {
				b.Fatal(err)
			}
			p.Close()
		}
	})
	b.Run("sqlite", func(b *testing.B) {
		for range b.N {
			db, err := sql.Open("sqlite", "") // a private temporary database, removed on close
			if err != nil {
				b.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			tx, err := db.Begin()
			if err == nil {
				_, err = tx.Exec(`CREATE TABLE prior (key TEXT PRIMARY KEY, response TEXT NOT NULL) WITHOUT ROWID`)
			}
			var ins *sql.Stmt
			if err == nil {
				ins, err = tx.Prepare(`INSERT OR REPLACE INTO prior VALUES (?, ?)`)
			}
			if err == nil {
				err = records.Read(dir, func(r *engine.Record) error {
					if r.Status != engine.StatusOK {
						return nil
					}
					_, err := ins.Exec(r.Key, r.Response)
					return err
				})
			}
			if err == nil {
				err = tx.Commit()
			}
			get, perr := db.Prepare(`SELECT response FROM prior WHERE key = ?`)
			if err = cmp.Or(err, perr); err != nil {
				b.Fatal(err)
			}
			second(b, func(k engine.Key) (*engine.Record, bool) {
				var resp string
				if err := get.QueryRow(k.String()).Scan(&resp); err != nil {
					return nil, false
				}
				return &engine.Record{Key: k.String(), Fields: k, Status: engine.StatusOK, Response: resp}, true
			})
			db.Close()
		}
	})
}
