package engine_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// echoKey is the API key of the echoing servers: '/', '+' and '=' are
// written otherwise by URL encoding, '/' may be by JSON.
const echoKey = "sk-Echo/Test+Key=0042"

// keyForms are the spellings of echoKey that must appear nowhere.
func keyForms() []string {
	return []string{echoKey, url.QueryEscape(echoKey), url.PathEscape(echoKey), strings.ReplaceAll(echoKey, "/", `\/`)}
}

// containsKey names the first spelling of echoKey in b, "" when none.
func containsKey(b []byte) string {
	for _, f := range keyForms() {
		if bytes.Contains(b, []byte(f)) {
			return f
		}
	}
	return ""
}

// jsonEscapeAll writes every byte of s as a JSON \u00XX escape.
func jsonEscapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

// echoCase is how an echoing server answers one chat request (the one
// whose user message is name), and what the engine must make of it.
type echoCase struct {
	name   string
	status int
	body   string // the response body; KEY stands for the key as the server received it
	ok     bool   // the record is ok (the marker is in its response) or failed (in its error)
}

var echoCases = []echoCase{
	{"401 OpenAI error object", 401, `{"error":{"message":"rejected credentials 'Bearer KEY'","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, false},
	{"500 plain text", 500, `rejected credentials 'Bearer KEY' (` + url.QueryEscape(echoKey) + `)`, false},
	{"500 older vLLM message", 500, `{"object":"error","message":"rejected credentials 'Bearer KEY'","type":"InternalServerError","code":500}`, false},
	{"200 with an error object", 200, `{"error":{"message":"invalid credentials Bearer KEY","type":"invalid_request_error","code":401}}`, false},
	{"200 not JSON", 200, `Bearer KEY is not allowed here`, false},
	{"200 answer with the key", 200, `{"model":"probe-model","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"the key is KEY","reasoning_content":"they sent Bearer KEY"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`, true},
	{"200 answer with the key escaped", 200, `{"model":"probe-model","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"escaped ` + jsonEscapeAll(echoKey) + ` and ` + strings.ReplaceAll(echoKey, "/", `\/`) + `"}}]}`, true},
	{"200 answer with the key URL-encoded", 200, `{"model":"probe-model","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"see /auth?key=` + url.QueryEscape(echoKey) + `"}}]}`, true},
}

// echoServer answers each chat request as the echoCase its user message
// names, echoing the bearer token it received; /v1/models and /version
// echo it too. It counts the requests it is sent.
func echoServer(t *testing.T, sent *atomic.Int64) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"probe-model","root":"/models/probe-7b","owned_by":"key `+key+`"}]}`)
			return
		case "/version":
			io.WriteString(w, `{"version":"0.0.1+`+key+`"}`)
			return
		}
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		for _, c := range echoCases {
			if len(req.Messages) > 0 && req.Messages[0].Content == c.name {
				w.WriteHeader(c.status)
				io.WriteString(w, strings.ReplaceAll(c.body, "KEY", key))
				return
			}
		}
		w.WriteHeader(http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func echoRequests(yield func(engine.Request, error) bool) {
	for _, c := range echoCases {
		r := engine.Request{Key: engine.Key{Experiment: "t", Model: "probe", Item: c.name}, Kind: engine.Chat,
			Decoding: engine.Decoding{MaxTokens: 8}, Messages: []engine.Message{{Role: "user", Content: c.name}}}
		if !yield(r, nil) {
			return
		}
	}
}

// A server that echoes the API key (in error bodies of every status, in
// answers, escaped or URL-encoded, in /v1/models and /version) has it
// replaced by engine.Redacted in every record, error, log line, cache
// entry and the models' provenance; an answer cached with the key (by an
// earlier version) is served without it. The request body, and so its
// digest, is what was sent.
func TestEchoedKeyIsRedacted(t *testing.T) {
	var sent atomic.Int64
	ep := echoServer(t, &sent)
	cdir := t.TempDir()
	store, _, err := cache.Open(cdir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var logMu sync.Mutex
	var logBuf bytes.Buffer
	o := engine.Options{AttemptTimeout: 5 * time.Second, RetryBase: time.Millisecond, RetryMax: time.Millisecond, MaxAttempts: 3,
		ReplicaBackoff: time.Millisecond, ReplicaBackoffMax: time.Millisecond, Cache: store, ReadCache: true,
		Logf: func(f string, a ...any) { logMu.Lock(); fmt.Fprintf(&logBuf, f+"\n", a...); logMu.Unlock() }}
	mc := []engine.ModelConfig{{Name: "probe", ServedName: "probe-model", Endpoints: []string{ep}, APIKey: echoKey, APIKeyEnv: "T_KEY", MaxConcurrency: 1}}
	e, err := engine.New(context.Background(), mc, o)
	if err != nil {
		t.Fatal(err)
	}
	run := func() map[string]*engine.Record {
		recs := map[string]*engine.Record{}
		if _, err := e.Run(context.Background(), echoRequests, func(r *engine.Record) error { recs[r.Fields.Item] = r; return nil }); err != nil {
			if f := containsKey([]byte(err.Error())); f != "" {
				t.Errorf("the run's error holds the key (%s)", f)
			}
			t.Fatal(err)
		}
		return recs
	}
	recs := run()
	for _, c := range echoCases {
		r := recs[c.name]
		if r == nil {
			t.Fatalf("%s: no record", c.name)
		}
		line, _ := json.Marshal(r)
		if f := containsKey(line); f != "" {
			t.Errorf("%s: the record holds the key (%s): %s", c.name, f, line)
		}
		where := r.Error
		if c.ok {
			where = r.Response
		}
		if (r.Status == engine.StatusOK) != c.ok || !strings.Contains(where, engine.Redacted) {
			t.Errorf("%s: status %s, error %q, response %q: want ok %v with %s in its %s", c.name, r.Status, r.Error, r.Response, c.ok, engine.Redacted, map[bool]string{true: "response", false: "error"}[c.ok])
		}
		if engine.RequestDigest(r.Request) != r.RequestSHA256 || !bytes.Contains(r.Request, []byte(c.name)) {
			t.Errorf("%s: request %s does not match its digest %s", c.name, r.Request, r.RequestSHA256)
		}
	}
	if r := recs["200 answer with the key"]; r.Reasoning != "they sent Bearer "+engine.Redacted {
		t.Errorf("reasoning %q", r.Reasoning)
	}
	logMu.Lock()
	logged := logBuf.String()
	logMu.Unlock()
	if f := containsKey([]byte(logged)); f != "" || !strings.Contains(logged, engine.Redacted) {
		t.Errorf("the log holds the key (%q) or no %s:\n%s", f, engine.Redacted, logged)
	}
	prov, _ := json.Marshal(e.Models())
	if f := containsKey(prov); f != "" || !strings.Contains(string(prov), "key "+engine.Redacted) || !strings.Contains(string(prov), "0.0.1+"+engine.Redacted) {
		t.Errorf("provenance holds the key (%q) or no %s: %s", f, engine.Redacted, prov)
	}

	// An entry cached with the key (as a version without redaction stored
	// it) is answered without it, and not sent again.
	ok := recs["200 answer with the key"]
	var ck [32]byte
	kb, _ := hex.DecodeString(ok.CacheKey)
	copy(ck[:], kb)
	if err := store.Put(ck, []byte(`{"text":"cached `+echoKey+`","reasoning":"r `+echoKey+`","finish_reason":"stop","logprobs":{"content":[{"token":"`+echoKey+`"}]}}`)); err != nil {
		t.Fatal(err)
	}
	before := sent.Load()
	recs = run()
	r := recs["200 answer with the key"]
	line, _ := json.Marshal(r)
	if !r.Cached || r.Response != "cached "+engine.Redacted || r.Reasoning != "r "+engine.Redacted || containsKey(line) != "" {
		t.Errorf("cached answer with the key: cached %v, %s", r.Cached, line)
	}
	if s := sent.Load() - before; s == 0 {
		t.Errorf("the failed requests were not sent again")
	}
	store.Close()
	// Every entry this engine stored is without the key; the database also
	// holds the entry put above, as a store of an earlier version would.
	b, err := os.ReadFile(filepath.Join(cdir, cache.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(echoKey)); n != 3 {
		t.Errorf("the cache holds the key %d times, want the 3 of the entry put by the test:\n%s", n, b)
	}
}

// A key shorter than engine.MinAPIKeyLen is refused before anything is
// sent, by its variable's name, never its value.
func TestShortKeyRefused(t *testing.T) {
	var sent atomic.Int64
	ep := echoServer(t, &sent)
	_, err := engine.New(context.Background(), []engine.ModelConfig{{Name: "probe", ServedName: "probe-model", Endpoints: []string{ep}, APIKey: "Q7Z", APIKeyEnv: "T_KEY"}}, engine.Options{})
	if err == nil || !strings.Contains(err.Error(), "$T_KEY") || strings.Contains(err.Error(), "Q7Z") {
		t.Errorf("error %v: want the key refused by its variable", err)
	}
	if _, err := engine.ListServed(context.Background(), ep, "Q7Z"); err == nil || strings.Contains(err.Error(), "Q7Z") {
		t.Errorf("ListServed: error %v", err)
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d request(s) sent with a refused key", n)
	}
}
