package shard

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
)

// units makes items items for each model, each item asking per requests.
func units(per map[string]int, items map[string]int, order ...string) []Unit {
	var out []Unit
	for _, m := range order {
		for i := range items[m] {
			out = append(out, Unit{Model: m, Item: fmt.Sprintf("q%04d", i), Requests: per[m]})
		}
	}
	return out
}

func TestPartition(t *testing.T) {
	cases := []struct {
		name   string
		units  []Unit
		n      int
		shares map[string]int // shards per model
		err    string
	}{
		{"one model", units(map[string]int{"a": 3}, map[string]int{"a": 10}, "a"), 4, map[string]int{"a": 4}, ""},
		{"one shard each", units(map[string]int{"a": 1, "b": 1}, map[string]int{"a": 5, "b": 5}, "a", "b"), 2, map[string]int{"a": 1, "b": 1}, ""},
		{"in proportion to requests", units(map[string]int{"a": 3, "b": 1}, map[string]int{"a": 10, "b": 10}, "a", "b"), 8, map[string]int{"a": 6, "b": 2}, ""},
		{"at least one each", units(map[string]int{"a": 100, "b": 1, "c": 1}, map[string]int{"a": 50, "b": 2, "c": 2}, "a", "b", "c"), 5, map[string]int{"a": 3, "b": 1, "c": 1}, ""},
		{"no more shards than a model's items", units(map[string]int{"a": 100, "b": 1}, map[string]int{"a": 2, "b": 10}, "a", "b"), 6, map[string]int{"a": 2, "b": 4}, ""},
		{"uneven items", units(map[string]int{"a": 2}, map[string]int{"a": 11}, "a"), 3, map[string]int{"a": 3}, ""},
		{"fewer shards than models", units(map[string]int{"a": 1, "b": 1, "c": 1}, map[string]int{"a": 3, "b": 3, "c": 3}, "a", "b", "c"), 2, nil, "at least 3 shards"},
		{"more shards than items", units(map[string]int{"a": 1}, map[string]int{"a": 3}, "a"), 4, nil, "at most 3 shards"},
		{"nothing asked", nil, 1, nil, "asks no request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Partition(c.units, c.n)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Shards) != c.n {
				t.Fatalf("%d shards, want %d", len(l.Shards), c.n)
			}
			got := map[string]int{}
			items := map[string][]int{} // model → item counts of its shards
			seen := map[[2]string]int{}
			for k, s := range l.Shards {
				got[s.Model]++
				items[s.Model] = append(items[s.Model], len(s.Items))
				for _, it := range s.Items {
					seen[[2]string{s.Model, it}]++
					if o, ok := l.Of(engine.Key{Model: s.Model, Item: it}); !ok || o != k {
						t.Errorf("Of(%s, %s) = %d, %v; the item is in shard %d", s.Model, it, o, ok, k)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.shares) {
				t.Errorf("shards per model %v, want %v", got, c.shares)
			}
			for m, counts := range items {
				if slices.Max(counts)-slices.Min(counts) > 1 {
					t.Errorf("model %s: items per shard %v differ by more than one", m, counts)
				}
			}
			for _, u := range c.units {
				if seen[[2]string{u.Model, u.Item}] != 1 {
					t.Errorf("%s/%s is in %d shards, want 1", u.Model, u.Item, seen[[2]string{u.Model, u.Item}])
				}
			}
			again, err := Partition(slices.Clone(c.units), c.n)
			if err != nil || fmt.Sprint(again.Shards) != fmt.Sprint(l.Shards) {
				t.Errorf("a second partition differs: %v", err)
			}
		})
	}
}

// fakeJob is a two-stage job: each model answers each item in two
// languages, then a judge gives a verdict on each answer whose item is
// not in withhold.
func fakeJob(models []string, items int, withhold map[string]bool) *run.Job {
	cfgs := []engine.ModelConfig{{Name: "judge"}}
	for _, m := range models {
		cfgs = append(cfgs, engine.ModelConfig{Name: m})
	}
	return &run.Job{Name: "x", Stages: 2, Models: cfgs,
		Requests: func(stage int, _ run.Lookup, withheld func(engine.Key)) iter.Seq2[engine.Request, error] {
			return func(yield func(engine.Request, error) bool) {
				for _, m := range models {
					for i := range items {
						for _, lang := range []string{"hi", "ta"} {
							k := engine.Key{Experiment: "x", Model: m, Item: fmt.Sprintf("q%d", i), Language: lang}
							if stage == 2 {
								k.Model, k.Role = "judge", engine.Judge(m)
								if withhold[k.Item] {
									if withheld != nil {
										withheld(k)
									}
									continue
								}
							}
							if !yield(engine.Request{Key: k}, nil) {
								return
							}
						}
					}
				}
			}
		}}
}

