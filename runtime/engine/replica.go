package engine

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
)

// replica is one base URL serving a model.
type replica struct {
	base   string // e.g. http://host:8000/v1 (credentials stripped)
	root   string // base without the /v1 suffix, for /tokenize and /version
	client openai.Client

	// guarded by pool.mu
	inflight     int
	limit        float64 // adaptive concurrency limit (AIMD)
	maxLimit     float64
	lastCut      time.Time
	backoffUntil time.Time
	consecFail   int
	dead         error // set when preflight could not reach it; cleared on success
}

// pool balances the requests of one model over its replicas:
// least outstanding requests among the replicas that are not backed off and
// below their concurrency limit.
type pool struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever a slot frees up
	replicas []*replica
	opts     *Options
}

func newPool(reps []*replica, opts *Options) *pool {
	return &pool{replicas: reps, changed: make(chan struct{}), opts: opts}
}

// acquire waits for a slot on the best replica.
func (p *pool) acquire(ctx context.Context) (*replica, error) {
	for {
		p.mu.Lock()
		now := time.Now()
		var best *replica
		var wake time.Time
		for _, r := range p.replicas {
			if now.Before(r.backoffUntil) {
				if wake.IsZero() || r.backoffUntil.Before(wake) {
					wake = r.backoffUntil
				}
				continue
			}
			if float64(r.inflight) >= math.Floor(r.limit) {
				continue
			}
			if best == nil || r.inflight < best.inflight {
				best = r
			}
		}
		if best != nil {
			best.inflight++
			p.mu.Unlock()
			return best, nil
		}
		ch := p.changed
		p.mu.Unlock()
		var t *time.Timer
		var timer <-chan time.Time
		if !wake.IsZero() {
			t = time.NewTimer(time.Until(wake))
			timer = t.C
		}
		select {
		case <-ch:
		case <-timer:
		case <-ctx.Done():
		}
		if t != nil {
			t.Stop()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// outcome of one attempt, for the replica's health and limit.
type outcome int

const (
	outOK        outcome = iota
	outThrottled         // 429: cut the limit, pause for Retry-After
	outReplica           // connection failure, 5xx, timeout: the replica is unwell
	outRequest           // the request itself was bad (4xx): replica is fine
)

// release returns the slot and updates the replica's health:
// success grows the limit by 1/limit (additive increase), a 429 halves it
// (at most once per 100 ms) and pauses the replica for retryAfter,
// three consecutive replica faults back it off exponentially.
func (p *pool) release(r *replica, o outcome, retryAfter time.Duration) {
	p.mu.Lock()
	r.inflight--
	now := time.Now()
	switch o {
	case outOK:
		r.consecFail = 0
		r.dead = nil
		if r.limit < r.maxLimit {
			r.limit = math.Min(r.maxLimit, r.limit+1/r.limit)
		}
	case outThrottled:
		if now.Sub(r.lastCut) > 100*time.Millisecond {
			r.limit = math.Max(1, r.limit/2)
			r.lastCut = now
		}
		if retryAfter > 0 {
			if until := now.Add(retryAfter); until.After(r.backoffUntil) {
				r.backoffUntil = until
			}
		}
	case outReplica:
		r.consecFail++
		if r.consecFail >= 3 {
			d := p.opts.ReplicaBackoff << min(r.consecFail-3, 6)
			if d > p.opts.ReplicaBackoffMax {
				d = p.opts.ReplicaBackoffMax
			}
			r.backoffUntil = now.Add(d)
		}
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// CheckEndpoint accepts an endpoint base URL: http or https, a host, and
// neither credentials (user:password@), a query string nor a fragment.
// Bhasha never writes credentials anywhere, so a URL that carries them
// would have to be sent without them (the user meant them to be sent) or
// written (they would leak into records and manifests): it is refused, and
// the message says how to pass a key instead.
func CheckEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("endpoint %q is not a URL: %v", sanitizeURL(raw), err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("endpoint %s is not an http(s) URL", sanitizeURL(raw))
	case u.Host == "":
		return fmt.Errorf("endpoint %s has no host", sanitizeURL(raw))
	case u.User != nil:
		return fmt.Errorf("endpoint %s carries credentials in the URL (user:password@); Bhasha sends an API key as a bearer token (vLLM --api-key): put it in an environment variable and name that variable with api_key_env", sanitizeURL(raw))
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("endpoint %s has a query string or fragment, which would not be sent; give the base URL ending in /v1", sanitizeURL(raw))
	}
	return nil
}

// sanitizeURL removes credentials and query strings from an endpoint URL so
// that it can be written to records, manifests and logs.
func sanitizeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	masked := u.User != nil
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	if masked { // say that there were credentials, never what they were
		return strings.Replace(u.String(), "://", "://***@", 1)
	}
	return u.String()
}
