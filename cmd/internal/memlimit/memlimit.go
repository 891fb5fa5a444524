// Package memlimit paces the garbage collector of a long step (a run, a
// scoring pass, a report) by Go's soft memory limit alone: while held, the
// GC percent is off (GOGC=off) and the limit is
//
//	max(floor, live heap + max(headroom, live heap / share))
//
// moved every 250 ms as the live heap changes. A collection starts when the
// heap reaches the limit: a large live heap does not double before each
// collection as it does under GOGC=100, and a small one is collected only
// once the heap reaches the floor, not each time it doubles (the floor is
// the step's budget for the heap). The limit is never under the live heap.
// A user's GOMEMLIMIT is left as it is, and then so is the GC percent; a
// user's GOGC is left as it is. Holds nest (the outermost sets the
// process's one limit) and the last release restores the earlier limit and
// GC percent.
package memlimit

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// The pacing of Bhasha's long steps.
const (
	Floor    = 300 << 20 // the heap reached before a collection while the live heap is small
	Headroom = 96 << 20  // beyond the live heap above the floor
)

// state is the process's one hold (the runtime has one limit).
var state struct {
	mu     sync.Mutex
	depth  int
	before int64
	pct    int    // the GC percent before the hold
	setPct bool   // the hold turned the GC percent off (GOGC unset)
	stop   func() // stops the ticker that moves the limit, and waits for it
}

// Hold keeps the limit at max(floor, live + max(headroom, live/share)),
// and the GC percent off unless GOGC is set, until release is called
// (share < 1 is taken as 1). It does nothing (release too) when GOMEMLIMIT
// is set.
func Hold(floor, headroom, share int64) (release func()) {
	share = max(share, 1)
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	state.depth++
	if state.depth == 1 {
		state.before = debug.SetMemoryLimit(-1)
		if state.setPct = os.Getenv("GOGC") == ""; state.setPct {
			state.pct = debug.SetGCPercent(-1)
		}
		set := func() {
			s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			metrics.Read(s)
			limit := floor
			if s[0].Value.Kind() == metrics.KindUint64 {
				live := int64(s[0].Value.Uint64())
				limit = max(limit, live+max(headroom, live/share))
			}
			debug.SetMemoryLimit(limit)
		}
		set()
		stop, t := make(chan struct{}), time.NewTicker(250*time.Millisecond)
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					set()
				}
			}
		})
		state.stop = func() {
			close(stop)
			wg.Wait()
			t.Stop()
		}
	}
	return sync.OnceFunc(release1)
}

func release1() {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.depth--
	if state.depth > 0 {
		return
	}
	state.stop()
	debug.SetMemoryLimit(state.before)
	if state.setPct {
		debug.SetGCPercent(state.pct)
	}
}
