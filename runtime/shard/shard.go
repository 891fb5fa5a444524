// Package shard divides one experiment among N processes, each running
// its part into a run directory of its own (a Slurm job array's tasks, a
// Kubernetes Indexed Job's pods).
//
// The division is by answering model and item: every stage of an item's
// answer and the judge's verdict on it fall in the same shard, and a shard
// asks one answering model, so that a node loads one model once. Shards
// are given to the answering models in proportion to their requests, at
// least one each; each model's items, in sorted order, are dealt to its
// shards in turn, so that its shards' item counts differ by at most one.
// The layout depends on the experiment and N alone: the same experiment
// and N give the same layout, whatever was run before.
package shard

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
)

// Spec is shard K (zero-based) of N.
type Spec struct{ K, N int }

// String is the spec's text form, "K/N".
func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Dir is the shard's run directory inside a grid directory:
// shard-KKK-of-NNN, K and N zero-padded to the width of N−1 and at least
// three digits.
func (s Spec) Dir() string {
	w := max(3, len(strconv.Itoa(s.N-1)))
	return fmt.Sprintf("shard-%0*d-of-%0*d", w, s.K, w, s.N)
}

// check reports a spec outside 0 ≤ K < N.
func (s Spec) check() error {
	if s.N < 1 || s.K < 0 || s.K >= s.N {
		return fmt.Errorf("shard %s: want K/N with 0 ≤ K < N", s)
	}
	return nil
}

// The environment variables ParseSpec reads.
const (
	EnvShard      = "BHASHA_SHARD"           // K/N
	EnvSlurmID    = "SLURM_ARRAY_TASK_ID"    // a Slurm array task's index
	EnvSlurmMin   = "SLURM_ARRAY_TASK_MIN"   // the array's first index
	EnvSlurmCount = "SLURM_ARRAY_TASK_COUNT" // the array's tasks
	EnvIndex      = "JOB_COMPLETION_INDEX"   // a Kubernetes Indexed Job's index
)

// ParseSpec reads a --shard value: "K/N" (K zero-based); "auto", both
// from the environment (BHASHA_SHARD=K/N, or a Slurm array task:
// SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN, of
// SLURM_ARRAY_TASK_COUNT); or "auto/N", K from JOB_COMPLETION_INDEX (a
// Kubernetes Indexed Job) or the above, N as given, which a count the
// environment also gives must equal. getenv reads the environment
// (os.Getenv). Errors name the variable and its value.
func ParseSpec(v string, getenv func(string) string) (Spec, error) {
	if v == "auto" {
		s, from, err := fromEnv(getenv, false)
		if err != nil {
			return Spec{}, err
		}
		if from == "" {
			return Spec{}, fmt.Errorf("--shard auto: none of %s, %s (with %s and %s) is set: give --shard K/N", EnvShard, EnvSlurmID, EnvSlurmMin, EnvSlurmCount)
		}
		return s, nil
	}
	if n, ok := strings.CutPrefix(v, "auto/"); ok {
		count, err := strconv.Atoi(n)
		if err != nil || count < 1 {
			return Spec{}, fmt.Errorf("--shard %s: N must be a positive whole number", v)
		}
		s, from, err := fromEnv(getenv, true)
		if err != nil {
			return Spec{}, err
		}
		switch {
		case from == "":
			return Spec{}, fmt.Errorf("--shard %s: none of %s, %s, %s is set: give --shard K/N", v, EnvIndex, EnvShard, EnvSlurmID)
		case s.N == 0:
			s.N = count
		case s.N != count:
			return Spec{}, fmt.Errorf("--shard %s: the command line says %d shards and %s says %d", v, count, from, s.N)
		}
		return s, s.check()
	}
	s, err := parseKN(v)
	if err != nil {
		return Spec{}, fmt.Errorf("--shard %q: %w", v, err)
	}
	return s, nil
}

// parseKN reads "K/N".
func parseKN(v string) (Spec, error) {
	k, n, ok := strings.Cut(v, "/")
	if !ok {
		return Spec{}, errors.New("want K/N (K zero-based), auto or auto/N")
	}
	ki, kerr := strconv.Atoi(k)
	ni, nerr := strconv.Atoi(n)
	if kerr != nil || nerr != nil {
		return Spec{}, errors.New("want K/N with K and N whole numbers")
	}
	s := Spec{K: ki, N: ni}
	return s, s.check()
}