func TestJob(t *testing.T) {
	cases := []struct {
		name     string
		models   []string
		items, n int
		withhold map[string]bool
	}{
		{"one model, three shards", []string{"a"}, 7, 3, nil},
		{"two models, five shards", []string{"a", "b"}, 6, 5, map[string]bool{"q1": true, "q4": true}},
		{"a shard per model", []string{"a", "b", "c"}, 2, 3, map[string]bool{"q0": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := fakeJob(c.models, c.items, c.withhold)
			us, err := Units(j)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Partition(us, c.n)
			if err != nil {
				t.Fatal(err)
			}
			where := map[string]int{}        // key → shard
			itemShard := map[[2]string]int{} // model, item → shard
			withheld := 0
			for k := range c.n {
				sj, err := l.Job(j, Spec{k, c.n})
				if err != nil {
					t.Fatal(err)
				}
				if sj.Shard != (Spec{k, c.n}).String() {
					t.Errorf("shard %d: job's Shard %q", k, sj.Shard)
				}
				answering := map[string]bool{}
				for stage := 1; stage <= 2; stage++ {
					for r, err := range sj.Requests(stage, nil, func(engine.Key) { withheld++ }) {
						if err != nil {
							t.Fatal(err)
						}
						if prev, ok := where[r.Key.String()]; ok {
							t.Errorf("%s in shards %d and %d", r.Key, prev, k)
						}
						where[r.Key.String()] = k
						mi := [2]string{Owner(r.Key), r.Key.Item}
						if prev, ok := itemShard[mi]; ok && prev != k {
							t.Errorf("item %v has requests in shards %d and %d", mi, prev, k)
						}
						itemShard[mi] = k
						answering[Owner(r.Key)] = true
					}
				}
				if len(answering) != 1 {
					t.Errorf("shard %d asks answering models %v, want one", k, answering)
				}
				var names []string
				for _, m := range sj.Models {
					names = append(names, m.Name)
				}
				if want := []string{"judge", l.Shards[k].Model}; !slices.Equal(names, want) {
					t.Errorf("shard %d: models %v, want %v", k, names, want)
				}
			}
			total, wantWithheld := 0, 0
			for stage := 1; stage <= 2; stage++ {
				for range j.Requests(stage, nil, func(engine.Key) { wantWithheld++ }) {
					total++
				}
			}
			if len(where) != total {
				t.Errorf("the shards ask %d requests, the job %d", len(where), total)
			}
			if withheld != wantWithheld {
				t.Errorf("the shards withhold %d requests, the job %d", withheld, wantWithheld)
			}
		})
	}
}

