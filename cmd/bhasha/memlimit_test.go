package main

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"testing"
	"time"
)

// `bhasha run` keeps a soft memory limit of at least runHeapFloor while it
// runs, and gives back the limit there was when it ends.
func TestRunMemoryLimit(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: the run leaves it")
	}
	before := debug.SetMemoryLimit(-1)
	ctx, cancel := context.WithCancel(context.Background())
	runMemoryLimit(ctx)
	if got := debug.SetMemoryLimit(-1); got < runHeapFloor || got == math.MaxInt64 {
		t.Errorf("limit while running: %d", got)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) != before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after the run: %d, want %d", got, before)
	}
}