// fromEnv reads the shard from the environment and names its variable (""
// when none is set); with index, JOB_COMPLETION_INDEX gives K alone.
func fromEnv(getenv func(string) string, index bool) (Spec, string, error) {
	if index {
		if v := getenv(EnvIndex); v != "" {
			k, err := strconv.Atoi(v)
			if err != nil || k < 0 {
				return Spec{}, "", fmt.Errorf("%s=%q: want a whole number from 0", EnvIndex, v)
			}
			return Spec{K: k}, EnvIndex, nil
		}
	}
	if v := getenv(EnvShard); v != "" {
		s, err := parseKN(v)
		if err != nil {
			return Spec{}, "", fmt.Errorf("%s=%q: %w", EnvShard, v, err)
		}
		return s, EnvShard, nil
	}
	id := getenv(EnvSlurmID)
	if id == "" {
		return Spec{}, "", nil
	}
	var num [3]int // the task's index, the array's first and its count
	for i, name := range []string{EnvSlurmID, EnvSlurmMin, EnvSlurmCount} {
		v := getenv(name)
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Spec{}, "", fmt.Errorf("%s=%q (with %s=%q): want a whole number from 0", name, v, EnvSlurmID, id)
		}
		num[i] = n
	}
	k, lo, n := num[0], num[1], num[2]
	s := Spec{K: k - lo, N: n}
	if err := s.check(); err != nil {
		return Spec{}, "", fmt.Errorf("%s=%d less %s=%d of %s=%d: %w", EnvSlurmID, k, EnvSlurmMin, lo, EnvSlurmCount, n, err)
	}
	return s, EnvSlurmID, nil
}

// ParseDir is the shard whose run directory is named name
// (shard-KKK-of-NNN, as Spec.Dir names it), and false for any other name.
func ParseDir(name string) (Spec, bool) {
	rest, ok := strings.CutPrefix(name, "shard-")
	k, n, cut := strings.Cut(rest, "-of-")
	digits := func(v string) bool { return v != "" && strings.Trim(v, "0123456789") == "" }
	if !ok || !cut || !digits(k) || !digits(n) {
		return Spec{}, false
	}
	kk, err1 := strconv.Atoi(k)
	nn, err2 := strconv.Atoi(n)
	return Spec{K: kk, N: nn}, err1 == nil && err2 == nil
}

// Dir returns the run directory of shard s inside grid, and refuses,
// naming both counts, a grid that holds shards of another count. It
// writes nothing.
func Dir(grid string, s Spec) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	ds, err := Dirs(grid)
	if err != nil {
		return "", err
	}
	for _, d := range ds {
		if o, _ := ParseDir(d); o.N != s.N {
			return "", fmt.Errorf("%s holds shards of %d (%s) and this is shard %s of %d: run into another --out, or with --shard K/%d", grid, o.N, d, s, s.N, o.N)
		}
	}
	return filepath.Join(grid, s.Dir()), nil
}

// Dirs lists the shard directories in grid (shard-KKK-of-NNN), sorted;
// none when grid does not exist.
func Dirs(grid string) ([]string, error) {
	ents, err := os.ReadDir(grid)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading grid directory %s: %w", grid, err)
	}
	var out []string
	for _, e := range ents {
		if _, ok := ParseDir(e.Name()); ok && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Unit is the work of one answering model on one item: its first-stage
// requests (a later stage's follow them).
type Unit struct {
	Model, Item string
	Requests    int
}

// Owner is the answering model of a request: the model whose answer a
// judge's verdict is on, and the request's own model otherwise.
func Owner(k engine.Key) string {
	if k.Role.Kind == engine.RoleJudge {
		return k.Role.Of
	}
	return k.Model
}

// Units counts the first-stage requests of job j by answering model and
// item, models in the order their requests come, items sorted. It reads
// the first stage's requests once and sends nothing.
func Units(j *run.Job) ([]Unit, error) {
	none := func(engine.Key) (*engine.Record, bool) { return nil, false }
	type mi struct{ m, i string }
	count := map[mi]int{}
	var models []string
	for r, err := range j.Requests(1, none, nil) {
		if err != nil {
			return nil, fmt.Errorf("shard: reading the requests of %s: %w", j.Name, err)
		}
		m := Owner(r.Key)
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
		count[mi{m, r.Key.Item}]++
	}
	out := make([]Unit, 0, len(count))
	for k, n := range count {
		out = append(out, Unit{Model: k.m, Item: k.i, Requests: n})
	}
	slices.SortFunc(out, func(a, b Unit) int {
		return cmp.Or(cmp.Compare(slices.Index(models, a.Model), slices.Index(models, b.Model)), cmp.Compare(a.Item, b.Item))
	})
	return out, nil
}

// Plan divides job j into n shards (Units, then Partition): the layout
// that Layout.Job selects a shard of. It sends nothing.
func Plan(j *run.Job, n int) (*Layout, error) {
	us, err := Units(j)
	if err != nil {
		return nil, err
	}
	l, err := Partition(us, n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.Name, err)
	}
	return l, nil
}

