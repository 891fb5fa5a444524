package indicklar

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// demosByCopy is the draw as it was first written: a partial Fisher-Yates
// shuffle of a copy of the pool without the test item.
func demosByCopy(seed int64, pool []demo, testID string, sl slot, n int) []demo {
	cands := make([]demo, 0, len(pool))
	for _, d := range pool {
		if d.id != testID {
			cands = append(cands, d)
		}
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%s", testID, sl.lang.ISO3, sl.form)
	r := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	n = min(n, len(cands))
	for i := 0; i < n; i++ {
		j := i + r.IntN(len(cands)-i)
		cands[i], cands[j] = cands[j], cands[i]
	}
	return cands[:n]
}

// The demonstrations drawn without copying the pool are those of the copy,
// in the same order (the prompts, and so the cache keys and request
// digests of earlier runs, stay byte-identical).
func TestDemosAsByCopy(t *testing.T) {
	sl := slot{lang.New().MustLookup("hin"), item.Native}
	for size := range 12 {
		for _, testAt := range [][]int{nil, {0}, {size / 2}, {size - 1}, {0, size - 1}} {
			pool := make([]demo, size)
			for i := range pool {
				pool[i] = demo{id: fmt.Sprintf("P%d", i), v: &item.Variant{Question: fmt.Sprint(i)}}
			}
			test := "absent"
			for _, at := range testAt {
				if at >= 0 && at < size {
					pool[at].id, test = "T", "T"
				}
			}
			for seed := range int64(40) {
				for n := range 6 {
					p := &Protocol{Seed: seed}
					got, want := p.demos(pool, test, sl, n), demosByCopy(seed, pool, test, sl, n)
					if !slices.Equal(got, want) {
						t.Fatalf("pool of %d, test item at %v, seed %d, n %d: %v, want %v", size, testAt, seed, n, got, want)
					}
				}
			}
		}
	}
}
