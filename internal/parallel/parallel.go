// Package parallel runs independent pieces of work on every core.
package parallel

import (
	"runtime"
	"sync"
)

// For calls fn(i) for every i in [0, n), each once, on min(GOMAXPROCS,
// n) goroutines, and returns once every call has returned. The calls run
// in no set order: fn must be safe to call at once for different i
// (writing only what belongs to its i).
func For(n int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
