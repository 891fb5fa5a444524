package engine_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/runtime/cache"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// probeModels is what the fake servers list: the model asked for, an
// alias of it (same root, as vLLM lists each --served-model-name) and an
// unrelated model.
var probeModels = []engine.ServedModel{
	{ID: "probe-model", Root: "/models/probe-7b"},
	{ID: "probe-alias", Root: "/models/probe-7b"},
	{ID: "other-model", Root: "/models/other-1b"},
}

// fakeServer serves /v1/models (probeModels) and answers every generation
// request with gen; it stops with the test.
func fakeServer(t testing.TB, gen http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/models":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": probeModels})
		case r.URL.Path == "/version":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"version":"fake"}`)
		default:
			gen(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// answer is a chat or completion response body from model (no "model"
// field when model is "") with text.
func answer(r *http.Request, model, text string) []byte {
	choice := map[string]any{"index": 0, "finish_reason": "stop", "text": text}
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		choice = map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}
	}
	resp := map[string]any{"id": "x", "object": "chat.completion", "choices": []any{choice}, "usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 1}}
	if model != "" {
		resp["model"] = model
	}
	b, _ := json.Marshal(resp)
	return b
}

func answering(model, text string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer(r, model, text))
	}
}

// probeRequests are one chat and one completion request to probe-model.
func probeRequests(maxTokens int) func(func(engine.Request, error) bool) {
	return func(yield func(engine.Request, error) bool) {
		for _, kind := range []engine.Kind{engine.Chat, engine.Completion} {
			r := engine.Request{Key: engine.Key{Experiment: "t", Model: "probe", Item: string(kind)}, Kind: kind,
				Decoding: engine.Decoding{MaxTokens: maxTokens}}
			if kind == engine.Chat {
				r.Messages = []engine.Message{{Role: "user", Content: "What is the capital of France?"}}
			} else {
				r.Prompt = "The capital of France is"
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// probeRun runs probeRequests against endpoints with o, through a fresh
// cache (returned) unless o has one, and returns the records.
func probeRun(t *testing.T, o engine.Options, maxTokens int, endpoints ...string) ([]*engine.Record, engine.Stats, *cache.Store) {
	t.Helper()
	if o.Cache == nil {
		store, _, err := cache.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		o.Cache, o.ReadCache = store, true
	}
	e, err := engine.New(context.Background(), []engine.ModelConfig{{Name: "probe", ServedName: "probe-model", Endpoints: endpoints, MaxConcurrency: 4}}, o)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*engine.Record
	st, err := e.Run(context.Background(), probeRequests(maxTokens), func(r *engine.Record) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records for 2 requests", len(recs))
	}
	return recs, st, o.Cache
}

// An answer whose "model" is not the model asked (nor one of the names the
// replica lists for it) is a failed attempt, retried, never cached and
// never an ok record; a healthy rerun sends the request again.
func TestAnswerFromAnotherModelIsNotKept(t *testing.T) {
	cases := []struct {
		answeredAs string
		ok         bool
	}{
		{"probe-model", true},
		{"probe-alias", true},      // another --served-model-name of the same weights
		{"/models/probe-7b", true}, // the root itself
		{"", true},                 // no "model" field: taken as the model asked
		{"evil-other-model", false},
		{"other-model", false}, // listed, but other weights
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q", c.answeredAs), func(t *testing.T) {
			o := fastRetry()
			o.MaxAttempts = 3
			recs, st, store := probeRun(t, o, 8, fakeServer(t, answering(c.answeredAs, "Paris")))
			for _, r := range recs {
				switch {
				case c.ok && (r.Status != engine.StatusOK || r.Response != "Paris"):
					t.Errorf("%s: %s %q (%s)", r.Key, r.Status, r.Response, r.Error)
				case !c.ok && (r.Status != engine.StatusFailed || r.Response != ""):
					t.Errorf("%s: %s %q, want failed", r.Key, r.Status, r.Response)
				case !c.ok && !strings.Contains(r.Error, "asked probe-model, the server answered as "+c.answeredAs):
					t.Errorf("%s: error %q does not name both models", r.Key, r.Error)
				case !c.ok && r.Attempts != o.MaxAttempts:
					t.Errorf("%s: %d attempts, want %d (retried)", r.Key, r.Attempts, o.MaxAttempts)
				}
			}
			if c.ok {
				return
			}
			if n := store.Len(); n != 0 {
				t.Fatalf("%d answers cached from the wrong model", n)
			}
			o.Cache, o.ReadCache = store, true
			recs, st, _ = probeRun(t, o, 8, fakeServer(t, answering("probe-model", "Paris")))
			if st.Sent != 2 || st.OK != 2 {
				t.Errorf("healthy rerun %+v", st)
			}
		})
	}
	t.Run("another replica answers", func(t *testing.T) {
		good := fakeServer(t, answering("probe-model", "Paris"))
		recs, st, _ := probeRun(t, fastRetry(), 8, fakeServer(t, answering("evil-other-model", "Lyon")), good)
		if st.OK != 2 {
			t.Fatalf("%+v", st)
		}
		for _, r := range recs {
			if r.Endpoint != good || r.Response != "Paris" {
				t.Errorf("%s: %q from %s", r.Key, r.Response, r.Endpoint)
			}
		}
	})
}

// A 50 MB answer to a max_tokens 8 request fails at once (not retried,
// not cached) with an error naming the bound; the run's records read back.
func TestResponseBodyIsBounded(t *testing.T) {
	huge := strings.Repeat("x", 50<<20)
	bodies := map[string][]byte{} // by path, made before the server answers
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		bodies[path] = answer(httptest.NewRequest("POST", path, nil), "probe-model", huge)
	}
	cases := []struct {
		name    string
		chunked bool
	}{{"Content-Length", false}, {"chunked", true}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				b := bodies[r.URL.Path]
				w.Header().Set("Content-Type", "application/json")
				if !c.chunked {
					w.Header().Set("Content-Length", fmt.Sprint(len(b)))
				}
				for len(b) > 0 {
					n := min(len(b), 1<<16)
					if _, err := w.Write(b[:n]); err != nil {
						return
					}
					w.(http.Flusher).Flush()
					b = b[n:]
				}
			})
			recs, st, store := probeRun(t, fastRetry(), 8, url)
			if st.Failed != 2 {
				t.Errorf("%+v", st)
			}
			for _, r := range recs {
				if r.Status != engine.StatusFailed || r.Attempts != 1 || !strings.Contains(r.Error, "bytes for max_tokens 8") || !strings.Contains(r.Error, "exceed") {
					t.Errorf("%s: %s after %d attempt(s): %q", r.Key, r.Status, r.Attempts, r.Error)
				}
			}
			if store.Len() != 0 {
				t.Error("an answer over the bound was cached")
			}
			dir := t.TempDir()
			w, err := records.Create(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := records.Read(dir, func(*engine.Record) error { return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("large answer within its bound", func(t *testing.T) {
		// 2 MiB of text for max_tokens 32768 is within 32768·128 bytes:
		// taken at the first attempt, however long reading it takes.
		recs, st, _ := probeRun(t, fastRetry(), 32768, fakeServer(t, answering("probe-model", strings.Repeat("y", 2<<20))))
		if st.OK != 2 {
			t.Errorf("%+v", st)
		}
		for _, r := range recs {
			if r.Status != engine.StatusOK || r.Attempts != 1 {
				t.Errorf("%s: %s after %d attempt(s): %q", r.Key, r.Status, r.Attempts, r.Error)
			}
		}
	})
}

// A body that never ends is cut at its bound, not by the attempt's
// timeout (the error says which): two such requests fail at their first
// attempt, having allocated a bounded amount of memory.
func TestEndlessBodyEndsAtItsBound(t *testing.T) {
	chunk := bytes.Repeat([]byte("z"), 32<<10)
	var sent atomic.Int64
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"probe-model","choices":[{"index":0,"text":"`)
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	o := fastRetry()
	o.AttemptTimeout, o.MaxAttempts = 20*time.Second, 2
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs, _, _ := probeRun(t, o, 8, url)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	for _, r := range recs {
		if r.Status != engine.StatusFailed || r.Attempts != 1 || !strings.Contains(r.Error, "exceeded") {
			t.Errorf("%s: %s after %d attempt(s): %q", r.Key, r.Status, r.Attempts, r.Error)
		}
	}
	if alloc > 64<<20 {
		t.Errorf("allocated %d MiB for two bounded bodies (the server sent %d MiB)", alloc>>20, sent.Load()>>20)
	}
}

