package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func testPool(n int, limit float64) *pool {
	o := &Options{}
	o.defaults()
	o.ReplicaBackoff = 50 * time.Millisecond
	var reps []*replica
	for range n {
		reps = append(reps, &replica{limit: limit, maxLimit: limit})
	}
	return newPool(reps, o)
}

func TestLeastOutstanding(t *testing.T) {
	p := testPool(3, 10)
	p.replicas[0].inflight, p.replicas[1].inflight, p.replicas[2].inflight = 4, 1, 3
	r, err := p.acquire(context.Background())
	if err != nil || r != p.replicas[1] || r.inflight != 2 {
		t.Fatalf("picked %p (inflight %d), want replica 1", r, r.inflight)
	}
	// A backed-off replica is skipped even when it is the least loaded.
	p.replicas[1].backoffUntil = time.Now().Add(time.Hour)
	if r, _ := p.acquire(context.Background()); r != p.replicas[2] {
		t.Fatal("picked a backed-off replica")
	}
}

func TestAIMD(t *testing.T) {
	p := testPool(1, 16)
	r := p.replicas[0]
	cases := []struct {
		o         outcome
		after     time.Duration
		wantLimit float64
		// recentCut puts the last cut ahead of the clock: less than 100 ms
		// have passed since it, however slowly the test runs.
		recentCut bool
	}{
		{outThrottled, 0, 8, false},
		{outThrottled, 0, 8, true}, // a second 429 within 100 ms does not cut again
		{outOK, 0, 8 + 1.0/8, false},
		{outRequest, 0, 8 + 1.0/8, false},
	}
	for i, c := range cases {
		if c.recentCut {
			r.lastCut = time.Now().Add(time.Hour)
		}
		r.inflight++
		p.release(r, c.o, c.after, nil)
		if r.limit != c.wantLimit {
			t.Errorf("step %d: limit %g, want %g", i, r.limit, c.wantLimit)
		}
	}
	for range 1000 {
		r.inflight++
		p.release(r, outOK, 0, nil)
	}
	if r.limit != 16 {
		t.Errorf("limit grew to %g past the maximum 16", r.limit)
	}
	// Retry-After pauses the replica.
	r.inflight++
	r.lastCut = time.Time{}
	before := time.Now()
	p.release(r, outThrottled, time.Second, nil)
	if r.backoffUntil.Before(before.Add(time.Second)) {
		t.Error("Retry-After not honoured")
	}
	// Limit 1 after repeated 429s, never 0.
	for range 10 {
		r.inflight++
		r.lastCut = time.Time{}
		p.release(r, outThrottled, 0, nil)
	}
	if r.limit != 1 {
		t.Errorf("limit %g after many 429s", r.limit)
	}
}

func TestReplicaBackoffAfterThreeFaults(t *testing.T) {
	p := testPool(1, 4)
	r := p.replicas[0]
	for i := 1; i <= 3; i++ {
		before := time.Now() // the back-off runs from the release on, however late this test looks
		r.inflight++
		p.release(r, outReplica, 0, nil)
		backedOff := r.backoffUntil.After(before)
		if backedOff != (i == 3) {
			t.Errorf("after %d faults: backed off %v", i, backedOff)
		}
	}
	r.inflight++
	p.release(r, outOK, 0, nil)
	if r.consecFail != 0 {
		t.Error("success did not reset the fault count")
	}
}

func TestAcquireWaitsForSlot(t *testing.T) {
	p := testPool(1, 1)
	r, _ := p.acquire(context.Background())
	got := make(chan *replica)
	go func() { r2, _ := p.acquire(context.Background()); got <- r2 }()
	select {
	case <-got:
		t.Fatal("acquired beyond the limit")
	case <-time.After(30 * time.Millisecond):
	}
	p.release(r, outOK, 0, nil)
	select {
	case <-got:
	case <-time.After(time.Minute): // a bound for a test that would hang, not a speed
		t.Fatal("waiter not woken by release")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.acquire(ctx); err == nil {
		t.Fatal("acquire beyond the limit did not give up with its context")
	}
}

// A burst of faults logs one back-off, with the count of the others in
// the next message, and the recovery once.
func TestBackoffLogIsRateLimited(t *testing.T) {
	p := testPool(1, 64)
	var logs []string
	p.opts.Logf = func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }
	r := p.replicas[0]
	r.base = "http://replica/v1"
	for range 100 {
		r.inflight++
		p.release(r, outReplica, 0, errors.New("connection refused"))
	}
	if len(logs) != 1 || !strings.Contains(logs[0], "backed off for 50ms: 3 consecutive faults: connection refused") {
		t.Fatalf("logs %q", logs)
	}
	for range 3 {
		r.inflight++
		p.release(r, outOK, 0, nil)
	}
	if len(logs) != 2 || !strings.Contains(logs[1], "recovered") {
		t.Fatalf("logs %q", logs)
	}
	r.lastLog = time.Time{}
	for range 3 {
		r.inflight++
		p.release(r, outReplica, 0, errors.New("reset"))
	}
	if len(logs) != 3 || !strings.Contains(logs[2], "(97 more back-off(s) since the last message)") {
		t.Fatalf("logs %q", logs)
	}
}
