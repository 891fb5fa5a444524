package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

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
	// APIKey is sent as a bearer token; it never appears in any output.
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
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.AttemptTimeout, 120*time.Second)
	def(&o.RequestDeadline, 15*time.Minute)
	def(&o.RetryBase, 250*time.Millisecond)
	def(&o.RetryMax, 20*time.Second)
	def(&o.ReplicaBackoff, time.Second)
	def(&o.ReplicaBackoffMax, 60*time.Second)
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	} else {
		// Requests log from many goroutines (back-offs, cache warnings);
		// the caller's Logf is called by one at a time.
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
	identity  Identity
	simulated bool // the server's entry for the served name says it is a simulator
	pool      *pool
	info      ModelInfo
}

// Engine runs requests. Create it with New (live) or NewOffline.
type Engine struct {
	opts   Options
	models map[string]*modelState
	order  []string
	client *http.Client // opts.HTTPClient behind guardClient
	// maxInflight bounds the requests in flight over all models (0: no
	// bound beyond the models' own); see clampToFileLimit.
	maxInflight int
	// runID marks the cache entries this engine stores (never 0).
	runID uint64
	// unknown counts the answers of a simulator that did not know their
	// item (SimHeader).
	unknown *atomic.Int64
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
//
// The requests in flight, over all models and replicas, are bounded by
// the process's open-file limit less a reserve (clampToFileLimit); when
// the models' concurrency is past it, Logf says so once.
func New(ctx context.Context, models []ModelConfig, opts Options) (*Engine, error) {
	opts.defaults()
	unknown := new(atomic.Int64)
	e := &Engine{opts: opts, models: make(map[string]*modelState), client: guardClient(opts.HTTPClient, unknown), runID: rand.Uint64() | 1, unknown: unknown}
	var errs []error
	for _, mc := range models {
		ms, err := e.connect(ctx, mc, true)
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
	e.clampToFileLimit()
	return e, nil
}

// NewOffline builds an engine that contacts no server: the cache identity
// comes from ModelConfig.Root (or the served name). Used to export and
// import batch files and to compute cache keys.
func NewOffline(models []ModelConfig, opts Options) (*Engine, error) {
	opts.defaults()
	unknown := new(atomic.Int64)
	e := &Engine{opts: opts, models: make(map[string]*modelState), client: guardClient(opts.HTTPClient, unknown), runID: rand.Uint64() | 1, unknown: unknown}
	for _, mc := range models {
		ms, err := e.connect(context.Background(), mc, false)
		if err != nil {
			return nil, err
		}
		e.models[mc.Name] = ms
		e.order = append(e.order, mc.Name)
	}
	return e, nil
}

func (e *Engine) connect(ctx context.Context, mc ModelConfig, live bool) (*modelState, error) {
	if mc.Name == "" || mc.ServedName == "" {
		return nil, fmt.Errorf("model %q: name and served name are required", mc.Name)
	}
	if len(mc.Endpoints) == 0 {
		return nil, fmt.Errorf("model %q: no endpoints (name them in the experiment or with --endpoint; from Go, a run without endpoints uses the simulator)", mc.Name)
	}
	if mc.MaxConcurrency <= 0 {
		mc.MaxConcurrency = 64
	}
	ms := &modelState{cfg: mc, info: ModelInfo{Name: mc.Name, ServedName: mc.ServedName, MaxConcurrency: mc.MaxConcurrency}}
	var reps []*replica
	for _, ep := range mc.Endpoints {
		if err := CheckEndpoint(ep); err != nil {
			return nil, fmt.Errorf("model %q: %w", mc.Name, err)
		}
		base := strings.TrimRight(sanitizeURL(ep), "/")
		r := &replica{
			base:     base,
			root:     strings.TrimSuffix(base, "/v1"),
			limit:    float64(mc.MaxConcurrency),
			maxLimit: float64(mc.MaxConcurrency),
		}
		copts := []option.RequestOption{
			option.WithBaseURL(base + "/"),
			option.WithMaxRetries(0), // the engine retries itself
			option.WithHTTPClient(e.client),
		}
		if mc.APIKey != "" {
			copts = append(copts, option.WithAPIKey(mc.APIKey))
		} else {
			copts = append(copts, option.WithAPIKey("EMPTY"))
		}
		r.client = openai.NewClient(copts...)
		reps = append(reps, r)
	}
	ms.pool = newPool(reps, &e.opts)
	ms.pool.model = mc.Name
	root := mc.Root
	if live {
		var unreachable []string
		var served []string
		found := false
		for _, r := range reps {
			si := ServerInfo{Endpoint: r.base}
			models, err := listModels(ctx, r)
			if code := statusOf(err); code == http.StatusUnauthorized || code == http.StatusForbidden {
				return nil, fmt.Errorf("model %q: %s answered HTTP %d: %s", mc.Name, r.base, code, keyRefused(mc))
			}
			if err != nil {
				si.Error = err.Error()
				r.dead = err
				r.backoffUntil = time.Now().Add(e.opts.ReplicaBackoffMax)
				unreachable = append(unreachable, fmt.Sprintf("%s: %v", r.base, err))
				ms.info.Servers = append(ms.info.Servers, si)
				continue
			}
			si.Models = models
			si.Version = serverVersion(ctx, r)
			r.answersAs = aliases(mc.ServedName, models)
			ms.info.Servers = append(ms.info.Servers, si)
			for _, m := range models {
				served = append(served, m.ID)
				if m.ID == mc.ServedName {
					found = true
					ms.simulated = ms.simulated || m.IsSimulated()
					if root == "" {
						root = m.Root
					}
				}
			}
		}
		if len(unreachable) == len(reps) {
			return nil, fmt.Errorf("model %q: no endpoint is reachable:\n  %s", mc.Name, strings.Join(unreachable, "\n  "))
		}
		if !found {
			slices.Sort(served)
			served = slices.Compact(served)
			return nil, fmt.Errorf("model %q: served name %q is not served at %s; served models: %s",
				mc.Name, mc.ServedName, strings.Join(bases(reps), ", "), strings.Join(served, ", "))
		}
		for _, u := range unreachable {
			e.opts.Logf("warning: model %q: endpoint unreachable, the other replicas carry on: %s", mc.Name, u)
		}
	}
	if root == "" {
		root = mc.ServedName
	}
	// A replica that listed no entry for the served name (unreachable at
	// start) answers under any name another replica listed for it.
	all := map[string]bool{mc.ServedName: true, root: true}
	for _, r := range reps {
		for n := range r.answersAs {
			all[n] = true
		}
	}
	for _, r := range reps {
		if r.answersAs == nil {
			r.answersAs = all
		}
	}
	ms.identity = Identity{ID: mc.ServedName, Root: root, Revision: mc.Revision}
	ms.info.Identity = ms.identity
	return ms, nil
}

// statusOf is the HTTP status of an API error, 0 for any other error.
func statusOf(err error) int {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}

// keyRefused says which key the server refused, naming its variable.
func keyRefused(mc ModelConfig) string {
	switch {
	case mc.APIKey == "":
		return "the server wants an API key and none was sent; put it in an environment variable and name it with api_key_env"
	case mc.APIKeyEnv != "":
		return fmt.Sprintf("the API key from $%s was refused", mc.APIKeyEnv)
	}
	return "the API key was refused"
}

// bases lists the sanitized base URLs of reps.
func bases(reps []*replica) []string {
	out := make([]string, len(reps))
	for i, r := range reps {
		out[i] = r.base
	}
	return out
}

func listModels(ctx context.Context, r *replica) ([]ServedModel, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var raw []byte
	if err := r.client.Get(ctx, "models", nil, &raw); err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	var out struct {
		Data []ServedModel `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("listing models: unparseable /v1/models body: %w", err)
	}
	return out.Data, nil
}

func serverVersion(ctx context.Context, r *replica) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var raw []byte
	if err := r.client.Get(ctx, "version", nil, &raw, option.WithBaseURL(r.root+"/")); err != nil {
		return ""
	}
	var v struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v.Version
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
	Request  Request
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
	return Prepared{Request: r, Body: body, CacheKey: CacheKey(ms.identity, r.Kind, body), Served: ms.cfg.ServedName}, nil
}

// Stats counts the records of a run so far. Cached counts the answers
// served from the cache, Duplicates those of them this engine itself
// cached earlier in the run (a request asked twice with the same body:
// answered once).
type Stats struct {
	Done, OK, Failed, Cached, Duplicates, Sent int
}

// Run executes every request of reqs and passes each Record to sink, from
// one goroutine. Requests run concurrently up to the models' limits. An
// iteration error or a sink error stops the run and is returned; records
// already passed to sink stay valid.
func (e *Engine) Run(ctx context.Context, reqs iter.Seq2[Request, error], sink func(*Record) error) (Stats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := 0
	for _, ms := range e.models {
		workers += ms.cfg.MaxConcurrency * len(ms.pool.replicas)
	}
	workers = max(1, min(workers, 8192))
	if e.maxInflight > 0 {
		workers = min(workers, e.maxInflight)
	}
	in := make(chan Request, workers)
	out := make(chan *Record, workers)
	var genErr error
	go func() {
		defer close(in)
		for r, err := range reqs {
			if err != nil {
				genErr = err
				cancel()
				return
			}
			select {
			case in <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range in {
				rec := e.process(ctx, r)
				if rec == nil { // run cancelled
					continue
				}
				out <- rec
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
		switch {
		case rec.Status == StatusFailed:
			st.Failed++
		case rec.Cached:
			st.OK++
			st.Cached++
			if rec.duplicate {
				st.Duplicates++
			}
		default:
			st.OK++
		}
		if rec.Attempts > 0 {
			st.Sent++
		}
	}
	switch {
	case sinkErr != nil:
		return st, sinkErr
	case genErr != nil:
		return st, genErr
	}
	return st, ctx.Err()
}

// process turns one request into its record; nil means the run was cancelled.
func (e *Engine) process(ctx context.Context, r Request) *Record {
	rec := &Record{Key: r.Key.String(), Fields: r.Key, Kind: r.Kind}
	p, err := e.Prepare(r)
	if err != nil {
		rec.Status, rec.Error = StatusFailed, err.Error()
		return rec
	}
	rec.ServedModel = p.Served
	rec.CacheKey = HexKey(p.CacheKey)
	rec.Request, rec.RequestSHA256 = p.Body, RequestDigest(p.Body)
	if ms := e.models[r.Key.Model]; ms != nil {
		id := ms.identity
		rec.Identity, rec.Simulated = &id, ms.simulated
	}
	c := e.opts.Cache
	if c != nil && e.opts.ReadCache {
		res, by, ok, err := cached(c, p.CacheKey)
		if err != nil {
			e.opts.Logf("warning: %v (request will be sent)", err)
		}
		if ok {
			rec.Status, rec.Cached, rec.duplicate = StatusOK, true, by == e.runID
			rec.SetResult(res)
			return rec
		}
	}
	res, att, err := e.models[r.Key.Model].do(ctx, r, p.Body, &e.opts)
	rec.Attempts = att.n
	rec.Endpoint = att.endpoint
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil
		}
		rec.Status, rec.Error = StatusFailed, err.Error()
		return rec
	}
	rec.Status = StatusOK
	rec.LatencyMS = float64(att.latency.Microseconds()) / 1000
	rec.SetResult(res)
	if c != nil {
		v, err := json.Marshal(cacheEntry{Result: res, Run: e.runID})
		if err == nil {
			err = c.Put(p.CacheKey, v)
		}
		if err != nil {
			e.opts.Logf("warning: caching %s: %v", rec.Key, err)
		}
	}
	return rec
}

// Cached returns the answer cached under key. An entry that does not
// decode, or is not a valid answer (Result.Valid: an empty text that was
// never checked to be a real empty answer), is reported as absent with an
// error saying why, so that the request is sent again.
func Cached(c *cache.Store, key [32]byte) (Result, bool, error) {
	res, _, ok, err := cached(c, key)
	return res, ok, err
}

// cacheEntry is what the cache holds of an answer: the Result, and the
// engine that stored it (Engine.runID), so that an answer cached earlier
// in the same run is told apart from one of an earlier run.
type cacheEntry struct {
	Result
	Run uint64 `json:"run,omitempty"`
}

// cached is Cached with the run that stored the entry (0 when unknown).
func cached(c *cache.Store, key [32]byte) (Result, uint64, bool, error) {
	v, ok, err := c.Get(key)
	if err != nil || !ok {
		return Result{}, 0, false, err
	}
	var ce cacheEntry
	if err := json.Unmarshal(v, &ce); err != nil {
		return Result{}, 0, false, fmt.Errorf("cache entry %s does not decode: %w", HexKey(key), err)
	}
	if !ce.Result.Valid() {
		return Result{}, 0, false, fmt.Errorf("cache entry %s holds an empty answer that was never checked", HexKey(key))
	}
	return ce.Result, ce.Run, true, nil
}

type attemptInfo struct {
	n        int
	endpoint string
	latency  time.Duration
}

// do sends body with retries: jittered exponential backoff on 408, 409,
// 429, 5xx, timeouts, connection errors, unparseable bodies and answers
// from another model than the one asked (wrongModelError: on another
// replica when one is healthy), honouring Retry-After; other 4xx,
// redirects, unrequested encodings and bodies over their bound fail at
// once (classify).
func (ms *modelState) do(ctx context.Context, r Request, body []byte, o *Options) (Result, attemptInfo, error) {
	var info attemptInfo
	ctx, cancel := context.WithTimeout(ctx, o.RequestDeadline)
	defer cancel()
	var errs []string
	for {
		rep, err := ms.pool.acquire(ctx)
		if err != nil {
			return Result{}, info, deadlineErr(err, info, errs)
		}
		info.n++
		info.endpoint = rep.base
		start := time.Now()
		res, err := attempt(ctx, rep, ms.cfg.ServedName, r, body, o.AttemptTimeout)
		if err == nil {
			info.latency = time.Since(start)
			ms.pool.release(rep, outOK, 0, nil)
			return res, info, nil
		}
		retry, oc, after := classify(err)
		ms.pool.release(rep, oc, after, err)
		if ctx.Err() != nil {
			return Result{}, info, deadlineErr(ctx.Err(), info, append(errs, err.Error()))
		}
		errs = append(errs, err.Error())
		if !retry || info.n >= o.MaxAttempts {
			return Result{}, info, fmt.Errorf("after %d attempt(s): %s", info.n, strings.Join(lastN(errs, 3), "; "))
		}
		d := backoff(info.n, o.RetryBase, o.RetryMax)
		if after > d {
			d = after
		}
		if err := sleepCtx(ctx, d); err != nil {
			return Result{}, info, deadlineErr(err, info, errs)
		}
	}
}

// sleepCtx waits d or until ctx is done, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func deadlineErr(err error, info attemptInfo, errs []string) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	msg := fmt.Sprintf("request deadline exceeded after %d attempt(s)", info.n)
	if len(errs) > 0 {
		msg += ": " + strings.Join(lastN(errs, 3), "; ")
	}
	return errors.New(msg)
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// backoff is min(max, base·2^(n-1)) scaled by a uniform factor in [0.5, 1).
func backoff(n int, base, maxD time.Duration) time.Duration {
	d := base << min(n-1, 20)
	if d > maxD || d <= 0 {
		d = maxD
	}
	return time.Duration(float64(d) * (0.5 + rand.Float64()/2))
}

// errBadBody marks a response that is not the JSON it should be.
var errBadBody = errors.New("unparseable response body")

type wireMessage struct {
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	Refusal          *string         `json:"refusal"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
}

type wireChoice struct {
	Text         *string         `json:"text"`
	Message      *wireMessage    `json:"message"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

type wireResponse struct {
	Model   string          `json:"model"`
	Choices []*wireChoice   `json:"choices"`
	Error   json.RawMessage `json:"error"`
	Usage   *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	PromptLogprobs json.RawMessage `json:"prompt_logprobs"`
}

// present reports whether a raw JSON value is there and not null, [] or {}.
func present(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "[]", "{}":
		return false
	}
	return true
}

// ParseResponse decodes a chat or completion response body. A body is an
// answer only when the server returned one:
//
//   - a body carrying an "error" object, no choices, or a null first choice
//     is a bad response;
//   - a chat message whose content is null or missing is a bad response
//     unless it carries tool calls or a refusal (kept in Result);
//   - a completion choice whose text is null or missing is a bad response;
//   - an empty text is an answer (Result.Empty) only when the server says
//     why generation ended (finish_reason "stop" or "length"); an empty
//     text without a finish reason is a bad response.
//
// Bad responses wrap errBadBody: the engine retries them and never caches
// them.
func ParseResponse(kind Kind, raw []byte) (Result, error) {
	res, _, err := parseResponse(kind, raw)
	return res, err
}

// parseResponse is ParseResponse, also returning the response's "model" field.
func parseResponse(kind Kind, raw []byte) (Result, string, error) {
	var w wireResponse
	if err := json.Unmarshal(raw, &w); err != nil {
		return Result{}, "", fmt.Errorf("%w: %v (body starts %q)", errBadBody, err, prefix(raw, 60))
	}
	if present(w.Error) {
		return Result{}, "", fmt.Errorf("%w: status 200 with an error object: %s", errBadBody, prefix(w.Error, 200))
	}
	if len(w.Choices) == 0 {
		return Result{}, "", fmt.Errorf("%w: no choices (body starts %q)", errBadBody, prefix(raw, 60))
	}
	c := w.Choices[0]
	if c == nil {
		return Result{}, "", fmt.Errorf("%w: choices[0] is null", errBadBody)
	}
	var res Result
	switch kind {
	case Chat:
		m := c.Message
		if m == nil {
			return Result{}, "", fmt.Errorf("%w: chat choice has no message", errBadBody)
		}
		if m.Refusal != nil && *m.Refusal != "" {
			res.Refusal = *m.Refusal
		}
		if present(m.ToolCalls) {
			res.ToolCalls = m.ToolCalls
		}
		switch {
		case m.Content != nil:
			res.Text = *m.Content
		case res.Refusal == "" && res.ToolCalls == nil:
			return Result{}, "", fmt.Errorf("%w: message.content is null or missing (no tool calls, no refusal)", errBadBody)
		}
		if m.ReasoningContent != nil {
			res.Reasoning = *m.ReasoningContent
		} else if m.Reasoning != nil {
			res.Reasoning = *m.Reasoning
		}
	default:
		if c.Text == nil {
			return Result{}, "", fmt.Errorf("%w: completion choice has no text (null or missing)", errBadBody)
		}
		res.Text = *c.Text
	}
	if c.FinishReason != nil {
		res.FinishReason = *c.FinishReason
	}
	if w.Usage != nil {
		res.PromptTokens = w.Usage.PromptTokens
		res.CompletionTokens = w.Usage.CompletionTokens
	}
	if res.Text == "" && res.Refusal == "" && res.ToolCalls == nil {
		if res.FinishReason != "stop" && res.FinishReason != "length" {
			return Result{}, "", fmt.Errorf("%w: empty text and finish_reason %q (want stop or length for an empty answer)", errBadBody, res.FinishReason)
		}
		res.Empty = true
	}
	if len(c.Logprobs) > 0 && string(c.Logprobs) != "null" {
		res.Logprobs = c.Logprobs
	}
	if len(w.PromptLogprobs) > 0 && string(w.PromptLogprobs) != "null" {
		res.PromptLogprobs = w.PromptLogprobs
	}
	return res, w.Model, nil
}

func prefix(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// Headers that tell a server (the simulator; vLLM ignores them) what a
// request is for. They are not part of the body, so not of the cache key.
const (
	HeaderRole     = "X-Bhasha-Role"     // Role.Name(): answer, translation, judge, choice
	HeaderStrategy = "X-Bhasha-Strategy" // Key.Strategy
)

// attempt sends body once to rep. The response body is bounded by what
// the request asks for (responseBound), and the answer must come from the
// model asked for (replica.checkModel).
func attempt(ctx context.Context, rep *replica, served string, r Request, body []byte, timeout time.Duration) (Result, error) {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var raw []byte
	opts := []option.RequestOption{option.WithHeader(HeaderRole, r.Key.Role.Name()), option.WithHeader(HeaderStrategy, r.Key.Strategy)}
	if len(r.Cues) > 0 {
		opts = append(opts, option.WithHeader(HeaderCue, CueHeader(r.Cues)))
	}
	err := rep.client.Post(withBound(actx, responseBound(body)), r.Kind.Path(), body, &raw, opts...)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return Result{}, fmt.Errorf("%s: attempt timed out after %s", rep.base, timeout)
		}
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			return Result{}, &httpError{base: rep.base, api: apiErr, msg: apiMessage(apiErr)}
		}
		if p := permanentCause(err); p != nil {
			// Without the client's wrapping ("Post URL: ...", which would
			// also carry a redirect's query string).
			return Result{}, fmt.Errorf("%s: %w", rep.base, p)
		}
		return Result{}, fmt.Errorf("%s: %w", rep.base, err)
	}
	res, model, err := parseResponse(r.Kind, raw)
	if err == nil {
		err = rep.checkModel(served, model)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", rep.base, err)
	}
	return res, nil
}

// httpError is an HTTP error status with the server's message.
type httpError struct {
	base string
	api  *openai.Error
	msg  string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.base, e.api.StatusCode, e.msg)
}

func (e *httpError) Unwrap() error { return e.api }

// apiMessage extracts the server's error message: OpenAI's and current
// vLLM's {"error": {"message"}}, older vLLM's top-level {"message"}, or the
// start of the body.
func apiMessage(e *openai.Error) string {
	if e.Message != "" {
		return e.Message
	}
	if e.Response == nil || e.Response.Body == nil {
		return http.StatusText(e.StatusCode)
	}
	b, _ := io.ReadAll(io.LimitReader(e.Response.Body, 4096))
	var top struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &top) == nil && top.Message != "" {
		return top.Message
	}
	if len(b) == 0 {
		return http.StatusText(e.StatusCode)
	}
	return prefix(b, 300)
}

// classify says whether an attempt error is worth retrying, what it says
// about the replica, and how long the server asked us to wait.
//
// Permanent, not retried, and no fault of the replica's health (they fail
// fast rather than back a replica off that every request would meet
// again): a redirect (never followed), a Content-Encoding or gzip body
// Bhasha did not ask for, a body over its bound (responseBound), and 4xx
// other than 408, 409 and 429. An answer from another model than the one
// asked (wrongModelError) is retried as a replica fault: a misrouting
// gateway may route the next attempt right, and a replica serving the
// wrong model is backed off so that the others carry the requests; the
// answer is never cached nor recorded ok.
func classify(err error) (retry bool, o outcome, after time.Duration) {
	if errors.Is(err, errPermanent) {
		return false, outRequest, 0
	}
	var wrong *wrongModelError
	if errors.As(err, &wrong) {
		return true, outReplica, 0
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		if apiErr.Response != nil {
			after = retryAfter(apiErr.Response.Header)
		}
		switch c := apiErr.StatusCode; {
		case c == http.StatusTooManyRequests:
			return true, outThrottled, after
		case c == http.StatusRequestTimeout || c >= 500:
			return true, outReplica, after
		case c == http.StatusConflict:
			return true, outRequest, after
		default:
			return false, outRequest, 0
		}
	}
	if errors.Is(err, errBadBody) {
		return true, outReplica, 0
	}
	var nerr net.Error
	if errors.As(err, &nerr) || strings.Contains(err.Error(), "timed out") {
		return true, outReplica, 0
	}
	// Connection resets, refused connections, EOFs: the replica's fault.
	return true, outReplica, 0
}

// retryAfter reads retry-after-ms (milliseconds) or Retry-After (seconds or
// an HTTP date), capped at two minutes.
func retryAfter(h http.Header) time.Duration {
	const maxWait = 2 * time.Minute
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	} else if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = time.Until(t)
		}
	}
	return min(max(d, 0), maxWait)
}

// ListServed asks the server at base (…/v1) which models it serves
// (GET /v1/models), with apiKey as the bearer token when not "". It is
// how a notebook pointed at a server by one variable learns what to ask
// (bhasha.EndpointFromEnv).
func ListServed(ctx context.Context, base, apiKey string) ([]ServedModel, error) {
	if err := CheckEndpoint(base); err != nil {
		return nil, err
	}
	if apiKey == "" {
		apiKey = "EMPTY"
	}
	b := strings.TrimRight(sanitizeURL(base), "/")
	r := &replica{base: b, client: openai.NewClient(option.WithBaseURL(b+"/"), option.WithMaxRetries(0), option.WithAPIKey(apiKey),
		option.WithHTTPClient(guardClient(nil, nil)))}
	ms, err := listModels(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b, err)
	}
	return ms, nil
}
