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
	chat := func(extra string) []byte {
		return []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8,"temperature":0` + extra + `}`)
	}
	b8 := chat("")
	base := int64(ResponseFloor) + 2*int64(len(b8))
	prompt := int64(len(b8)) + 4096
	cases := []struct {
		name  string
		body  []byte
		limit int64
		what  string
	}{
		{"max_tokens 8", b8, base + 8*BytesPerToken, "max_tokens 8"},
		{"chat top_logprobs", chat(`,"logprobs":true,"top_logprobs":5`), base + 8*(BytesPerToken+6*BytesPerLogprob) + 2*int64(len(`,"logprobs":true,"top_logprobs":5`)), "max_tokens 8, top_logprobs 5"},
		{"completion logprobs", chat(`,"logprobs":2`), base + 8*(BytesPerToken+3*BytesPerLogprob) + 2*int64(len(`,"logprobs":2`)), "max_tokens 8, logprobs 2"},
		{"prompt_logprobs", chat(`,"prompt_logprobs":1`), base + 8*BytesPerToken + 2*int64(len(`,"prompt_logprobs":1`)) + (prompt+int64(len(`,"prompt_logprobs":1`)))*BytesPerLogprob*2, "max_tokens 8, prompt_logprobs 1"},
		{"n", chat(`,"n":3`), base + 3*8*BytesPerToken + 2*int64(len(`,"n":3`)), "max_tokens 8, n 3"},
		{"ceiling", []byte(`{"max_tokens":1048576}`), MaxResponseBytes, "max_tokens 1048576"},
		{"unset", []byte(`{"max_tokens":0}`), MaxResponseBytes, "max_tokens unset"},
	}
	for _, c := range cases {
		b := responseBound(c.body)
		if b.limit != c.limit || b.what != c.what {
			t.Errorf("%s: %d (%s), want %d (%s)", c.name, b.limit, b.what, c.limit, c.what)
		}
		if b.limit > MaxResponseBytes || b.limit < ResponseFloor {
			t.Errorf("%s: %d outside [floor, ceiling]", c.name, b.limit)
		}
	}
	if e := tooLarge(responseBound(b8), 0).Error(); !strings.Contains(e, "exceeded") || !strings.Contains(e, "bytes for max_tokens 8") {
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
