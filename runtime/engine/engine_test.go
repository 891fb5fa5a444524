package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

const bundle = "../../testdata/indicklar/project_page_demo_hin_excerpt.json"

func questions(t testing.TB) *item.Set {
	t.Helper()
	qs, err := sim.LoadBundle(context.Background(), bundle)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// startSim serves a simulator loaded with the bundled facts; it stops with the test.
func startSim(t testing.TB, cfg sim.Config) string {
	t.Helper()
	if cfg.Facts == nil {
		cfg.Facts = sim.FactsOf(questions(t))
	}
	return simtest.Start(t, cfg)
}

var models = []string{"sim-tiny-1b", "sim-base-8b", "sim-large-70b"}

func modelConfigs(endpoints ...string) []engine.ModelConfig {
	var out []engine.ModelConfig
	for _, m := range models {
		out = append(out, engine.ModelConfig{Name: m, ServedName: m, Endpoints: endpoints, MaxConcurrency: 16})
	}
	return out
}

// requests asks every bundled question of every model, as chat and as completion.
func requests(t testing.TB) func(func(engine.Request, error) bool) {
	var qs []item.Variant
	var ids []string
	for _, it := range questions(t).Items {
		for _, v := range it.Variants {
			qs, ids = append(qs, v), append(ids, it.ID)
		}
	}
	return func(yield func(engine.Request, error) bool) {
		for i, q := range qs {
			for _, m := range models {
				for _, kind := range []engine.Kind{engine.Chat, engine.Completion} {
					r := engine.Request{
						Key:      engine.Key{Experiment: "t", Model: m, Item: ids[i], Language: q.Language, Form: string(q.Form), Strategy: string(kind)},
						Kind:     kind,
						Decoding: engine.Decoding{MaxTokens: 16},
					}
					if kind == engine.Chat {
						r.Messages = []engine.Message{{Role: "system", Content: "Answer the question with a short phrase only."}, {Role: "user", Content: q.Question}}
					} else {
						r.Prompt = "Question: " + q.Question + "\nAnswer:"
					}
					if !yield(r, nil) {
						return
					}
				}
			}
		}
	}
}

type outcome struct {
	status, response, finish string
	prompt, completion       int
}

func collect(t *testing.T, e *engine.Engine) (map[string]outcome, engine.Stats, []*engine.Record) {
	t.Helper()
	got := map[string]outcome{}
	var recs []*engine.Record
	st, err := e.Run(context.Background(), requests(t), func(r *engine.Record) error {
		if _, dup := got[r.Key]; dup {
			t.Errorf("two records for %s", r.Key)
		}
		got[r.Key] = outcome{r.Status, r.Response, r.FinishReason, r.PromptTokens, r.CompletionTokens}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, st, recs
}

// fastRetry are engine options whose retries and back-offs are short, so
// that a test of faults runs fast. An attempt is not cut short (a minute):
// on a loaded machine, under the race detector, a healthy answer may take
// long, and a test whose point is not an attempt's timeout must not fail
// for it. A test of timeouts sets its own AttemptTimeout.
func fastRetry() engine.Options {
	return engine.Options{AttemptTimeout: time.Minute, RetryBase: 5 * time.Millisecond, RetryMax: 80 * time.Millisecond,
		MaxAttempts: 40, ReplicaBackoff: 10 * time.Millisecond, ReplicaBackoffMax: 50 * time.Millisecond}
}

// With 20% of attempts failing in every way the simulator knows, the
// records equal those of a fault-free run, key for key.
func TestFaultsDoNotChangeRecords(t *testing.T) {
	clean := startSim(t, sim.Config{})
	// A hang ends after 500 ms with HTTP 504, whatever the machine's speed
	// (fastRetry cuts no attempt short; TestRequestDeadline tests that).
	faulty := startSim(t, sim.Config{FailRate: 0.2, RetryAfter: 30 * time.Millisecond, HangMax: 500 * time.Millisecond})
	e1, err := engine.New(context.Background(), modelConfigs(clean), fastRetry())
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := collect(t, e1)
	e2, err := engine.New(context.Background(), modelConfigs(faulty), fastRetry())
	if err != nil {
		t.Fatal(err)
	}
	got, st, recs := collect(t, e2)
	if len(want) != 72*len(models)*2 {
		t.Fatalf("fault-free run has %d records", len(want))
	}
	for k, w := range want {
		if w.status != engine.StatusOK {
			t.Errorf("fault-free %s: %s", k, w.status)
		}
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: with faults %+v, without %+v", k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("with faults %d records, without %d", len(got), len(want))
	}
	retried := 0
	for _, r := range recs {
		if r.Attempts > 1 {
			retried++
		}
	}
	// 432 requests at 20% faults: about 86 retried; far fewer means no faults happened.
	if retried < 40 {
		t.Errorf("only %d requests were retried; faults were not injected", retried)
	}
	if st.Failed != 0 {
		t.Errorf("%d failed", st.Failed)
	}
}

func TestDeadEndpoint(t *testing.T) {
	live := startSim(t, sim.Config{})
	dead := deadURL(t)
	t.Run("other replica carries on", func(t *testing.T) {
		var warnings []string
		o := fastRetry()
		o.Logf = func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
		e, err := engine.New(context.Background(), modelConfigs(dead, live), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) == 0 || !strings.Contains(warnings[0], dead) {
			t.Errorf("warnings %q do not name %s", warnings, dead)
		}
		got, st, recs := collect(t, e)
		if st.Failed != 0 || st.OK != len(got) {
			t.Errorf("stats %+v", st)
			for _, r := range recs {
				if r.Status != engine.StatusOK {
					t.Errorf("%s failed after %d attempts: %s", r.Key, r.Attempts, r.Error)
				}
			}
		}
	})
	t.Run("no replica", func(t *testing.T) {
		_, err := engine.New(context.Background(), modelConfigs(dead), fastRetry())
		if err == nil || !strings.Contains(err.Error(), dead) || !strings.Contains(err.Error(), "no endpoint is reachable") {
			t.Fatalf("error %v does not name %s", err, dead)
		}
	})
	t.Run("replica dies mid-run", func(t *testing.T) {
		// A replica that answers /v1/models and then resets every generation.
		bad := startSim(t, sim.Config{FailRate: 1, FailTypes: []string{sim.FaultReset}})
		e, err := engine.New(context.Background(), modelConfigs(bad, live), fastRetry())
		if err != nil {
			t.Fatal(err)
		}
		_, st, recs := collect(t, e)
		if st.Failed != 0 {
			t.Errorf("%d failed", st.Failed)
		}
		for _, r := range recs {
			if r.Endpoint != live {
				t.Fatalf("%s answered by %s", r.Key, r.Endpoint)
			}
		}
	})
}

func TestWrongModelName(t *testing.T) {
	url := startSim(t, sim.Config{})
	_, err := engine.New(context.Background(), []engine.ModelConfig{{Name: "x", ServedName: "llama-typo", Endpoints: []string{url}}}, fastRetry())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range append([]string{`"llama-typo"`, url}, models...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestBadRequestFailsAtOnce(t *testing.T) {
	url := startSim(t, sim.Config{})
	e, err := engine.New(context.Background(), modelConfigs(url), fastRetry())
	if err != nil {
		t.Fatal(err)
	}
	var recs []*engine.Record
	one := func(yield func(engine.Request, error) bool) {
		yield(engine.Request{Key: engine.Key{Experiment: "t", Model: models[0], Item: "long"}, Kind: engine.Chat,
			Messages: []engine.Message{{Role: "user", Content: "hi"}}, Decoding: engine.Decoding{MaxTokens: 1 << 20}}, nil)
	}
	st, err := e.Run(context.Background(), one, func(r *engine.Record) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Failed != 1 || len(recs) != 1 {
		t.Fatalf("stats %+v", st)
	}
	r := recs[0]
	if r.Status != engine.StatusFailed || r.Attempts != 1 || !strings.Contains(r.Error, "maximum context length") || r.Response != "" {
		t.Errorf("record %+v", r)
	}
}

// cachedEngine is an engine for the models at url that reads and writes a
// fresh cache (closed with the test), with fastRetry's options as o.
func cachedEngine(t *testing.T, url string, o engine.Options) (*engine.Engine, *cache.Store) {
	t.Helper()
	store, _, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	o.Cache, o.ReadCache = store, true
	e, err := engine.New(context.Background(), modelConfigs(url), o)
	if err != nil {
		t.Fatal(err)
	}
	return e, store
}

func TestCacheReplayAndModelSeparation(t *testing.T) {
	e, _ := cachedEngine(t, startSim(t, sim.Config{}), fastRetry())
	first, st1, recs := collect(t, e)
	if st1.Sent != len(first) || st1.Cached != 0 {
		t.Fatalf("first run %+v", st1)
	}
	// The same body to two models must not share a cache key.
	byKey := map[string]string{}
	for _, r := range recs {
		if prev, ok := byKey[r.CacheKey]; ok {
			t.Fatalf("%s and %s share cache key %s", prev, r.Key, r.CacheKey)
		}
		byKey[r.CacheKey] = r.Key
	}
	second, st2, _ := collect(t, e)
	if st2.Sent != 0 || st2.Cached != len(first) {
		t.Fatalf("second run %+v", st2)
	}
	for k, v := range first {
		if second[k] != v {
			t.Errorf("%s: cached %+v, live %+v", k, second[k], v)
		}
	}
}

// A server that never answers (each attempt hangs for a minute): each
// attempt times out, and the request fails at its overall deadline with a
// message that says so, long before the hang would have ended (the bound
// on the time taken leaves a loaded machine room).
func TestRequestDeadline(t *testing.T) {
	url := startSim(t, sim.Config{FailRate: 1, FailTypes: []string{sim.FaultTimeout}, HangMax: time.Minute})
	o := fastRetry()
	o.AttemptTimeout = 100 * time.Millisecond
	o.RequestDeadline = 1500 * time.Millisecond
	e, err := engine.New(context.Background(), modelConfigs(url), o)
	if err != nil {
		t.Fatal(err)
	}
	var rec *engine.Record
	start := time.Now()
	_, err = e.Run(context.Background(), func(yield func(engine.Request, error) bool) {
		yield(engine.Request{Key: engine.Key{Experiment: "t", Model: models[0], Item: "x"}, Kind: engine.Chat,
			Messages: []engine.Message{{Role: "user", Content: "hi"}}, Decoding: engine.Decoding{MaxTokens: 4}}, nil)
	}, func(r *engine.Record) error { rec = r; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("took %s with a 1.5 s deadline", el)
	}
	if rec.Status != engine.StatusFailed || !strings.Contains(rec.Error, "timed out") || rec.Attempts < 2 {
		t.Errorf("record %+v", rec)
	}
}

// A request asked again after its twin's answer was cached, but looked
// up in the cache while the twin was still in flight (Run prepares and
// looks requests up ahead of its workers), is answered from the twin's
// entry as a duplicate, not sent again.
func TestTwinAnsweredAfterItsLookup(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]int{}
	url := startSim(t, sim.Config{TTFT: 50 * time.Millisecond, OnRequest: func(_ string, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		sent[string(body)]++
	}})
	store, _, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	o := fastRetry()
	o.Cache, o.ReadCache = store, true
	e, err := engine.New(context.Background(), []engine.ModelConfig{{Name: "m", ServedName: models[0], Endpoints: []string{url}, MaxConcurrency: 1}}, o)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(item, question string) engine.Request {
		return engine.Request{Key: engine.Key{Experiment: "t", Model: "m", Item: item}, Kind: engine.Chat,
			Messages: []engine.Message{{Role: "user", Content: question}}, Decoding: engine.Decoding{MaxTokens: 8}}
	}
	// One at a time: the third is looked up while the first is in flight,
	// and taken once the first is cached and the second answered.
	reqs := []engine.Request{ask("a", "Capital of France?"), ask("b", "Capital of Spain?"), ask("c", "Capital of France?")}
	var recs []*engine.Record
	seq := func(yield func(engine.Request, error) bool) {
		for _, r := range reqs {
			if !yield(r, nil) {
				return
			}
		}
	}
	st, err := e.Run(context.Background(), seq, func(r *engine.Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Sent != 2 || st.Duplicates != 1 || len(recs) != 3 {
		t.Errorf("stats %+v, %d records; want 2 sent and 1 duplicate", st, len(recs))
	}
	for body, n := range sent {
		if n != 1 {
			t.Errorf("sent %d times: %s", n, body)
		}
	}
}
