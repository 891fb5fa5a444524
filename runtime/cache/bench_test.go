package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchStore fills a store in a temporary directory with n entries of
// about 250 bytes (a cached answer's size) and closes it.
func benchStore(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	s, _, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	pad := make([]byte, 200)
	for i := range pad {
		pad[i] = 'a'
	}
	for i := range n {
		if err := s.Put(key(i), []byte(fmt.Sprintf(`{"text":"answer %d %s","finish_reason":"stop"}`, i, pad))); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkOpen: opening a store of 2,000,000 answers (about 560 MB of
// log) and closing it, with its index on disk (indexed) and without, so
// that Open rebuilds it from the log (rebuild: the first Open of a cache
// written before the index was kept on disk).
func BenchmarkOpen(b *testing.B) {
	const n = 2000000
	dir := benchStore(b, n)
	for _, rebuild := range []bool{false, true} {
		b.Run(map[bool]string{false: "indexed", true: "rebuild"}[rebuild], func(b *testing.B) {
			for range b.N {
				if rebuild {
					b.StopTimer()
					if err := os.Remove(filepath.Join(dir, IndexName)); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				s, rep, err := Open(dir)
				if err != nil || rep.Entries != n {
					b.Fatalf("%v: %+v", err, rep)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGet: one lookup and read of an answer in a store of 2,000,000,
// all of them in the table on disk.
func BenchmarkGet(b *testing.B) {
	const n = 2000000
	s, _, err := Open(benchStore(b, n))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := range b.N {
		if _, ok, err := s.Get(key(i * 7919 % n)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
