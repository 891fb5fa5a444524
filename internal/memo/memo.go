// Package memo remembers the results of a pure function for one pass of
// work (scoring a run), safely from many goroutines: the answers of a
// run repeat (one answer text, one gold, scored under many strategies),
// so most calls find their result. It holds at most a fixed number of
// entries; past that, calls compute without remembering.
package memo

import (
	"hash/maphash"
	"sync"
)

const shards = 64

// Memo maps a key to the result computed for it. The zero value is not
// usable; call New.
type Memo[K comparable, V any] struct {
	seed  maphash.Seed
	hash  func(K) uint64 // nil: maphash.Comparable with seed (tests give colliding ones)
	max   int            // entries per shard
	shard [shards]struct {
		mu sync.RWMutex
		m  map[uint64]entry[K, V] // by the key's hash: the key is hashed once
	}
}

type entry[K comparable, V any] struct {
	k K
	v V
}

// New returns a memo holding at most max entries (0: 1<<20).
func New[K comparable, V any](max int) *Memo[K, V] {
	if max <= 0 {
		max = 1 << 20
	}
	m := &Memo[K, V]{seed: maphash.MakeSeed(), max: max/shards + 1}
	for i := range m.shard {
		m.shard[i].m = map[uint64]entry[K, V]{}
	}
	return m
}

// Get returns f(k), computing it only when no earlier call with k did. f
// must depend on k alone. Entries are found by k's 64-bit hash and
// confirmed by k itself: a key whose hash another key holds is computed
// each time, never given the other's result.
func (m *Memo[K, V]) Get(k K, f func(K) V) V {
	var h uint64
	if m.hash != nil {
		h = m.hash(k)
	} else {
		h = maphash.Comparable(m.seed, k)
	}
	s := &m.shard[h%shards]
	s.mu.RLock()
	e, held := s.m[h]
	s.mu.RUnlock()
	if held && e.k == k {
		return e.v
	}
	v := f(k)
	if !held {
		s.mu.Lock()
		if _, ok := s.m[h]; !ok && len(s.m) < m.max {
			s.m[h] = entry[K, V]{k, v}
		}
		s.mu.Unlock()
	}
	return v
}
