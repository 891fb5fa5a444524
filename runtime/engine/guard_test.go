package engine

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestResponseBound(t *testing.T) {
	req := func(kind Kind, d Decoding) (Request, int) {
		r := Request{Key: Key{Item: "q"}, Kind: kind, Messages: []Message{{Role: "user", Content: "hi"}}, Prompt: "hi", Decoding: d}
		body, err := r.Body("m")
		if err != nil {
			t.Fatal(err)
		}
		return r, len(body)
	}
	k := func(v int) *int { return &v }
	cases := []struct {
		name string
		kind Kind
		d    Decoding
		// limit is the bound for a body of n bytes
		limit func(n int64) int64
		what  string
	}{
		{"max_tokens 8", Chat, Decoding{MaxTokens: 8}, func(n int64) int64 { return ResponseFloor + 2*n + 8*BytesPerToken }, "max_tokens 8"},
		{"chat top_logprobs", Chat, Decoding{MaxTokens: 8, Logprobs: k(5)}, func(n int64) int64 { return ResponseFloor + 2*n + 8*(BytesPerToken+6*BytesPerLogprob) }, "max_tokens 8, top_logprobs 5"},
		{"completion logprobs", Completion, Decoding{MaxTokens: 8, Logprobs: k(2)}, func(n int64) int64 { return ResponseFloor + 2*n + 8*(BytesPerToken+3*BytesPerLogprob) }, "max_tokens 8, logprobs 2"},
		{"prompt_logprobs", Completion, Decoding{MaxTokens: 8, PromptLogprobs: k(1)}, func(n int64) int64 { return ResponseFloor + 2*n + 8*BytesPerToken + (n+4096)*BytesPerLogprob*2 }, "max_tokens 8, prompt_logprobs 1"},
		{"echo", Completion, Decoding{MaxTokens: 8, Echo: true}, func(n int64) int64 { return ResponseFloor + 2*n + (8+n+4096)*BytesPerToken }, "max_tokens 8, echo"},
		{"ceiling", Chat, Decoding{MaxTokens: 1048576}, func(int64) int64 { return MaxResponseBytes }, "max_tokens 1048576"},
		{"unset", Chat, Decoding{}, func(int64) int64 { return MaxResponseBytes }, "max_tokens unset"},
	}
	for _, c := range cases {
		r, n := req(c.kind, c.d)
		b := responseBound(r, n)
		if want := c.limit(int64(n)); b.limit != want || b.what != c.what {
			t.Errorf("%s: %d (%s), want %d (%s)", c.name, b.limit, b.what, want, c.what)
		}
		if b.limit > MaxResponseBytes || b.limit < ResponseFloor {
			t.Errorf("%s: %d outside [floor, ceiling]", c.name, b.limit)
		}
	}
	r, n := req(Chat, Decoding{MaxTokens: 8})
	if e := tooLarge(responseBound(r, n), 0).Error(); !strings.Contains(e, "exceeded") || !strings.Contains(e, "bytes for max_tokens 8") {
		t.Errorf("message %q", e)
	}
}

func TestInflightAllowed(t *testing.T) {
	cases := []struct {
		soft uint64
		want int
	}{{512, 384}, {1024, 768}, {256, 192}, {100, 36}, {60, 1}, {1 << 20, 1<<20 - 256}}
	for _, c := range cases {
		if got := inflightAllowed(c.soft); got != c.want {
			t.Errorf("ulimit -n %d: %d, want %d", c.soft, got, c.want)
		}
	}
}

func TestClampSaysSoOnce(t *testing.T) {
	var logs []string
	o := &Options{Logf: func(f string, a ...any) { logs = append(logs, f) }}
	o.defaults()
	e := &Engine{opts: *o, models: map[string]*modelState{
		"a": {cfg: ModelConfig{MaxConcurrency: 500}, pool: newPool(make([]*replica, 2), o)},
	}}
	e.clampTo(512)
	if e.maxInflight != 384 || len(logs) != 1 {
		t.Fatalf("maxInflight %d, %d messages", e.maxInflight, len(logs))
	}
	logs = nil
	e.clampTo(1 << 16)
	if len(logs) != 0 {
		t.Errorf("a limit above the concurrency logged %q", logs)
	}
}

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A request the engine sends leaves in one write, its headers and body
// together.
func TestRequestInOneWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	var writes atomic.Int64
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countingConn{c, &writes}, err
	}}
	defer tr.CloseIdleConnections()
	rep := newReplica(srv.URL+"/v1", "", guardClient(&http.Client{Transport: tr}, nil), 0)
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`)
	const n = 5
	for range n {
		if raw, err := rep.send(context.Background(), http.MethodPost, rep.base+"/chat/completions", body, nil); err != nil || string(raw) != `{"ok":true}` {
			t.Fatalf("%s, %v", raw, err)
		}
	}
	if got := writes.Load(); got != n {
		t.Errorf("%d requests took %d writes, want one each", n, got)
	}
}

// statusMessage finds the server's message in each shape of error body.
func TestStatusMessage(t *testing.T) {
	for _, c := range []struct {
		name, body, want string
	}{
		{"OpenAI error object", `{"error":{"message":"bad key","type":"invalid_request_error"}}`, "bad key"},
		{"error string", `{"error":"model not loaded"}`, "model not loaded"},
		{"vLLM top-level message", `{"object":"error","message":"too long","type":"BadRequestError","code":400}`, "too long"},
		{"error object without a message", `{"error":{"code":7},"message":"outer"}`, "outer"},
		{"plain text", "upstream connect error", "upstream connect error"},
		{"empty", " \n", "Service Unavailable"},
	} {
		if got := statusMessage(http.StatusServiceUnavailable, []byte(c.body)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
