package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bhashalab/bhasha/runtime/cache"
)

// ModelConfig describes one model of an experiment and where it is served.
type ModelConfig struct {
	// Name is the experiment's name for the model (Key.Model).
	Name string
	// ServedName is the model name the server knows (vLLM --served-model-name).
	ServedName string
	// Endpoints are base URLs ending in /v1: several replicas, or one gateway.
	Endpoints []string
	// APIKey is sent as a bearer token; it never appears in any output:
	// a server that echoes it has it replaced by Redacted. A key shorter
	// than MinAPIKeyLen is refused by New.
	APIKey string
	// APIKeyEnv names the variable APIKey came from, for messages (a
	// refused key is named by its variable, never by its value).
	APIKeyEnv string
	// Revision pins the weights' revision in the cache key (optional).
	Revision string
	// Root overrides the server's reported root in the cache identity; used
	// when no server is reachable (batch export/import). Optional.
	Root string
	// MaxConcurrency bounds in-flight requests per replica (default 64).
	MaxConcurrency int
}

// Options tune the engine. Zero values take the documented defaults.
type Options struct {
	AttemptTimeout    time.Duration // one HTTP attempt (default 120 s)
	RequestDeadline   time.Duration // all attempts of one request (default 15 min)
	MaxAttempts       int           // per request (default 8)
	RetryBase         time.Duration // first retry delay, doubled per attempt, jittered (default 250 ms)
	RetryMax          time.Duration // cap of the retry delay (default 20 s)
	ReplicaBackoff    time.Duration // pause of a replica after 3 consecutive faults (default 1 s)
	ReplicaBackoffMax time.Duration // cap of that pause (default 60 s)
	// Cache, when set, receives every successful answer; ReadCache makes
	// the engine answer from it without sending the request.
	Cache     *cache.Store
	ReadCache bool
	// HTTPClient overrides the transport (tests); by default a pooled one
	// that asks for no compression. Whichever it is, the engine follows no
	// redirect, refuses a Content-Encoding it did not ask for, and bounds
	// every response body (guardClient, responseBound).
	HTTPClient *http.Client
	// Logf receives warnings (unreachable replicas, replica back-offs and
	// recoveries, a concurrency clamped to the open-file limit, and the
	// like), one call at a time.
	Logf func(format string, args ...any)
}

func (o *Options) defaults() {
	o.AttemptTimeout = cmp.Or(max(o.AttemptTimeout, 0), 120*time.Second)
	o.RequestDeadline = cmp.Or(max(o.RequestDeadline, 0), 15*time.Minute)
	o.RetryBase = cmp.Or(max(o.RetryBase, 0), 250*time.Millisecond)
	o.RetryMax = cmp.Or(max(o.RetryMax, 0), 20*time.Second)
	o.ReplicaBackoff = cmp.Or(max(o.ReplicaBackoff, 0), time.Second)
	o.ReplicaBackoffMax = cmp.Or(max(o.ReplicaBackoffMax, 0), 60*time.Second)
	o.MaxAttempts = cmp.Or(max(o.MaxAttempts, 0), 8)
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	} else {
		// the caller's Logf is called by one goroutine at a time
		logf, mu := o.Logf, new(sync.Mutex)
		o.Logf = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			logf(format, args...)
		}
	}
	if o.HTTPClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 4096
		tr.MaxIdleConnsPerHost = 4096
		tr.DisableCompression = true
		o.HTTPClient = &http.Client{Transport: tr}
	}
}

// ServedModel is one entry of a server's /v1/models.
type ServedModel struct {
	ID          string `json:"id"`
	Root        string `json:"root"`
	OwnedBy     string `json:"owned_by"`
	MaxModelLen int    `json:"max_model_len"`
}