// A record line the reader would refuse is never written: at the limit
// the record is kept as it is, one byte over it becomes a failed record
// without its answer, and the file reads back either way.
func TestWriterNeverWritesALineTheReaderRefuses(t *testing.T) {
	base := &engine.Record{Key: "t|m|long||||||", Kind: engine.Chat, Status: engine.StatusOK, Request: json.RawMessage(`{"model":"m","max_tokens":8}`)}
	write := func(r *engine.Record) (string, int64) {
		dir := t.TempDir()
		w, err := records.Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(dir + "/" + records.FileName)
		if err != nil {
			t.Fatal(err)
		}
		return dir, fi.Size()
	}
	_, empty := write(base)
	for _, over := range []int{0, 1} {
		r := *base
		r.Response = strings.Repeat("a", records.MaxRecordBytes-int(empty)+over)
		dir, size := write(&r)
		var got []*engine.Record
		if err := records.Read(dir, func(r *engine.Record) error { got = append(got, r); return nil }); err != nil {
			t.Fatalf("over %d: %v", over, err)
		}
		if len(got) != 1 {
			t.Fatalf("over %d: %d records", over, len(got))
		}
		g := got[0]
		switch over {
		case 0:
			if size != records.MaxRecordBytes || g.Status != engine.StatusOK || len(g.Response) != len(r.Response) {
				t.Errorf("at the limit: %d bytes, %s, %d response bytes", size, g.Status, len(g.Response))
			}
		default:
			if g.Status != engine.StatusFailed || g.Response != "" || g.Key != r.Key || !strings.Contains(g.Error, fmt.Sprintf("%d bytes", records.MaxRecordBytes+1)) {
				t.Errorf("one byte over: %s, %d response bytes, error %q", g.Status, len(g.Response), g.Error)
			}
			if r.Status != engine.StatusOK || r.Response == "" {
				t.Error("Write changed the caller's record")
			}
		}
	}
}

