// Package hashindex finds a position by a 128-bit hash of its key, in
// about 25 bytes a key (a 24-byte entry and a quarter of a 4-byte
// directory slot), about half what a Go map of the same
// (map[[2]uint64]int32) holds, and without pointers for the collector to
// scan.
//
// The entries are held sorted by hash, with a directory of where each
// bucket of the hashes' top bits begins (one int32 per bucket, about a
// bucket per four entries): a lookup reads one directory slot and scans
// the few entries of its bucket. Hashes are taken as uniformly
// distributed (maphash); two keys are the same when both 64-bit halves
// agree, as a map keyed by the pair would take them.
package hashindex

import (
	"math/bits"
	"slices"

	"github.com/bhashalab/bhasha/internal/parallel"
)

// Index maps hashes to positions. The zero value is empty.
type Index struct {
	e     []entry
	dir   []int32 // dir[b] is the first entry of bucket b; dir[len-1] == len(e)
	shift uint    // bucket b holds hashes whose h[0]>>shift == b
}

type entry struct {
	h  [2]uint64
	at int32
}

// New indexes position i under hash h(i), for i in [0, n). Where two
// positions share a hash, the later one is found (as assigning them to a
// map in order leaves it). h is called on every core at once (for
// different i): it must be safe for that.
func New(n int, h func(i int) [2]uint64) *Index {
	e := make([]entry, n)
	const chunk = 1 << 12
	parallel.For((n+chunk-1)/chunk, func(c int) {
		for i := c * chunk; i < min(n, (c+1)*chunk); i++ {
			e[i] = entry{h(i), int32(i)}
		}
	})
	sortEntries(e)
	// Keep the last position of each hash.
	k := 0
	for i := range e {
		if i+1 < len(e) && e[i+1].h == e[i].h {
			continue
		}
		e[k] = e[i]
		k++
	}
	e = slices.Clip(e[:k])
	// About four entries a bucket: 2^b buckets with 2^b ≥ n/4.
	b := bits.Len(uint(len(e) / 4))
	x := &Index{e: e, shift: uint(64 - b), dir: make([]int32, (1<<b)+1)} // b == 0: h>>64 is 0, one bucket
	j := 0
	for bk := range len(x.dir) - 1 {
		for j < len(e) && x.bucket(e[j].h) < bk {
			j++
		}
		x.dir[bk] = int32(j)
	}
	x.dir[len(x.dir)-1] = int32(len(e))
	return x
}

func (x *Index) bucket(h [2]uint64) int { return int(h[0] >> x.shift) }

func cmp2(a, b [2]uint64) int {
	switch {
	case a[0] < b[0]:
		return -1
	case a[0] > b[0]:
		return 1
	case a[1] < b[1]:
		return -1
	case a[1] > b[1]:
		return 1
	}
	return 0
}

// Find returns the position indexed under h, and whether there is one.
func (x *Index) Find(h [2]uint64) (int32, bool) {
	if len(x.e) == 0 {
		return 0, false
	}
	b := x.bucket(h)
	for _, e := range x.e[x.dir[b]:x.dir[b+1]] {
		if e.h == h {
			return e.at, true
		}
		if cmp2(e.h, h) > 0 {
			break
		}
	}
	return 0, false
}

// Len is the number of distinct hashes indexed.
func (x *Index) Len() int { return len(x.e) }

// sortEntries sorts e by hash, then position: first by the top bits of
// the hash's first half into about n/4 buckets, in place (the hashes
// being uniform, a bucket holds a few entries), then each bucket on its
// own: O(n) expected for uniform hashes, where a comparison sort
// (slices.SortFunc) is O(n log n) and several times slower (BenchmarkNew).
func sortEntries(e []entry) {
	b := bits.Len(uint(len(e) / 4))
	if b == 0 {
		insertion(e)
		return
	}
	shift := uint(64 - b)
	next := make([]int32, (1<<b)+1) // where bucket k's next entry goes
	for _, x := range e {
		next[x.h[0]>>shift+1]++
	}
	for k := 1; k < len(next); k++ {
		next[k] += next[k-1]
	}
	end := slices.Clone(next[1:]) // bucket k ends at end[k]
	// Each entry is moved into its bucket, the one it displaces moved on
	// in turn, until one lands in the bucket whose slot was taken.
	for k := range end {
		for next[k] < end[k] {
			x := e[next[k]]
			for t := int(x.h[0] >> shift); t != k; t = int(x.h[0] >> shift) {
				x, e[next[t]] = e[next[t]], x
				next[t]++
			}
			e[next[k]] = x
			next[k]++
		}
	}
	start := 0
	for _, stop := range end {
		if bucket := e[start:stop]; len(bucket) > 16 { // hashes far from uniform
			slices.SortFunc(bucket, cmpEntry)
		} else {
			insertion(bucket)
		}
		start = int(stop)
	}
}

// cmpEntry orders entries by hash, then position.
func cmpEntry(a, b entry) int {
	if c := cmp2(a.h, b.h); c != 0 {
		return c
	}
	return int(a.at) - int(b.at)
}

func insertion(e []entry) {
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && cmpEntry(e[j], e[j-1]) < 0; j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}
