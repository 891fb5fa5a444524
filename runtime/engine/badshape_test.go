package engine_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/sim"
)

// mangles are the 200 bodies that carry no answer, each as an edit of a
// real response object.
var mangles = map[string]func(resp map[string]any){
	"content null":    func(r map[string]any) { choice(r)["message"].(map[string]any)["content"] = nil },
	"content missing": func(r map[string]any) { delete(choice(r)["message"].(map[string]any), "content") },
	"text null":       func(r map[string]any) { choice(r)["text"] = nil },
	"text missing":    func(r map[string]any) { delete(choice(r), "text") },
	"choices [null]":  func(r map[string]any) { r["choices"] = []any{nil} },
	"error and choices": func(r map[string]any) {
		r["error"] = map[string]any{"message": "engine overloaded", "type": "InternalServerError", "code": 500}
	},
	"empty without finish reason": func(r map[string]any) {
		c := choice(r)
		if m, ok := c["message"].(map[string]any); ok {
			m["content"] = ""
		} else {
			c["text"] = ""
		}
		c["finish_reason"] = nil
	},
}

func choice(r map[string]any) map[string]any { return r["choices"].([]any)[0].(map[string]any) }

// mangler is a reverse proxy to a simulator that rewrites generation
// responses with mangle whenever bad(body) says so.
func mangler(t *testing.T, target string, bad func(reqBody []byte) bool, mangle func(map[string]any)) string {
	t.Helper()
	u, err := url.Parse(strings.TrimSuffix(target, "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		p := resp.Request.URL.Path
		if resp.StatusCode != 200 || !(strings.HasSuffix(p, "/chat/completions") || strings.HasSuffix(p, "/completions")) {
			return nil
		}
		reqBody, _ := resp.Request.Context().Value(bodyKey{}).([]byte)
		if !bad(reqBody) {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		mangle(obj)
		b, _ = json.Marshal(obj)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", itoa(len(b)))
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyKey{}, b)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

type bodyKey struct{}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// firstTimeOnly mangles the first response to each distinct request body.
func firstTimeOnly() func([]byte) bool {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(b []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if seen[string(b)] {
			return false
		}
		seen[string(b)] = true
		return true
	}
}

// A 200 that carries no answer is retried and never recorded or cached as
// an (empty) answer: with every first response mangled, the records equal
// a clean run's; with every response mangled, every request fails, the
// cache stays empty, and a later run against a healthy server answers all.
func TestBadShapesAreNeverAnswers(t *testing.T) {
	clean := startSim(t, sim.Config{})
	e0, err := engine.New(context.Background(), modelConfigs(clean), fastRetry())
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := collect(t, e0)
	for name, m := range mangles {
		t.Run(name, func(t *testing.T) {
			// Chat-only mangles leave completions alone and vice versa: the
			// proxy edits whatever shape the body has, so a missing field of
			// the other kind is a harmless no-op for that kind.
			safe := func(r map[string]any) {
				defer func() { _ = recover() }() // a kind the mangle does not apply to
				m(r)
			}
			e, _ := cachedEngine(t, mangler(t, clean, firstTimeOnly(), safe), fastRetry())
			got, st, recs := collect(t, e)
			if st.Failed != 0 {
				t.Errorf("%d failed", st.Failed)
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: got %+v, want %+v", k, got[k], w)
				}
			}
			retried := 0
			for _, r := range recs {
				if r.Attempts > 1 {
					retried++
				}
				if r.Response == "" {
					t.Errorf("%s: ok with an empty response", r.Key)
				}
			}
			if retried == 0 {
				t.Fatal("no request was retried: the mangle never applied")
			}

			// Always mangled: failures, nothing cached.
			o2 := fastRetry()
			o2.MaxAttempts = 2 // both meet the bad body (fastRetry cuts no attempt short)
			always := func([]byte) bool { return true }
			e2, store2 := cachedEngine(t, mangler(t, clean, always, safe), o2)
			_, _, recs2 := collect(t, e2)
			failed := 0
			for _, r := range recs2 {
				if r.Status == engine.StatusFailed {
					failed++
					if !strings.Contains(r.Error, "unparseable response body") {
						t.Errorf("%s: error %q does not say the response was bad", r.Key, r.Error)
					}
				} else if r.Response == "" {
					t.Errorf("%s: ok with an empty response", r.Key)
				}
			}
			if failed == 0 {
				t.Fatal("always-mangled server: nothing failed")
			}
			o2.Cache, o2.ReadCache = store2, true
			e3, err := engine.New(context.Background(), modelConfigs(clean), o2)
			if err != nil {
				t.Fatal(err)
			}
			healed, st3, _ := collect(t, e3)
			if st3.Failed != 0 || st3.Sent < failed {
				t.Errorf("healthy rerun: %+v, %d had failed", st3, failed)
			}
			for k, w := range want {
				if healed[k] != w {
					t.Errorf("healthy rerun %s: got %+v, want %+v", k, healed[k], w)
				}
			}
		})
	}
}

func TestParseResponseEmptyAndBadShapes(t *testing.T) {
	cases := []struct {
		name  string
		kind  engine.Kind
		body  string
		empty bool
		bad   bool
	}{
		{"real empty chat", engine.Chat, `{"choices":[{"message":{"content":""},"finish_reason":"stop"}],"usage":{"completion_tokens":0}}`, true, false},
		{"real empty at length", engine.Completion, `{"choices":[{"text":"","finish_reason":"length"}],"usage":{"completion_tokens":0}}`, true, false},
		{"content null", engine.Chat, `{"choices":[{"message":{"content":null},"finish_reason":"stop"}]}`, false, true},
		{"content missing", engine.Chat, `{"choices":[{"message":{"role":"assistant"},"finish_reason":"stop"}]}`, false, true},
		{"text null", engine.Completion, `{"choices":[{"text":null,"finish_reason":"stop"}]}`, false, true},
		{"text missing", engine.Completion, `{"choices":[{"finish_reason":"stop"}]}`, false, true},
		{"choices [null]", engine.Chat, `{"choices":[null]}`, false, true},
		{"error with choices", engine.Chat, `{"error":{"message":"x"},"choices":[{"message":{"content":"Paris"},"finish_reason":"stop"}]}`, false, true},
		{"empty, no finish reason", engine.Chat, `{"choices":[{"message":{"content":""},"finish_reason":null}]}`, false, true},
		{"refusal", engine.Chat, `{"choices":[{"message":{"content":null,"refusal":"I cannot"},"finish_reason":"stop"}]}`, false, false},
		{"tool calls", engine.Chat, `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"1"}]},"finish_reason":"tool_calls"}]}`, false, false},
		{"error null is fine", engine.Chat, `{"error":null,"choices":[{"message":{"content":"Paris"},"finish_reason":"stop"}]}`, false, false},
	}
	for _, c := range cases {
		r, err := engine.ParseResponse(c.kind, []byte(c.body))
		if (err != nil) != c.bad {
			t.Errorf("%s: err %v, want bad=%v", c.name, err, c.bad)
			continue
		}
		if err == nil && (r.Empty != c.empty || !r.Valid()) {
			t.Errorf("%s: %+v (want empty=%v, valid)", c.name, r, c.empty)
		}
	}
}

// Cache entries written before empty answers were checked (ok-empty from a
// null content) are not served: the request is sent again.
func TestUncheckedEmptyCacheEntryIsResent(t *testing.T) {
	e, store := cachedEngine(t, startSim(t, sim.Config{}), fastRetry())
	want, _, recs := collect(t, e)
	// Poison one entry as the old parser stored it.
	var key [32]byte
	b, _ := hex.DecodeString(recs[0].CacheKey)
	copy(key[:], b)
	if err := store.Put(key, []byte(`{"text":"","finish_reason":"stop","prompt_tokens":3,"completion_tokens":1}`)); err != nil {
		t.Fatal(err)
	}
	got, st, _ := collect(t, e)
	if st.Sent != 1 {
		t.Errorf("sent %d, want 1 (the poisoned entry)", st.Sent)
	}
	if got[recs[0].Key] != want[recs[0].Key] {
		t.Errorf("%s: %+v, want %+v", recs[0].Key, got[recs[0].Key], want[recs[0].Key])
	}
}
