package records

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

const (
	digestA = "aaaaaaaaaaaaaaaa000000000000000000000000000000000000000000000000"
	digestB = "bbbbbbbbbbbbbbbb000000000000000000000000000000000000000000000000"
)

func TestKeySet(t *testing.T) {
	type op struct {
		do     string // add, addline, remove, visit
		key    string
		digest string
		resp   uint64
		line   int
		isNew  bool     // add, addline: want new
		first  keyEntry // addline of a key already there: the entry it reports
	}
	cases := []struct {
		name      string
		ops       []op
		has       []string
		missing   []string
		changed   map[string]string // key -> digest asked now, Changed must be true
		unchanged map[string]string // Changed must be false
		lines     map[string]int
		unvisited []int
		n         int
	}{
		{name: "empty", missing: []string{"a", ""}, unchanged: map[string]string{"a": digestA}, lines: map[string]int{"a": 0}},
		{name: "duplicate add", ops: []op{{do: "add", key: "a", isNew: true}, {do: "add", key: "a"}, {do: "add", key: "b", isNew: true}},
			has: []string{"a", "b"}, missing: []string{"c"}, unvisited: []int{0, 0}, n: 2}, // keys not from a file are on line 0
		{name: "duplicate line reports the first",
			ops: []op{{do: "addline", key: "k", digest: digestA, resp: 7, line: 3, isNew: true},
				{do: "addline", key: "k", digest: digestB, resp: 9, line: 8, first: keyEntry{digest: digestPrefix(digestA), resp: 7, line: 3}}},
			has: []string{"k"}, lines: map[string]int{"k": 3}, changed: map[string]string{"k": digestB}, unchanged: map[string]string{"k": digestA},
			unvisited: []int{3}, n: 1},
		{name: "changed with and without a digest",
			ops: []op{{do: "addline", key: "with", digest: digestA, line: 1, isNew: true}, {do: "addline", key: "without", line: 2, isNew: true},
				{do: "addline", key: "short", digest: "abc", line: 3, isNew: true}},
			changed:   map[string]string{"with": digestB},
			unchanged: map[string]string{"with": digestA, "without": digestB, "short": digestB, "absent": digestB},
			unvisited: []int{1, 2, 3}, n: 3},
		{name: "unvisited sorted by line, visited left out",
			ops: []op{{do: "addline", key: "c", line: 30, isNew: true}, {do: "addline", key: "a", line: 10, isNew: true},
				{do: "addline", key: "b", line: 20, isNew: true}, {do: "addline", key: "d", line: 5, isNew: true},
				{do: "visit", key: "b"}, {do: "visit", key: "nope"}},
			unvisited: []int{5, 10, 30}, n: 4},
		{name: "remove",
			ops: []op{{do: "addline", key: "a", line: 1, isNew: true}, {do: "addline", key: "b", line: 2, isNew: true},
				{do: "remove", key: "a"}, {do: "remove", key: "zz"}},
			has: []string{"b"}, missing: []string{"a"}, lines: map[string]int{"a": 0, "b": 2}, unvisited: []int{2}, n: 1},
		{name: "removed key added again is new, unvisited, with its new line and digest",
			ops: []op{{do: "addline", key: "a", digest: digestA, line: 1, isNew: true}, {do: "visit", key: "a"},
				{do: "remove", key: "a"}, {do: "addline", key: "a", digest: digestB, line: 9, isNew: true}},
			has: []string{"a"}, lines: map[string]int{"a": 9}, changed: map[string]string{"a": digestA}, unvisited: []int{9}, n: 1},
		{name: "removed key is not visited",
			ops:     []op{{do: "addline", key: "a", line: 4, isNew: true}, {do: "remove", key: "a"}, {do: "visit", key: "a"}},
			missing: []string{"a"}, n: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewKeySet()
			for i, o := range c.ops {
				switch o.do {
				case "add":
					if got := s.Add(o.key); got != o.isNew {
						t.Fatalf("op %d: Add(%q) = %v", i, o.key, got)
					}
				case "addline":
					first, isNew := s.addLine(o.key, o.digest, o.resp, o.line)
					if isNew != o.isNew || (!isNew && first != o.first) {
						t.Fatalf("op %d: addLine(%q) = %+v, %v; want %+v, %v", i, o.key, first, isNew, o.first, o.isNew)
					}
				case "remove":
					s.Remove(o.key)
				case "visit":
					s.Visit(o.key)
				}
			}
			for _, k := range c.has {
				if !s.Has(k) {
					t.Errorf("Has(%q) = false", k)
				}
			}
			for _, k := range c.missing {
				if s.Has(k) {
					t.Errorf("Has(%q) = true", k)
				}
			}
			for k, d := range c.changed {
				if !s.Changed(k, d) {
					t.Errorf("Changed(%q, %.16s) = false", k, d)
				}
			}
			for k, d := range c.unchanged {
				if s.Changed(k, d) {
					t.Errorf("Changed(%q, %.16s) = true", k, d)
				}
			}
			for k, l := range c.lines {
				if got := s.lineOf(k); got != l {
					t.Errorf("lineOf(%q) = %d, want %d", k, got, l)
				}
			}
			if got := s.Unvisited(); !slices.Equal(got, c.unvisited) {
				t.Errorf("Unvisited() = %v, want %v", got, c.unvisited)
			}
			if s.Len() != c.n {
				t.Errorf("Len() = %d, want %d", s.Len(), c.n)
			}
		})
	}
}

// TestKeySetMatchesMap runs random operations on a KeySet and on a map
// of the keys' text.
func TestKeySetMatchesMap(t *testing.T) {
	type ref struct {
		digest  string
		line    int
		visited bool
	}
	r := rand.New(rand.NewPCG(1, 2))
	s := NewKeySet()
	m := map[string]*ref{}
	key := func() string { return fmt.Sprintf("exp|m|item%d|hin", r.IntN(30000)) }
	digests := []string{"", digestA, digestB}
	for i := range 120000 {
		k := key()
		switch r.IntN(10) {
		case 0:
			s.Remove(k)
			delete(m, k)
		case 1:
			s.Visit(k)
			if e := m[k]; e != nil {
				e.visited = true
			}
		default:
			d := digests[r.IntN(3)]
			_, isNew := s.addLine(k, d, 0, i+1)
			if isNew != (m[k] == nil) {
				t.Fatalf("op %d: addLine(%q) new = %v, map says %v", i, k, isNew, m[k] == nil)
			}
			if m[k] == nil {
				m[k] = &ref{digest: d, line: i + 1}
			}
		}
	}
	if s.Len() != len(m) {
		t.Fatalf("Len %d, map %d", s.Len(), len(m))
	}
	var want []int
	for k, e := range m {
		if !s.Has(k) || s.lineOf(k) != e.line {
			t.Fatalf("%q: has %v line %d, want line %d", k, s.Has(k), s.lineOf(k), e.line)
		}
		if s.Changed(k, digestA) != (e.digest == digestB) {
			t.Fatalf("%q recorded with %.16q: Changed(digestA) = %v", k, e.digest, s.Changed(k, digestA))
		}
		if !e.visited {
			want = append(want, e.line)
		}
	}
	slices.Sort(want)
	if got := s.Unvisited(); !slices.Equal(got, want) {
		t.Fatalf("Unvisited: %d lines, want %d", len(got), len(want))
	}
	for i := range 30000 {
		k := fmt.Sprintf("exp|m|item%d|hin", i)
		if s.Has(k) != (m[k] != nil) {
			t.Fatalf("Has(%q) = %v", k, s.Has(k))
		}
	}
}
