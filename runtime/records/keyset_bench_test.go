package records

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkKeySet builds a set of a million record keys with their
// request digests, as a resume's scan of a run does, beside the standard
// way (a Go map from the key to what the set holds of it), and reports
// the heap each keeps per key and the time to build it.
func BenchmarkKeySet(b *testing.B) {
	const n = 1 << 20
	keys, digests := make([]string, n), make([]string, n)
	for i := range keys {
		k := sha256.Sum256([]byte("key " + strconv.Itoa(i)))
		d := sha256.Sum256([]byte("request " + strconv.Itoa(i)))
		keys[i], digests[i] = hex.EncodeToString(k[:]), hex.EncodeToString(d[:])
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for _, c := range []struct {
		name  string
		build func() any
	}{
		{"KeySet", func() any {
			s := NewKeySet()
			for i, k := range keys {
				s.AddRequest(k, digests[i])
			}
			return s
		}},
		{"map", func() any {
			// What a map holds for the same answers: the key (its string
			// shares the caller's bytes) and the entry KeySet keeps.
			m := make(map[string]keyEntry)
			for i, k := range keys {
				m[k] = keyEntry{digest: digestPrefix(digests[i]), line: uint32(i + 1)}
			}
			return m
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var held uint64
			for b.Loop() {
				before := heap()
				v := c.build()
				held = heap() - before
				runtime.KeepAlive(v)
			}
			b.ReportMetric(float64(held)/n, "heap-B/key")
		})
	}
}