func TestJobUnowned(t *testing.T) {
	j := fakeJob([]string{"a"}, 2, nil)
	l, err := Partition([]Unit{{Model: "a", Item: "q0", Requests: 2}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	sj, err := l.Job(j, Spec{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	var got error
	for _, err := range sj.Requests(1, nil, nil) {
		got = err
	}
	if got == nil || !strings.Contains(got.Error(), "q1") || !strings.Contains(got.Error(), "belongs to no shard") {
		t.Fatalf("error %v, want one naming the request that belongs to no shard", got)
	}
}

func TestParseSpec(t *testing.T) {
	cases := []struct {
		name string
		v    string
		env  map[string]string
		want Spec
		err  string
	}{
		{"given", "2/8", nil, Spec{2, 8}, ""},
		{"K out of range", "8/8", nil, Spec{}, "0 ≤ K < N"},
		{"negative", "-1/8", nil, Spec{}, "0 ≤ K < N"},
		{"not K/N", "3", nil, Spec{}, "want K/N"},
		{"not numbers", "a/b", nil, Spec{}, "whole numbers"},
		{"auto from BHASHA_SHARD", "auto", map[string]string{EnvShard: "1/4"}, Spec{1, 4}, ""},
		{"auto, bad BHASHA_SHARD", "auto", map[string]string{EnvShard: "x"}, Spec{}, `BHASHA_SHARD="x"`},
		{"auto from Slurm", "auto", map[string]string{EnvSlurmID: "12", EnvSlurmMin: "10", EnvSlurmCount: "4"}, Spec{2, 4}, ""},
		{"auto, Slurm without a count", "auto", map[string]string{EnvSlurmID: "1", EnvSlurmMin: "0"}, Spec{}, `SLURM_ARRAY_TASK_COUNT=""`},
		{"auto, Slurm index past the count", "auto", map[string]string{EnvSlurmID: "5", EnvSlurmMin: "0", EnvSlurmCount: "4"}, Spec{}, "SLURM_ARRAY_TASK_ID=5"},
		{"auto, nothing set", "auto", nil, Spec{}, "none of BHASHA_SHARD"},
		{"auto/N from the Indexed Job", "auto/6", map[string]string{EnvIndex: "5"}, Spec{5, 6}, ""},
		{"auto/N, index past N", "auto/6", map[string]string{EnvIndex: "6"}, Spec{}, "0 ≤ K < N"},
		{"auto/N, bad index", "auto/6", map[string]string{EnvIndex: "five"}, Spec{}, `JOB_COMPLETION_INDEX="five"`},
		{"auto/N from Slurm, counts agree", "auto/4", map[string]string{EnvSlurmID: "3", EnvSlurmMin: "0", EnvSlurmCount: "4"}, Spec{3, 4}, ""},
		{"auto/N from Slurm, counts differ", "auto/6", map[string]string{EnvSlurmID: "3", EnvSlurmMin: "0", EnvSlurmCount: "4"}, Spec{}, "the command line says 6 shards and SLURM_ARRAY_TASK_ID says 4"},
		{"auto/N, BHASHA_SHARD differs", "auto/6", map[string]string{EnvShard: "1/3"}, Spec{}, "BHASHA_SHARD says 3"},
		{"auto/N, bad N", "auto/0", map[string]string{EnvIndex: "0"}, Spec{}, "positive whole number"},
		{"auto/N, nothing set", "auto/3", nil, Spec{}, "none of JOB_COMPLETION_INDEX"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseSpec(c.v, func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseSpec(%q) error %v, want one saying %q", c.v, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseSpec(%q) = %v, %v; want %v", c.v, got, err, c.want)
			}
		})
	}
}

func TestDir(t *testing.T) {
	cases := []struct {
		name     string
		existing []string
		s        Spec
		want     string
		err      string
	}{
		{"empty grid", nil, Spec{3, 8}, "shard-003-of-008", ""},
		{"wide N", nil, Spec{42, 1001}, "shard-0042-of-1001", ""},
		{"N of 1000 fits three digits", nil, Spec{999, 1000}, "shard-999-of-1000", ""},
		{"same N", []string{"shard-000-of-008", "notes"}, Spec{1, 8}, "shard-001-of-008", ""},
		{"another N", []string{"shard-000-of-004"}, Spec{1, 8}, "", "holds shards of 4 (shard-000-of-004) and this is shard 1/8 of 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			grid := t.TempDir()
			for _, d := range c.existing {
				if err := os.Mkdir(filepath.Join(grid, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var shards []string
			for _, d := range c.existing {
				if strings.HasPrefix(d, "shard-") {
					shards = append(shards, d)
				}
			}
			if ds, err := Dirs(grid); err != nil || !slices.Equal(ds, shards) {
				t.Errorf("Dirs = %v, %v; want %v", ds, err, shards)
			}
			got, err := Dir(grid, c.s)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil || got != filepath.Join(grid, c.want) {
				t.Fatalf("Dir = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestTally(t *testing.T) {
	cases := []struct {
		name     string
		models   []string
		items, n int
		withhold map[string]bool
	}{
		{"whole job", []string{"a", "b"}, 4, 0, map[string]bool{"q1": true}},
		{"three shards", []string{"a", "b"}, 4, 3, map[string]bool{"q1": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := fakeJob(c.models, c.items, c.withhold)
			var l *Layout
			if c.n > 0 {
				var err error
				if l, err = Plan(j, c.n); err != nil {
					t.Fatal(err)
				}
			}
			tally, err := Tally(j, l, func(r engine.Request) (int, bool, error) { return 7, r.Key.Model == "a", nil })
			if err != nil {
				t.Fatal(err)
			}
			want := map[Cell]Count{}
			for stage := 1; stage <= 2; stage++ {
				add := func(k engine.Key, built bool) {
					s := 0
					if l != nil {
						s, _ = l.Of(k)
					}
					cnt := want[Cell{s, stage, k.Model}]
					cnt.Requests++
					if built {
						cnt.Built++
						if k.Model == "a" {
							cnt.Counted++
							cnt.PromptTokens += 7
						}
					}
					want[Cell{s, stage, k.Model}] = cnt
				}
				for r := range j.Requests(stage, nil, func(k engine.Key) { add(k, false) }) {
					add(r.Key, true)
				}
			}
			if len(tally) != len(want) {
				t.Errorf("%d cells, want %d", len(tally), len(want))
			}
			for _, cell := range Cells(tally) {
				if *tally[cell] != want[cell] {
					t.Errorf("%+v: %+v, want %+v", cell, *tally[cell], want[cell])
				}
			}
		})
	}
}

func TestParseDir(t *testing.T) {
	for _, c := range []struct {
		name string
		want Spec
		ok   bool
	}{
		{"shard-003-of-008", Spec{K: 3, N: 8}, true},
		{Spec{K: 12, N: 1000}.Dir(), Spec{K: 12, N: 1000}, true},
		{"shard-3-of-8", Spec{K: 3, N: 8}, true},
		{"shard--3-of-8", Spec{}, false},
		{"shard-+3-of-8", Spec{}, false},
		{"shard-003-of-", Spec{}, false},
		{"shard-003-008", Spec{}, false},
		{"merged", Spec{}, false},
		{"xshard-003-of-008", Spec{}, false},
	} {
		got, ok := ParseDir(c.name)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseDir(%q) = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