// Redirects and encodings Bhasha did not ask for fail at once, with an
// error that names them, and nothing reaches the redirect's target.
func TestRedirectAndGzipFailAtOnce(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Write(answer(r, "probe-model", "Paris"))
	}))
	t.Cleanup(other.Close)
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	cases := []struct {
		name string
		gen  http.HandlerFunc
		want string
	}{
		{"redirect to another origin", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/v1/x?token=secret", http.StatusTemporaryRedirect)
		}, "the server redirected (HTTP 307) to " + other.URL + "/v1/x; redirects are not followed"},
		{"redirect on the same origin", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/v1/elsewhere", http.StatusFound)
		}, "/v1/elsewhere; redirects are not followed"},
		{"Content-Encoding gzip", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz(answer(r, "probe-model", "Paris")))
		}, "the body is gzip-compressed (Content-Encoding: gzip), which Bhasha does not ask for"},
		{"gzip error status", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write(gz([]byte(`{"error":{"message":"busy"}}`)))
		}, "gzip-compressed (Content-Encoding: gzip)"},
		{"gzip bytes without a header", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(gz(answer(r, "probe-model", "Paris")))
		}, "the body is gzip-compressed (it starts with gzip's magic bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := fastRetry()
			o.MaxAttempts = 4
			recs, _, store := probeRun(t, o, 8, fakeServer(t, c.gen))
			for _, r := range recs {
				if r.Status != engine.StatusFailed || r.Attempts != 1 || !strings.Contains(r.Error, c.want) {
					t.Errorf("%s: %s after %d attempt(s): %q, want %q", r.Key, r.Status, r.Attempts, r.Error, c.want)
				}
				if strings.Contains(r.Error, "secret") {
					t.Errorf("%s: the error carries the redirect's query: %q", r.Key, r.Error)
				}
			}
			if store.Len() != 0 {
				t.Error("cached")
			}
		})
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the redirect's target", n)
	}
}

