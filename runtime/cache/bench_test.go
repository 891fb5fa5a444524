package cache

import (
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchStore fills a store in a temporary directory with n entries of
// about 250 bytes (a cached answer's size), from 64 goroutines as a run
// puts them, and closes it.
func benchStore(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	s, _, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	parallel(n, func(i int) error { return s.Put(key(i), benchValue(i)) }, b)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// benchValue is the i-th answer of about 250 bytes.
func benchValue(i int) []byte {
	return fmt.Appendf(nil, `{"text":"answer %d %s","finish_reason":"stop"}`, i, strings.Repeat("a", 200))
}

// parallel calls fn(i) for i in [0, n) from 64 goroutines.
func parallel(n int, fn func(i int) error, b *testing.B) {
	const conc = 64
	var wg sync.WaitGroup
	for g := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += conc {
				if err := fn(i); err != nil {
					b.Error(i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkReplay100k: opening a store of 100,000 answers of about 250
// bytes, reading every one back from 64 goroutines, as a run whose
// answers are all cached does, and closing it.
func BenchmarkReplay100k(b *testing.B) {
	const n = 100000
	dir := benchStore(b, n)
	b.ResetTimer()
	for range b.N {
		start, cpu0 := time.Now(), cpuTime()
		s, _, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		parallel(n, func(i int) error {
			if _, ok, err := s.Get(key(i)); !ok || err != nil {
				return fmt.Errorf("%v %v", ok, err)
			}
			return nil
		}, b)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "replay-s")
		b.ReportMetric((cpuTime() - cpu0).Seconds(), "cpu-s")
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPut: storing 100,000 answers of about 250 bytes from 64
// goroutines, as a run's answers arrive.
func BenchmarkPut(b *testing.B) {
	for range b.N {
		start := time.Now()
		benchStore(b, 100000)
		b.ReportMetric(time.Since(start).Seconds(), "put-100k-s")
	}
}

// BenchmarkGet: one lookup and read of an answer in a store of 2,000,000.
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

// BenchmarkReplay100kOneQueryEach is BenchmarkReplay100k with each Get
// its own query, and BenchmarkPut with each Put its own transaction,
// side by side with the batches of Store (group): database/sql's pool
// alone, the same statements.
func BenchmarkReplay100kOneQueryEach(b *testing.B) {
	const n = 100000
	dir := benchStore(b, n)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		s, _, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		parallel(n, func(i int) error {
			k := key(i)
			bt := &batch{keys: []string{hex.EncodeToString(k[:])}}
			if err := s.read(bt); err != nil || len(bt.found) != 1 {
				return fmt.Errorf("%v %v", bt.found, err)
			}
			return nil
		}, b)
		s.Close()
		b.ReportMetric(time.Since(start).Seconds(), "replay-s")
		start = time.Now()
		if s, _, err = Open(b.TempDir()); err != nil {
			b.Fatal(err)
		}
		var mu sync.Mutex // SQLite writes one transaction at a time
		parallel(n, func(i int) error {
			k := key(i)
			mu.Lock()
			defer mu.Unlock()
			return s.write(&batch{keys: []string{hex.EncodeToString(k[:])}, values: [][]byte{benchValue(i)}})
		}, b)
		s.Close()
		b.ReportMetric(time.Since(start).Seconds(), "put-100k-s")
	}
}

// BenchmarkPutPaced: the cache's CPU time per answer put as a run puts
// them: 256 workers, each asking a server that answers in 50 ms, then
// Put without waiting for it, 20,000 answers into a new store; beside
// it, in the same run, the same with the transactions not lingering
// (putLinger 0).
func BenchmarkPutPaced(b *testing.B) {
	const n, workers = 20000, 256
	arm := func(linger time.Duration) float64 {
		s, _, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		s.writes.linger = linger
		c0 := cpuTime()
		var puts sync.WaitGroup
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < n; i += workers {
					time.Sleep(50 * time.Millisecond)
					puts.Go(func() {
						if err := s.Put(key(i), benchValue(i)); err != nil {
							b.Error(i, err)
						}
					})
				}
			})
		}
		wg.Wait()
		puts.Wait()
		cpu := cpuTime() - c0
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		return float64(cpu.Microseconds()) / n
	}
	for range b.N {
		b.ReportMetric(arm(putLinger), "cpu-µs/answer")
		b.ReportMetric(arm(0), "no-linger-cpu-µs/answer")
	}
}
