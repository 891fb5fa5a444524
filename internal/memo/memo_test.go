package memo

import (
	"fmt"
	"sync"
	"testing"
)

// Get gives each key its own result, computed once while there is room,
// and never another key's: not when every key has one hash, nor when
// the memo is full; from many goroutines at once.
func TestGet(t *testing.T) {
	cases := []struct {
		name  string
		max   int
		hash  func(string) uint64
		calls int // f's calls for 200 keys asked 5 times each
	}{
		{"room for all", 1 << 10, nil, 200},
		{"every key one hash", 1 << 10, func(string) uint64 { return 7 }, 1 + 199*5},
		{"full", 64, func(k string) uint64 { var h uint64; fmt.Sscan(k[1:], &h); return h * shards }, 2 + 198*5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New[string, string](c.max)
			m.hash = c.hash
			var mu sync.Mutex
			calls := 0
			f := func(k string) string {
				mu.Lock()
				calls++
				mu.Unlock()
				return "v" + k
			}
			for round := range 5 {
				var wg sync.WaitGroup
				for g := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := g; i < 200; i += 4 {
							k := fmt.Sprintf("k%d", i)
							if v := m.Get(k, f); v != "v"+k {
								t.Errorf("round %d: Get(%q) = %q", round, k, v)
							}
						}
					}()
				}
				wg.Wait()
			}
			if calls != c.calls {
				t.Errorf("f called %d times, want %d", calls, c.calls)
			}
		})
	}
}
