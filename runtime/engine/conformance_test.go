//go:build conformance

package engine_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// startLLMD runs llm-d-inference-sim (an independent vLLM simulator) on a
// loopback port; LLMD_SIM names the binary (make conformance builds it).
func startLLMD(t *testing.T, extra ...string) string {
	t.Helper()
	bin := os.Getenv("LLMD_SIM")
	if bin == "" {
		t.Fatal("LLMD_SIM is not set; run make conformance")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	args := append([]string{"--port", fmt.Sprint(port), "--model", "conf-model", "--mode", "echo", "--max-num-seqs", "64", "--max-model-len", "4096"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 300 {
		if r, err := http.Get(base + "/v1/models"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return base + "/v1"
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("llm-d-inference-sim did not start")
	return ""
}

func confRequests(n int) func(func(engine.Request, error) bool) {
	return func(yield func(engine.Request, error) bool) {
		for i := range n {
			kind := engine.Chat
			r := engine.Request{Key: engine.Key{Experiment: "conf", Model: "m", Item: fmt.Sprint(i)}, Decoding: engine.Decoding{MaxTokens: 16}}
			if i%2 == 1 {
				kind = engine.Completion
				r.Prompt = fmt.Sprintf("Question %d: what is the capital of France?", i)
			} else {
				r.Messages = []engine.Message{{Role: "user", Content: fmt.Sprintf("Question %d: what is the capital of France?", i)}}
			}
			r.Kind = kind
			if !yield(r, nil) {
				return
			}
		}
	}
}

// statusTally is a RoundTripper that counts the HTTP status codes of the
// responses the engine receives, so a test can tell which faults the
// simulator actually injected.
type statusTally struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[int]int
}

func newStatusTally() *statusTally {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &statusTally{next: tr, n: map[int]int{}}
}

func (s *statusTally) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil {
		s.mu.Lock()
		s.n[resp.StatusCode]++
		s.mu.Unlock()
	}
	return resp, err
}

func (s *statusTally) count(code int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[code]
}

// runConf sends 200 requests to url; a non-nil tally sees every response.
func runConf(t *testing.T, url string, tally *statusTally) (map[string]*engine.Record, engine.Stats) {
	t.Helper()
	opts := engine.Options{RetryBase: 10 * time.Millisecond, RetryMax: 200 * time.Millisecond, MaxAttempts: 30, AttemptTimeout: 10 * time.Second}
	if tally != nil {
		opts.HTTPClient = &http.Client{Transport: tally}
	}
	e, err := engine.New(context.Background(), []engine.ModelConfig{{Name: "m", ServedName: "conf-model", Endpoints: []string{url}, MaxConcurrency: 32}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*engine.Record{}
	st, err := e.Run(context.Background(), confRequests(200), func(r *engine.Record) error {
		if got[r.Key] != nil {
			t.Errorf("two records for %s", r.Key)
		}
		got[r.Key] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 200 {
		t.Fatalf("%d records for 200 requests", len(got))
	}
	return got, st
}

// TestConformanceLLMD checks chat and completion requests, retries and
// failures against llm-d-inference-sim. TruthfulQA's continuation-logprob
// scoring (echo with max_tokens 0) is not checked here: vLLM accepts
// max_tokens 0, but llm-d-inference-sim v0.10.2 refuses it with HTTP 400
// ("Max completion tokens and max tokens should be positive",
// validateRequest in pkg/llm-d-inference-sim/helpers.go), so that scoring
// path can only be checked against a real vLLM.
func TestConformanceLLMD(t *testing.T) {
	clean, st := runConf(t, startLLMD(t), nil)
	if st.Failed != 0 {
		t.Fatalf("clean run: %+v", st)
	}
	for k, r := range clean {
		if r.Response == "" || r.PromptTokens == 0 || r.FinishReason == "" {
			t.Errorf("%s: %+v", k, r)
		}
	}
	t.Run("retryable faults", func(t *testing.T) {
		// v0.10.2 reads --failure-types as the space-separated values after
		// one flag, up to the next "--" argument (getParamValueFromArgs in
		// pkg/common/parser.go); a repeated flag is ignored, so both types
		// go after a single one.
		tally := newStatusTally()
		got, st := runConf(t, startLLMD(t, "--failure-injection-rate", "20", "--failure-types", "rate_limit", "server_error"), tally)
		if st.Failed != 0 {
			t.Errorf("%+v", st)
		}
		retried := 0
		for k, r := range got {
			if r.Attempts > 1 {
				retried++
			}
			if r.Response != clean[k].Response {
				t.Errorf("%s: %q with faults, %q without", k, r.Response, clean[k].Response)
			}
		}
		if retried == 0 {
			t.Error("no request was retried: faults not injected")
		}
		if n := tally.count(http.StatusTooManyRequests); n == 0 {
			t.Error("no 429 seen: rate_limit was never injected")
		}
		if n := tally.count(http.StatusServiceUnavailable); n == 0 {
			t.Error("no 503 seen: server_error was never injected")
		}
		t.Logf("injected: %d x 429, %d x 503", tally.count(http.StatusTooManyRequests), tally.count(http.StatusServiceUnavailable))
	})
	t.Run("every fault type", func(t *testing.T) {
		got, st := runConf(t, startLLMD(t, "--failure-injection-rate", "20"), nil)
		if st.Failed == 0 {
			t.Error("no request failed although non-retryable faults were injected")
		}
		for k, r := range got {
			switch r.Status {
			case engine.StatusOK:
				if r.Response != clean[k].Response {
					t.Errorf("%s: %q", k, r.Response)
				}
			case engine.StatusFailed:
				if !strings.Contains(r.Error, "HTTP 4") || r.Response != "" {
					t.Errorf("%s failed with %q", k, r.Error)
				}
			}
		}
	})
}
