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
	max   int // entries per shard
	shard [shards]struct {
		mu sync.RWMutex
		m  map[K]V
	}
}

// New returns a memo holding at most max entries (0: 1<<20).
func New[K comparable, V any](max int) *Memo[K, V] {
	if max <= 0 {
		max = 1 << 20
	}
	m := &Memo[K, V]{seed: maphash.MakeSeed(), max: max/shards + 1}
	for i := range m.shard {
		m.shard[i].m = map[K]V{}
	}
	return m
}

// Get returns f(k), computing it only when no earlier call with k did. f
// must depend on k alone.
func (m *Memo[K, V]) Get(k K, f func(K) V) V {
	s := &m.shard[maphash.Comparable(m.seed, k)%shards]
	s.mu.RLock()
	v, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return v
	}
	v = f(k)
	s.mu.Lock()
	if len(s.m) < m.max {
		s.m[k] = v
	}
	s.mu.Unlock()
	return v
}
