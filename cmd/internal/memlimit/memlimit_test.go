package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// A hold sets a limit of at least the floor and turns the GC percent off;
// nested holds leave both; the last release gives back the limit and the
// GC percent there were.
func TestHold(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" {
		t.Skip("GOMEMLIMIT or GOGC is set: holds leave it")
	}
	pct := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	defer debug.SetGCPercent(debug.SetGCPercent(73))
	before := debug.SetMemoryLimit(-1)
	outer := Hold(Floor, Headroom, 4)
	held := debug.SetMemoryLimit(-1)
	if held < Floor || held == math.MaxInt64 {
		t.Fatalf("limit while held: %d", held)
	}
	if got := pct(); got >= 0 {
		t.Errorf("GC percent while held: %d, want off (negative)", got)
	}
	inner := Hold(1<<40, Headroom, 4) // nested: the outer hold's floor stays
	if got := debug.SetMemoryLimit(-1); got >= 1<<40 {
		t.Errorf("a nested hold moved the limit to %d", got)
	}
	inner()
	inner() // a second release of the same hold is a no-op
	if got := debug.SetMemoryLimit(-1); got == before {
		t.Errorf("released the inner hold: limit back to %d while the outer holds", got)
	}
	if got := pct(); got >= 0 {
		t.Errorf("GC percent after the inner release: %d, want off while the outer holds", got)
	}
	outer()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after the last release: %d, want %d", got, before)
	}
	if got := pct(); got != 73 {
		t.Errorf("GC percent after the last release: %d, want 73", got)
	}
}

// A user's GOGC is left as it is.
func TestHoldKeepsUsersGOGC(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: holds leave it")
	}
	t.Setenv("GOGC", "150")
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	release := Hold(Floor, Headroom, 4)
	got := debug.SetGCPercent(150)
	release()
	if got != 150 {
		t.Errorf("GC percent while held with GOGC=150: %d", got)
	}
}

// Above the floor and the headroom, the limit is the live heap and its
// share: a half or a quarter of it.
func TestHoldShare(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: holds leave it")
	}
	live := make([]byte, 256<<20) // the live heap, nearly all of it
	for i := range live {
		live[i] = byte(i)
	}
	for _, share := range []int64{2, 4} {
		runtime.GC()
		release := Hold(0, 0, share)
		got := debug.SetMemoryLimit(-1)
		release()
		lo, hi := int64(len(live))*(share+1)/share, int64(len(live)+64<<20)*(share+1)/share
		if got < lo || got > hi {
			t.Errorf("share %d: limit %d MiB, want %d to %d MiB", share, got>>20, lo>>20, hi>>20)
		}
	}
	runtime.KeepAlive(live)
}
