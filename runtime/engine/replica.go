package engine

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// replica is one base URL serving a model.
type replica struct {
	base   string       // e.g. http://host:8000/v1 (credentials stripped)
	root   string       // base without the /v1 suffix, for /version
	client *http.Client // guardClient's
	key    string       // the bearer token (noAPIKey when the model has none)
	// answersAs are the names this replica may answer the served name
	// under (see checkModel); set once before the first request.
	answersAs map[string]bool

	// guarded by pool.mu
	inflight     int
	limit        float64 // adaptive concurrency limit (AIMD)
	maxLimit     float64
	lastCut      time.Time
	backoffUntil time.Time
	consecFail   int
	dead         error // set when preflight could not reach it; cleared on success
	// back-off messages (pool.release): the last logged, those not logged
	// since, whether one was logged since the last recovery
	lastLog   time.Time
	unlogged  int
	announced bool
}

// pool balances one model's requests over its replicas: least
// outstanding among those not backed off and under their limit.
type pool struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever a slot frees up
	replicas []*replica
	opts     *Options
	model    string // the experiment's name of the model, for messages
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
		var timer <-chan time.Time
		if !wake.IsZero() {
			timer = time.After(time.Until(wake))
		}
		select {
		case <-ch:
		case <-timer:
		case <-ctx.Done():
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

// backoffLogEvery is the least interval between two back-off messages of
// one replica; the back-offs in between are counted in the next message.
const backoffLogEvery = time.Second

// release returns the slot and updates the replica's health (AIMD limit,
// 429 pauses, back-off after three faults), logging back-offs and recovery.
func (p *pool) release(r *replica, o outcome, retryAfter time.Duration, reason error) {
	p.mu.Lock()
	r.inflight--
	now := time.Now()
	var msg string
	backedOff := func(d time.Duration, why string) {
		if now.Sub(r.lastLog) < backoffLogEvery {
			r.unlogged++
			return
		}
		msg = fmt.Sprintf("warning: model %q: replica %s backed off for %s: %s", p.model, r.base, d.Round(time.Millisecond), why)
		if reason != nil {
			msg += ": " + reason.Error()
		}
		if r.unlogged > 0 {
			msg += fmt.Sprintf(" (%d more back-off(s) since the last message)", r.unlogged)
		}
		r.lastLog, r.unlogged, r.announced = now, 0, true
	}
	switch o {
	case outOK:
		switch {
		case r.dead != nil:
			msg = fmt.Sprintf("model %q: replica %s recovered: it answers now (it was unreachable at start)", p.model, r.base)
		case r.announced:
			msg = fmt.Sprintf("model %q: replica %s recovered: it answers again", p.model, r.base)
		}
		r.announced = false
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
				backedOff(retryAfter, fmt.Sprintf("throttled (HTTP 429), as its Retry-After asks; concurrency limit now %d", int(r.limit)))
			}
		}
	case outReplica:
		r.consecFail++
		if r.consecFail >= 3 {
			d := min(p.opts.ReplicaBackoff<<min(r.consecFail-3, 6), p.opts.ReplicaBackoffMax)
			r.backoffUntil = now.Add(d)
			backedOff(d, fmt.Sprintf("%d consecutive faults", r.consecFail))
		}
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	if msg != "" {
		p.opts.Logf("%s", msg)
	}
}

// CheckEndpoint accepts an endpoint base URL: http or https, a host, and
// neither credentials (user:password@), a query string nor a fragment; the
// error for credentials says how to pass a key instead.
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

// aliases are the names a server answers served under: served, its root
// and every id listed with the same root; nil when models lacks served.
func aliases(served string, models []ServedModel) map[string]bool {
	i := slices.IndexFunc(models, func(m ServedModel) bool { return m.ID == served })
	if i < 0 {
		return nil
	}
	out := map[string]bool{served: true}
	if root := models[i].Root; root != "" {
		out[root] = true
		for _, o := range models {
			if o.Root == root {
				out[o.ID] = true
			}
		}
	}
	return out
}

// checkModel accepts a response's "model" field for a request that asked
// for served: served, an alias of it, or "" (else a wrongModelError).
func (r *replica) checkModel(served, got string) error {
	if got == "" || got == served || r.answersAs[got] {
		return nil
	}
	return &wrongModelError{asked: served, answered: got}
}

// wrongModelError is an answer from another model than the one asked.
type wrongModelError struct{ asked, answered string }

func (e *wrongModelError) Error() string {
	return fmt.Sprintf("asked %s, the server answered as %s; the answer is not kept (a gateway routing to the wrong model, or a server serving another one?)", e.asked, e.answered)
}