// Replica back-offs are logged with their reason and length, and so is
// the recovery.
func TestBackoffAndRecoveryAreLogged(t *testing.T) {
	// Down for its first six generation requests: of the two requests,
	// whatever the order of the releases, at least five faults are released
	// before the first answer, so the replica meets three consecutive
	// faults, however fast or slow the machine.
	var calls atomic.Int64
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 6 {
			http.Error(w, `{"error":{"message":"engine dead"}}`, http.StatusInternalServerError)
			return
		}
		answering("probe-model", "Paris")(w, r)
	})
	var mu sync.Mutex
	var logs []string
	o := fastRetry()
	o.Logf = func(f string, a ...any) { mu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); mu.Unlock() }
	_, st, _ := probeRun(t, o, 8, url)
	if st.OK != 2 {
		t.Fatalf("%+v", st)
	}
	all := strings.Join(logs, "\n")
	for _, want := range []string{"replica " + url + " backed off for ", " consecutive faults: ", "HTTP 500", "engine dead", "replica " + url + " recovered"} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %q:\n%s", want, all)
		}
	}
}

// Under ulimit -n 512, a run asked for 1000 requests at once completes,
// having said that it clamped its concurrency (the child process is this
// test binary, re-run under bash's ulimit).
func TestConcurrencyUnderOpenFileLimit(t *testing.T) {
	if url := os.Getenv("BHASHA_FDLIMIT_CHILD"); url != "" {
		fdLimitChild(t, url)
		return
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("needs ulimit -n")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	url := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		answering("probe-model", "Paris")(w, r)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", `ulimit -n 512 || exit 3; exec "$0" "$@"`,
		os.Args[0], "-test.run=^TestConcurrencyUnderOpenFileLimit$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "BHASHA_FDLIMIT_CHILD="+url)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		t.Skip("cannot set ulimit -n 512")
	}
	if err != nil || ctx.Err() != nil {
		t.Fatalf("child: %v (%v)\n%s", err, ctx.Err(), tail(out, 4000))
	}
	for _, want := range []string{"concurrency 1000 clamped to 384: the open-file limit is 512 (ulimit -n)", "3000 ok of 3000"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("child output lacks %q:\n%s", want, tail(out, 4000))
		}
	}
}

func fdLimitChild(t *testing.T, url string) {
	o := engine.Options{Logf: func(f string, a ...any) { fmt.Printf(f+"\n", a...) }}
	e, err := engine.New(context.Background(), []engine.ModelConfig{{Name: "probe", ServedName: "probe-model", Endpoints: []string{url}, MaxConcurrency: 1000}}, o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	reqs := func(yield func(engine.Request, error) bool) {
		for i := range n {
			if !yield(engine.Request{Key: engine.Key{Experiment: "t", Model: "probe", Item: fmt.Sprint(i)}, Kind: engine.Completion,
				Prompt: "The capital of France is", Decoding: engine.Decoding{MaxTokens: 4}}, nil) {
				return
			}
		}
	}
	st, err := e.Run(context.Background(), reqs, func(r *engine.Record) error {
		if r.Status != engine.StatusOK {
			t.Errorf("%s: %s", r.Key, r.Error)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%d ok of %d\n", st.OK, n)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
