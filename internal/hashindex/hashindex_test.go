package hashindex

import (
	"math/rand/v2"
	"testing"
)

// Every position is found under its hash, the later of two under a
// shared one, and no hash not indexed is found: at sizes around the
// bucket count's steps, with random hashes, with hashes that share their
// first half, and with hashes all in one bucket.
func TestFind(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(int) [2]uint64 { return [2]uint64{rng.Uint64(), rng.Uint64()} }
	cases := []struct {
		name string
		n    int
		hash func(i int) [2]uint64
	}{
		{"empty", 0, random},
		{"one", 1, random},
		{"three", 3, random},
		{"four", 4, random},
		{"five", 5, random},
		{"random", 100_000, random},
		{"first half shared", 5000, func(i int) [2]uint64 { return [2]uint64{uint64(i % 3), rng.Uint64()} }},
		{"one bucket", 5000, func(int) [2]uint64 { return [2]uint64{rng.Uint64() >> 40, rng.Uint64()} }},
		{"duplicates", 5000, func(i int) [2]uint64 { return [2]uint64{uint64(i%100) << 50, uint64(i % 100)} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := make([][2]uint64, c.n)
			want := map[[2]uint64]int32{}
			for i := range hs {
				hs[i] = c.hash(i)
				want[hs[i]] = int32(i)
			}
			x := New(c.n, func(i int) [2]uint64 { return hs[i] })
			for i := 1; i < len(x.e); i++ {
				if cmp2(x.e[i-1].h, x.e[i].h) >= 0 {
					t.Fatalf("entries %d and %d out of order: %x, %x", i-1, i, x.e[i-1].h, x.e[i].h)
				}
			}
			if x.Len() != len(want) {
				t.Errorf("Len %d, want %d", x.Len(), len(want))
			}
			for h, at := range want {
				if got, ok := x.Find(h); !ok || got != at {
					t.Fatalf("Find(%x) = %d, %v; want %d", h, got, ok, at)
				}
			}
			for range 1000 {
				h := random(0)
				if _, held := want[h]; held {
					continue
				}
				if got, ok := x.Find(h); ok {
					t.Fatalf("Find(%x) = %d for a hash not indexed", h, got)
				}
				if len(hs) > 0 { // the first half of a held hash, another second
					h = [2]uint64{hs[0][0], h[1]}
					if _, held := want[h]; !held {
						if got, ok := x.Find(h); ok {
							t.Fatalf("Find(%x) = %d for a hash sharing a held hash's first half", h, got)
						}
					}
				}
			}
		})
	}
}

// BenchmarkNew indexes 350,000 random hashes (a 460,500-record run's
// answers).
func BenchmarkNew(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	hs := make([][2]uint64, 350_000)
	for i := range hs {
		hs[i] = [2]uint64{rng.Uint64(), rng.Uint64()}
	}
	for b.Loop() {
		New(len(hs), func(i int) [2]uint64 { return hs[i] })
	}
}
