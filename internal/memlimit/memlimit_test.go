package memlimit

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// A hold sets a limit of at least the floor; nested holds leave it; the
// last release gives back the limit there was.
func TestHold(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: holds leave it")
	}
	before := debug.SetMemoryLimit(-1)
	outer := Hold(Floor, Headroom)
	held := debug.SetMemoryLimit(-1)
	if held < Floor || held == math.MaxInt64 {
		t.Fatalf("limit while held: %d", held)
	}
	inner := Hold(1<<40, Headroom) // nested: the outer hold's floor stays
	if got := debug.SetMemoryLimit(-1); got >= 1<<40 {
		t.Errorf("a nested hold moved the limit to %d", got)
	}
	inner()
	inner() // a second release of the same hold is a no-op
	if got := debug.SetMemoryLimit(-1); got == before {
		t.Errorf("released the inner hold: limit back to %d while the outer holds", got)
	}
	outer()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after the last release: %d, want %d", got, before)
	}
}
