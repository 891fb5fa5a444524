package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// BenchmarkPostOpenAIClient: the process's CPU time per request of the
// engine's send, and beside it, in the same run, of the OpenAI client
// library's Post, each making 20,000 chat requests from 256 goroutines
// through the same guarded client to an in-process server answering a
// fixed completion (the server's CPU time is counted in both). The ratio
// is send's time over the library's.
func BenchmarkPostOpenAIClient(b *testing.B) {
	const n, conc = 20000, 256
	answer := `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Paris"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":1}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = conc
	defer tr.CloseIdleConnections()
	rep := newReplica(srv.URL+"/v1", "", guardClient(&http.Client{Transport: tr}, nil), conc)
	lib := openai.NewClient(option.WithBaseURL(rep.base+"/"), option.WithMaxRetries(0), option.WithHTTPClient(rep.client), option.WithAPIKey(noAPIKey))
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"The capital of France is"}],"max_tokens":8,"temperature":0}`)
	ctx := context.WithValue(context.Background(), boundKey{}, responseBound(Request{Kind: Chat, Decoding: Decoding{MaxTokens: 8}}, len(body)))
	arm := func(post func(ctx context.Context) ([]byte, error)) float64 {
		var wg sync.WaitGroup
		c0 := cpuTime()
		for g := range conc {
			wg.Go(func() {
				for i := g; i < n; i += conc {
					if raw, err := post(ctx); err != nil || len(raw) != len(answer) {
						b.Error(err, len(raw))
						return
					}
				}
			})
		}
		wg.Wait()
		return float64((cpuTime() - c0).Microseconds()) / n
	}
	send := func(ctx context.Context) ([]byte, error) {
		return rep.send(ctx, http.MethodPost, rep.base+"/chat/completions", body, func(h http.Header) { h.Set(HeaderRole, "answer") })
	}
	library := func(ctx context.Context) ([]byte, error) {
		var raw []byte
		err := lib.Post(ctx, "chat/completions", body, &raw, option.WithHeader(HeaderRole, "answer"))
		return raw, err
	}
	arm(send) // warm the connections
	b.ResetTimer()
	for range b.N {
		s, l := arm(send), arm(library)
		b.ReportMetric(s, "send-cpu-µs/req")
		b.ReportMetric(l, "openai-go-cpu-µs/req")
		b.ReportMetric(s/l, "send/openai-go")
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