// ServerInfo is the provenance of one replica, for the run manifest.
type ServerInfo struct {
	Endpoint string        `json:"endpoint"`
	Models   []ServedModel `json:"models,omitempty"`
	Version  string        `json:"version,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// ModelInfo is the provenance of one model of the experiment.
type ModelInfo struct {
	Name           string       `json:"name"`
	ServedName     string       `json:"served_name"`
	Identity       Identity     `json:"identity"`
	MaxConcurrency int          `json:"max_concurrency"`
	Servers        []ServerInfo `json:"servers"`
}

type modelState struct {
	cfg       ModelConfig
	simulated bool    // the server's entry for the served name says it is a simulator
	key       *secret // cfg.APIKey, redacted from cached answers (nil: none)
	pool      *pool
	info      ModelInfo
}

// Engine runs requests. Create it with New (live) or NewOffline.
type Engine struct {
	opts        Options
	models      map[string]*modelState
	order       []string
	client      *http.Client  // opts.HTTPClient behind guardClient
	maxInflight int           // bound of the requests in flight over all models (0: none); see clampTo
	runID       uint64        // marks the cache entries this engine stores (never 0)
	unknown     *atomic.Int64 // answers of a simulator that did not know their item (SimHeader)
	// pending holds the cache entries (*[]byte) being put, by cache key,
	// so that a request asked again meanwhile is answered from them, and
	// the last len(recent.keys) committed (recent), so that one whose
	// cache lookup was made before they committed is too.
	pending sync.Map
	recent  struct {
		mu      sync.Mutex
		keys    [][32]byte
		entries []*[]byte
		next    int
		commits int64 // puts committed (or failed) so far
	}
}

// UnknownItems counts the answers Bhasha's simulator gave without knowing
// their item (it says so in SimHeader): a simulator started without the
// experiment's dataset answers "I don't know" to all of them.
func (e *Engine) UnknownItems() int64 { return e.unknown.Load() }

// New connects to every endpoint of every model: it reads /v1/models and
// /version of each replica, checks that the served name is there, and
// records the provenance. An unreachable replica is a warning while another
// replica of the model answers; no reachable replica, or a served name that
// no replica serves, is an error naming the URLs and the served models.
// An API key shorter than MinAPIKeyLen is an error before anything is
// sent.
//
// The requests in flight, over all models and replicas, are bounded by
// the process's open-file limit less a reserve (clampTo); when
// the models' concurrency is past it, Logf says so once.
func New(ctx context.Context, models []ModelConfig, opts Options) (*Engine, error) {
	e, err := newEngine(ctx, models, opts, true)
	if err != nil {
		return nil, err
	}
	if soft, ok := openFileLimit(); ok {
		e.clampTo(soft)
	}
	return e, nil
}

// NewOffline builds an engine that contacts no server: the cache identity
// comes from ModelConfig.Root (or the served name). Used to export and
// import batch files and to compute cache keys.
func NewOffline(models []ModelConfig, opts Options) (*Engine, error) {
	return newEngine(context.Background(), models, opts, false)
}

// newEngine connects every model (live: to its servers); its error joins
// every model's.
func newEngine(ctx context.Context, models []ModelConfig, opts Options, live bool) (*Engine, error) {
	opts.defaults()
	unknown := new(atomic.Int64)
	e := &Engine{opts: opts, models: make(map[string]*modelState), client: guardClient(opts.HTTPClient, unknown), runID: rand.Uint64() | 1, unknown: unknown}
	var errs []error
	for _, mc := range models {
		ms, err := e.connect(ctx, mc, live)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		e.models[mc.Name] = ms
		e.order = append(e.order, mc.Name)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return e, nil
}

// Models returns the provenance of every model, in configuration order.
func (e *Engine) Models() []ModelInfo {
	out := make([]ModelInfo, 0, len(e.order))
	for _, n := range e.order {
		out = append(out, e.models[n].info)
	}
	return out
}

// Prepared is a request with its body and cache key computed.
type Prepared struct {
	Body     []byte
	CacheKey [32]byte
	Served   string
}

// Prepare computes the body and cache key of r.
func (e *Engine) Prepare(r Request) (Prepared, error) {
	ms, ok := e.models[r.Key.Model]
	if !ok {
		return Prepared{}, fmt.Errorf("request %s: model %q is not in the experiment", r.Key, r.Key.Model)
	}
	body, err := r.Body(ms.cfg.ServedName)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Body: body, CacheKey: CacheKey(ms.info.Identity, r.Kind, body), Served: ms.cfg.ServedName}, nil
}

// Stats counts the records of a run so far. Cached counts the answers
// served from the cache, Duplicates those of them this engine itself
// cached earlier in the run (a request asked twice with the same body:
// answered once).
type Stats struct {
	Done, OK, Failed, Cached, Duplicates, Sent int
}

// Run executes every request of reqs and passes each Record to sink, from
// one goroutine. Requests run concurrently up to the models' limits; they
// are prepared and looked up in the cache ahead of the workers, a chunk
// as large as the workers (at most lookAhead) in one query, so that reqs
// is read that far ahead. An iteration error or a sink error stops the
// run and is returned; records already passed to sink stay valid.
func (e *Engine) Run(ctx context.Context, reqs iter.Seq2[Request, error], sink func(*Record) error) (Stats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := max(1, min(e.concurrency(), 8192))
	if e.maxInflight > 0 {
		workers = min(workers, e.maxInflight)
	}
	e.keepRecent(recentPerWorker * workers)
	in := make(chan *ahead, workers)
	out := make(chan *Record, workers)
	var genErr error
	go func() {
		defer close(in)
		// Requests go to the workers in chunks of up to workers, each
		// prepared and looked up in the cache in one query first.
		chunk := make([]ahead, 0, min(workers, lookAhead))
		send := func() bool {
			e.lookUp(chunk)
			for i := range chunk {
				select {
				case in <- &chunk[i]:
				case <-ctx.Done():
					return false
				}
			}
			chunk = make([]ahead, 0, cap(chunk))
			return true
		}
		for r, err := range reqs {
			if err != nil {
				genErr = err
				cancel()
				return
			}
			if chunk = append(chunk, ahead{r: r}); len(chunk) == cap(chunk) && !send() {
				return
			}
		}
		if len(chunk) > 0 {
			send()
		}
	}()
	// An answer to cache is put, then passed on, by a goroutine of its own.
	var wg sync.WaitGroup
	puts := make(chan struct{}, maxPendingPuts)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range in {
				rec, key, entry := e.process(ctx, a)
				switch {
				case rec == nil: // run cancelled
				case entry == nil:
					out <- rec
				default:
					puts <- struct{}{}
					wg.Add(1)
					go func() {
						defer wg.Done()
						e.put(rec, key, entry)
						<-puts
						out <- rec
					}()
				}
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	var st Stats
	var sinkErr error
	for rec := range out {
		if sinkErr != nil {
			continue // drain
		}
		if err := sink(rec); err != nil {
			sinkErr = err
			cancel()
			continue
		}
		st.Done++
		if rec.Status == StatusFailed {
			st.Failed++
		} else {
			st.OK++
		}
		if rec.Cached { // only an ok record is cached
			st.Cached++
		}
		if rec.duplicate {
			st.Duplicates++
		}
		if rec.Attempts > 0 {
			st.Sent++
		}
	}
	e.forgetRecent() // every put has returned: the cache has them
	return st, cmp.Or(sinkErr, genErr, ctx.Err())
}

// concurrency is the models' MaxConcurrency per replica, summed.
func (e *Engine) concurrency() int {
	n := 0
	for _, ms := range e.models {
		n += ms.cfg.MaxConcurrency * len(ms.pool.replicas)
	}
	return n
}

const (
	// maxPendingPuts bounds the answers of a Run being cached at once.
	maxPendingPuts = 4096
	// lookAhead bounds the requests Run prepares and looks up in the
	// cache in one query before its workers take them.
	lookAhead = 4096
	// recentPerWorker is how many of the last committed cache entries
	// e.pending keeps per worker. A request's lookup ahead is trusted
	// while fewer puts than that have committed since it was made (else
	// Get is asked again); at most two chunks stand before a request.
	recentPerWorker = 4
)

// ahead is a request as Run hands it to a worker: prepared, and looked
// up in the cache when the engine reads it.
type ahead struct {
	r      Request
	p      Prepared
	perr   error
	looked bool  // lookup holds the cache's answer (not when it could not be read)
	at     int64 // e.recent.commits when looked up
	lookup cache.Lookup
}

// lookUp prepares the requests of chunk and, when the engine reads the
// cache, looks their keys up in one query.
func (e *Engine) lookUp(chunk []ahead) {
	var keys [][32]byte
	for i := range chunk {
		a := &chunk[i]
		if a.p, a.perr = e.Prepare(a.r); a.perr == nil {
			keys = append(keys, a.p.CacheKey)
		}
	}
	c := e.opts.Cache
	if c == nil || !e.opts.ReadCache || len(keys) == 0 {
		return
	}
	e.recent.mu.Lock()
	at := e.recent.commits
	e.recent.mu.Unlock()
	found, err := c.GetMany(keys)
	if err != nil {
		return // each worker asks Get, which says why
	}
	j := 0
	for i := range chunk {
		if a := &chunk[i]; a.perr == nil {
			a.looked, a.at, a.lookup = true, at, found[j]
			j++
		}
	}
}

// lookup is the cache's answer for a: its lookup ahead, when no more puts
// have committed since than e.pending keeps, else Get's.
func (e *Engine) lookup(a *ahead) ([]byte, bool, error) {
	if a.looked {
		rc := &e.recent
		rc.mu.Lock()
		fresh := rc.commits-a.at < int64(len(rc.keys))
		rc.mu.Unlock()
		if fresh {
			return a.lookup.Value, a.lookup.Found, a.lookup.Err
		}
	}
	return e.opts.Cache.Get(a.p.CacheKey)
}

// keepRecent makes e.pending keep the last n committed entries (at least
// as many as it keeps already).
func (e *Engine) keepRecent(n int) {
	rc := &e.recent
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if n > len(rc.keys) {
		rc.keys = append(rc.keys, make([][32]byte, n-len(rc.keys))...)
		rc.entries = append(rc.entries, make([]*[]byte, n-len(rc.entries))...)
	}
}

// forgetRecent drops the recent committed entries from e.pending, so
// that a later Run reads them from the cache (where another writer may
// have replaced them).
func (e *Engine) forgetRecent() {
	rc := &e.recent
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, entry := range rc.entries {
		if entry != nil {
			e.pending.CompareAndDelete(rc.keys[i], entry)
			rc.entries[i] = nil
		}
	}
}

// process turns a into its record and, for an answer to cache, its key and
// entry (held in e.pending until put, and among the recent entries after);
// a nil record: the run was cancelled.
func (e *Engine) process(ctx context.Context, a *ahead) (*Record, [32]byte, *[]byte) {
	r, p, err := a.r, a.p, a.perr
	rec := &Record{Key: r.Key.String(), Fields: r.Key, Kind: r.Kind}
	if err != nil {
		rec.Status, rec.Error = StatusFailed, err.Error()
		return rec, p.CacheKey, nil
	}
	ms := e.models[r.Key.Model]
	id := ms.info.Identity
	rec.ServedModel = p.Served
	rec.CacheKey = HexKey(p.CacheKey)
	rec.Request, rec.RequestSHA256 = p.Body, RequestDigest(p.Body)
	rec.Identity, rec.Simulated = &id, ms.simulated
	c := e.opts.Cache
	if c != nil && e.opts.ReadCache {
		var v []byte
		ok := false
		if pv, pending := e.pending.Load(p.CacheKey); pending {
			v, ok = *pv.(*[]byte), true
		} else {
			v, ok, err = e.lookup(a)
		}
		var res Result
		var by uint64
		if ok {
			res, by, ok, err = decodeEntry(p.CacheKey, v)
		}
		if err != nil {
			e.opts.Logf("warning: %v (request will be sent)", err)
		}
		if ok {
			rec.Status, rec.Cached, rec.duplicate = StatusOK, true, by == e.runID
			// an entry stored under another key, or unredacted, may hold this key
			rec.SetResult(ms.key.result(res))
			return rec, p.CacheKey, nil
		}
	}
	res, att, err := ms.do(ctx, r, p.Body, &e.opts)
	rec.Attempts = att.n
	rec.Endpoint = att.endpoint
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil, p.CacheKey, nil
		}
		rec.Status, rec.Error = StatusFailed, err.Error()
		return rec, p.CacheKey, nil
	}
	rec.Status = StatusOK
	rec.LatencyMS = float64(att.latency.Microseconds()) / 1000
	rec.SetResult(res)
	if c == nil {
		return rec, p.CacheKey, nil
	}
	v, err := json.Marshal(cacheEntry{Result: res, Run: e.runID})
	if err != nil {
		e.opts.Logf("warning: caching %s: %v", rec.Key, err)
		return rec, p.CacheKey, nil
	}
	entry := &v
	e.pending.Store(p.CacheKey, entry)
	return rec, p.CacheKey, entry
}

// put commits the entry of rec's answer to the cache under key; e.pending
// keeps it among the recent ones, dropping the oldest of them.
func (e *Engine) put(rec *Record, key [32]byte, entry *[]byte) {
	if err := e.opts.Cache.Put(key, *entry); err != nil {
		e.opts.Logf("warning: caching %s: %v", rec.Key, err)
	}
	rc := &e.recent
	rc.mu.Lock()
	oldKey, old := rc.keys[rc.next], rc.entries[rc.next]
	rc.keys[rc.next], rc.entries[rc.next] = key, entry
	rc.next = (rc.next + 1) % len(rc.keys)
	rc.commits++
	rc.mu.Unlock()
	if old != nil {
		e.pending.CompareAndDelete(oldKey, old)
	}
}

// Cached returns the answer cached under key. An entry that does not
// decode, or is not a valid answer (Result.Valid: an empty text that was
// never checked to be a real empty answer), is reported as absent with an
// error saying why, so that the request is sent again.
func Cached(c *cache.Store, key [32]byte) (Result, bool, error) {
	v, ok, err := c.Get(key)
	if err != nil || !ok {
		return Result{}, false, err
	}
	res, _, ok, err := decodeEntry(key, v)
	return res, ok, err
}

// cacheEntry is what the cache holds of an answer: the Result, and the
// Engine.runID that stored it (telling this run's answers from earlier ones).
type cacheEntry struct {
	Result
	Run uint64 `json:"run,omitempty"`
}

// decodeEntry reads the cache entry v of key, with the run that stored it (0 when unknown).
func decodeEntry(key [32]byte, v []byte) (Result, uint64, bool, error) {
	var ce cacheEntry
	if err := json.Unmarshal(v, &ce); err != nil {
		return Result{}, 0, false, fmt.Errorf("cache entry %s does not decode: %w", HexKey(key), err)
	}
	if !ce.Result.Valid() {
		return Result{}, 0, false, fmt.Errorf("cache entry %s holds an empty answer that was never checked", HexKey(key))
	}
	return ce.Result, ce.Run, true, nil
}

// fileReserve is the number of descriptors of a soft open-file limit kept
// from the requests in flight: a quarter of it, at least 64, at most 256.
func fileReserve(soft uint64) uint64 {
	return min(max(soft/4, 64), 256)
}

// inflightAllowed is the number of requests that may be in flight under
// the soft open-file limit soft (at least 1).
func inflightAllowed(soft uint64) int {
	if soft <= fileReserve(soft)+1 {
		return 1
	}
	return int(min(soft-fileReserve(soft), 1<<30))
}

// clampTo bounds e.maxInflight by soft, the soft RLIMIT_NOFILE, and says so
// once through Logf when the models' concurrency is past it.
func (e *Engine) clampTo(soft uint64) {
	want := e.concurrency()
	allowed := inflightAllowed(soft)
	e.maxInflight = allowed
	if want > allowed {
		e.opts.Logf("warning: concurrency %d clamped to %d: the open-file limit is %d (ulimit -n), and %d descriptors are kept for files, the cache and logs; raise it with ulimit -n to run more requests at once",
			want, allowed, soft, fileReserve(soft))
	}
}