// Shard is one shard of a Layout.
type Shard struct {
	Model    string   // the answering model
	Items    []string // its items, sorted
	Requests int      // their first-stage requests
}

// Layout is an experiment divided into shards.
type Layout struct {
	Shards []Shard
	owner  map[string]map[string]int // model → item → shard
}

// Partition divides units (Units) into n shards. It refuses n smaller
// than the number of answering models, naming that minimum, and n larger
// than the items there are to deal, naming that maximum. Cost: linear in
// the units.
func Partition(units []Unit, n int) (*Layout, error) {
	type model struct {
		name  string
		items []string
		reqs  int64
		share int64
		of    map[string]int // item → requests
	}
	var ms []*model
	at := map[string]*model{}
	var total int64
	for _, u := range units {
		m := at[u.Model]
		if m == nil {
			m = &model{name: u.Model, of: map[string]int{}}
			at[u.Model] = m
			ms = append(ms, m)
		}
		m.of[u.Item] += u.Requests
		m.reqs += int64(u.Requests)
		total += int64(u.Requests)
	}
	items := 0
	for _, m := range ms {
		m.items = slices.Sorted(maps.Keys(m.of))
		items += len(m.items)
	}
	switch {
	case len(ms) == 0:
		return nil, errors.New("shard: the experiment asks no request")
	case n < len(ms):
		return nil, fmt.Errorf("%d shard(s) for %d answering models: a shard asks one model, so at least %d shards", n, len(ms), len(ms))
	case n > items:
		return nil, fmt.Errorf("%d shards for %d items (of every answering model together): at most %d shards", n, items, items)
	}
	// Largest remainder, in whole numbers: model i's quota is
	// n·reqs_i/total; deficit compares how far a share is below it.
	N := int64(n)
	deficit := func(m *model) int64 { return N*m.reqs - m.share*total }
	var sum int64
	for _, m := range ms {
		m.share = min(max(1, N*m.reqs/max(total, 1)), int64(len(m.items)))
		sum += m.share
	}
	for sum != N { // give a share to the largest deficit, or take one from the smallest
		d := int64(1)
		if sum > N {
			d = -1
		}
		var best *model
		for _, m := range ms {
			room := m.share < int64(len(m.items))
			if d < 0 {
				room = m.share > 1
			}
			if room && (best == nil || d*deficit(m) > d*deficit(best)) {
				best = m
			}
		}
		best.share += d
		sum += d
	}
	l := &Layout{owner: map[string]map[string]int{}}
	for _, m := range ms {
		first := len(l.Shards)
		own := map[string]int{}
		for range m.share {
			l.Shards = append(l.Shards, Shard{Model: m.name})
		}
		for i, it := range m.items {
			k := first + i%int(m.share)
			own[it] = k
			l.Shards[k].Items = append(l.Shards[k].Items, it)
			l.Shards[k].Requests += m.of[it]
		}
		l.owner[m.name] = own
	}
	return l, nil
}

// Of returns the shard that owns the request of key k, and false when no
// shard does (an item or model the first stage did not ask).
func (l *Layout) Of(k engine.Key) (int, bool) {
	s, ok := l.owner[Owner(k)][k.Item]
	return s, ok
}

