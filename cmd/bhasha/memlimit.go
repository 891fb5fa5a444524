package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Memory of `bhasha run`.
//
// A run's live heap is small and flat (tens of MB) but for two indexes
// that grow with what it holds: the keys already answered
// (records.KeySet, about 40 bytes a key) and the response cache's index
// (about 25 bytes an entry of the whole cache directory). With Go's
// default pacing (GOGC=100) the heap may grow to twice the live heap
// before a collection: with a 6.4-million-entry cache that is a 440 MB
// peak where 220 MB are live. runMemoryLimit sets a soft memory limit of
//
//	max(runHeapFloor, live heap + runHeapHeadroom)
//
// and moves it as the live heap changes: below the floor the default
// pacing is untouched; above it the heap gets runHeapHeadroom beyond what
// is live (a collection at least every 64 MiB allocated), never a limit
// under the live heap that would keep the collector running. A user's
// GOMEMLIMIT is left as it is.
const (
	runHeapFloor    = 300 << 20
	runHeapHeadroom = 64 << 20
)

// runMemoryLimit keeps the soft memory limit until ctx ends, and then
// restores the limit there was.
func runMemoryLimit(ctx context.Context) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	before := debug.SetMemoryLimit(-1)
	set := func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		limit := int64(runHeapFloor)
		if s[0].Value.Kind() == metrics.KindUint64 {
			limit = max(limit, int64(s[0].Value.Uint64())+runHeapHeadroom)
		}
		debug.SetMemoryLimit(limit)
	}
	set()
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				debug.SetMemoryLimit(before)
				return
			case <-t.C:
				set()
			}
		}
	}()
}
