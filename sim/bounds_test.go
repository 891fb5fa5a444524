package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Invalid parameters get 400 in vLLM's error shape; a body over the limit
// gets 413; a prompt past the context gets 400 from /tokenize too.
func TestInvalidRequestsRefused(t *testing.T) {
	s := newTestServer(t, Config{MaxBodyBytes: 1 << 20})
	chat := func(extra string) string {
		return `{"model":"sim-tiny-1b","messages":[{"role":"user","content":"Which country is Bourvil a citizen of?"}]` + extra + `}`
	}
	completion := func(extra string) string {
		return `{"model":"sim-tiny-1b","prompt":"Q: Which country?\nA:"` + extra + `}`
	}
	cases := []struct {
		name, path, body string
		code             int
		msg              string
	}{
		{"negative max_tokens", "/v1/chat/completions", chat(`,"max_tokens":-5`), 400, "max_tokens must be at least 1, got -5."},
		{"zero max_tokens in chat", "/v1/chat/completions", chat(`,"max_tokens":0`), 400, "max_tokens must be at least 1, got 0."},
		{"negative max_completion_tokens", "/v1/chat/completions", chat(`,"max_completion_tokens":-1`), 400, "max_tokens must be at least 1"},
		{"negative temperature", "/v1/completions", completion(`,"max_tokens":4,"temperature":-1`), 400, "temperature must be non-negative, got -1."},
		{"top_p above 1", "/v1/completions", completion(`,"max_tokens":4,"top_p":1.5`), 400, "top_p must be in (0, 1], got 1.5."},
		{"negative logprobs", "/v1/completions", completion(`,"max_tokens":4,"logprobs":-2`), 400, "logprobs must be non-negative"},
		{"negative top_logprobs", "/v1/chat/completions", chat(`,"max_tokens":4,"logprobs":true,"top_logprobs":-1`), 400, "top_logprobs must be non-negative"},
		{"wrong type", "/v1/chat/completions", chat(`,"max_tokens":"many"`), 400, "invalid JSON body"},
		{"body over the limit", "/v1/chat/completions", chat(`,"pad":"` + strings.Repeat("x", 2<<20) + `"`), 413, "larger than 1048576 bytes"},
		{"tokenize over the limit", "/tokenize", `{"model":"sim-tiny-1b","prompt":"` + strings.Repeat("x", 2<<20) + `"}`, 413, "larger than"},
		{"tokenize past the context", "/tokenize", `{"model":"sim-tiny-1b","prompt":"` + strings.Repeat("x", 100<<10) + `"}`, 400, "maximum context length is 4096 tokens"},
		{"echo without generation", "/v1/completions", completion(`,"max_tokens":0,"echo":true,"logprobs":0`), 200, ""},
		{"valid", "/v1/chat/completions", chat(`,"max_tokens":8,"temperature":0,"top_p":1`), 200, ""},
	}
	for _, c := range cases {
		code, _, body := post(t, s, c.path, c.body)
		if code != c.code {
			t.Errorf("%s: %d %.200s", c.name, code, body)
			continue
		}
		if c.code == 200 {
			continue
		}
		var e apiError
		if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != c.code || e.Error.Type == "" || !strings.Contains(e.Error.Message, c.msg) {
			t.Errorf("%s: body %.300s", c.name, body)
		}
	}
}

// Connections that send their body slowly are closed after ReadTimeout;
// idle keep-alive connections after IdleTimeout.
func TestSlowBodiesAreCut(t *testing.T) {
	s := newTestServer(t, Config{ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, err := s.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/v1")
	const n = 200
	var wg sync.WaitGroup
	closed := make(chan time.Duration, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			start := time.Now()
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"model\":")
			buf := make([]byte, 4096)
			for {
				// Trickle a byte now and then; the server must not wait for ever.
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				if _, err := c.Read(buf); err != nil && !isTimeout(err) {
					closed <- time.Since(start)
					return
				}
				if time.Since(start) > 5*time.Second {
					closed <- time.Since(start)
					return
				}
				c.Write([]byte(" "))
			}
		}()
	}
	wg.Wait()
	close(closed)
	for d := range closed {
		if d > 2*time.Second {
			t.Fatalf("a slow-body connection stayed open %s (read timeout 300 ms)", d)
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// A simulator loaded with other facts reports another root, so its
// answers never share cache entries with this one's.
func TestRootNamesTheFacts(t *testing.T) {
	a := []Fact{{ID: "1", Language: "hin", Cues: []string{"Which country?"}, Answer: "France"}}
	b := []Fact{{ID: "1", Language: "hin", Cues: []string{"Which country?"}, Answer: "India"}}
	if Root("m", a) == Root("m", b) || Root("m", a) != Root("m", append([]Fact(nil), a...)) || Root("m", nil) == Root("m", a) {
		t.Errorf("roots %s %s %s", Root("m", a), Root("m", b), Root("m", nil))
	}
	s := newTestServer(t, Config{Facts: a})
	var models struct{ Data []struct{ ID, Root string } }
	json.Unmarshal(get(t, s, "/v1/models"), &models)
	if models.Data[0].Root != Root(models.Data[0].ID, a) || !strings.HasPrefix(models.Data[0].Root, "simulated/") {
		t.Errorf("served root %s", models.Data[0].Root)
	}
}