// Job returns the part of j that shard s asks: its requests, every stage
// of them, and the models they go to (its answering model, and any model
// that is not one of the layout's answering models, such as a judge).
// A request of j that no shard owns stops the returned job's stream with
// an error naming it. j is not changed.
func (l *Layout) Job(j *run.Job, s Spec) (*run.Job, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.N != len(l.Shards) {
		return nil, fmt.Errorf("shard %s of a layout of %d shards", s, len(l.Shards))
	}
	own := l.Shards[s.K].Model
	out := *j
	out.Shard = s.String()
	out.Models = slices.DeleteFunc(slices.Clone(j.Models), func(m engine.ModelConfig) bool {
		_, answers := l.owner[m.Name]
		return answers && m.Name != own
	})
	out.Requests = func(stage int, prior run.Lookup, withheld func(engine.Key)) iter.Seq2[engine.Request, error] {
		mine := withheld
		if withheld != nil {
			mine = func(k engine.Key) {
				if s2, ok := l.Of(k); ok && s2 == s.K {
					withheld(k)
				}
			}
		}
		return func(yield func(engine.Request, error) bool) {
			for r, err := range j.Requests(stage, prior, mine) {
				if err == nil {
					k, ok := l.Of(r.Key)
					if !ok {
						yield(r, fmt.Errorf("shard %s: request %s (stage %d) belongs to no shard: its model and item ask nothing in the first stage", s, r.Key, stage))
						return
					}
					if k != s.K {
						continue
					}
				}
				if !yield(r, err) {
					return
				}
			}
		}
	}
	return &out, nil
}

// Cell is a part of a job's requests: those of one shard, one model (the
// model a request is sent to: a judge's verdicts are the judge's) and one
// stage.
type Cell struct {
	Shard, Stage int
	Model        string
}

// Count is what a Cell asks.
type Count struct {
	Requests int
	// Built counts the requests whose prompts are known before any
	// answer; the others are built from an earlier stage's answer (a
	// second step, a judge's verdict), which a count made before the run
	// does not have.
	Built int
	// PromptTokens counts the prompts of the built requests with the
	// model's tokenizer, and Counted says how many of them were counted
	// (those of a model without a tokenizer are not).
	PromptTokens, Counted int
	// AnswerTokens bounds the answers of the built requests: the sum of
	// their max_tokens.
	AnswerTokens int
}

// Tally counts the requests of job j by Cell, every stage, as a run of
// the whole job would ask them when every answer is ok; l divides them
// into shards (every request in shard 0 when l is nil). tokens counts a
// request's prompt, and says false when its model has no tokenizer (nil:
// none is counted). It reads every stage's requests once and sends
// nothing. A request no shard owns is an error naming it.
func Tally(j *run.Job, l *Layout, tokens func(engine.Request) (int, bool, error)) (map[Cell]*Count, error) {
	out := map[Cell]*Count{}
	none := func(engine.Key) (*engine.Record, bool) { return nil, false }
	var bad error
	cell := func(k engine.Key, stage int) *Count {
		s := 0
		if l != nil {
			var ok bool
			if s, ok = l.Of(k); !ok && bad == nil {
				bad = fmt.Errorf("%s: request %s (stage %d) belongs to no shard: its model and item ask nothing in the first stage", j.Name, k, stage)
			}
		}
		c := Cell{Shard: s, Stage: stage, Model: k.Model}
		if out[c] == nil {
			out[c] = &Count{}
		}
		return out[c]
	}
	for stage := 1; stage <= j.Stages; stage++ {
		withheld := func(k engine.Key) { cell(k, stage).Requests++ }
		for r, err := range j.Requests(stage, none, withheld) {
			if err != nil {
				return nil, fmt.Errorf("%s: stage %d: %w", j.Name, stage, err)
			}
			c := cell(r.Key, stage)
			c.Requests++
			c.Built++
			c.AnswerTokens += r.Decoding.MaxTokens
			if tokens == nil {
				continue
			}
			n, ok, err := tokens(r)
			if err != nil {
				return nil, fmt.Errorf("%s: counting the prompt tokens of %s: %w", j.Name, r.Key, err)
			}
			if ok {
				c.PromptTokens += n
				c.Counted++
			}
		}
		if bad != nil {
			return nil, bad
		}
	}
	return out, nil
}

// Cells returns the cells of a tally in order: by shard, stage and model.
func Cells(t map[Cell]*Count) []Cell {
	return slices.SortedFunc(maps.Keys(t), func(a, b Cell) int {
		return cmp.Or(cmp.Compare(a.Shard, b.Shard), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Model, b.Model))
	})
}
