package sim

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// lockedLog collects what a server logs, safe for its handlers.
type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(p))
	return len(p), nil
}

func (l *lockedLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "")
}

// A request about an item the server does not know keeps its answer
// ("I don't know.", " unknown" for a completion), carries X-Bhasha-Sim:
// unknown-item and is counted; a known item's and a judge's requests carry
// no such header. The log says so once with what to do, then counts every
// UnknownLogEvery such requests.
func TestUnknownItems(t *testing.T) {
	chat := func(q string) string {
		return fmt.Sprintf(`{"model":"sim-large-70b","messages":[{"role":"user","content":%q}],"max_tokens":16}`, q)
	}
	cases := []struct {
		name    string
		path    string
		body    string
		header  []string
		unknown bool
		answer  string // what the body must contain
	}{
		{"known item", "/v1/chat/completions", chat("Which country is Bourvil a citizen of?"), nil, false, ""},
		{"unknown item", "/v1/chat/completions", chat("Who wrote the Tirukkural?"), nil, true, `"content":"I don't know."`},
		{"unknown completion", "/v1/completions", `{"model":"sim-base-8b","prompt":"Q: Who wrote the Tirukkural?\nA:","max_tokens":8}`, nil, true, `"text":" unknown"`},
		{"judge", "/v1/chat/completions", chat("Ground Truth: Valluvar\nGiven Answer: Valluvar"), []string{engine.HeaderRole, "judge"}, false, "is_correct"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log lockedLog
			s := newTestServer(t, Config{Log: &log})
			code, h, b := post(t, s, c.path, c.body, c.header...)
			if code != http.StatusOK || !strings.Contains(string(b), c.answer) {
				t.Fatalf("%d %s", code, b)
			}
			if got := h.Get(engine.SimHeader) == engine.SimUnknownItem; got != c.unknown {
				t.Errorf("%s: %q, want unknown %v", engine.SimHeader, h.Get(engine.SimHeader), c.unknown)
			}
			said := strings.Contains(log.text(), "the simulator does not know this item: its prompts match none of its 2 facts; start it with --config EXP (or --dataset)")
			if said != c.unknown {
				t.Errorf("log %q", log.text())
			}
			if st := s.Stats(); (st.Unknown == 1) != c.unknown {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestUnknownItemsCounted(t *testing.T) {
	var log lockedLog
	s := newTestServer(t, Config{Log: &log, UnknownLogEvery: 3})
	known := `{"model":"sim-tiny-1b","messages":[{"role":"user","content":"Which country is Bourvil a citizen of?"}],"max_tokens":8}`
	for i := range 7 {
		post(t, s, "/v1/chat/completions", known)
		post(t, s, "/v1/chat/completions", fmt.Sprintf(`{"model":"sim-tiny-1b","messages":[{"role":"user","content":"Question number %d?"}],"max_tokens":8}`, i))
	}
	log.mu.Lock()
	lines := append([]string(nil), log.lines...)
	log.mu.Unlock()
	if len(lines) != 3 || !strings.Contains(lines[0], "does not know this item") ||
		!strings.Contains(lines[1], "3 of 6 requests") || !strings.Contains(lines[2], "6 of 12 requests") {
		t.Errorf("log lines %q", lines)
	}
	for _, l := range lines {
		if strings.Count(l, "\n") != 1 || !strings.HasSuffix(l, "\n") {
			t.Errorf("not one line per write: %q", l)
		}
	}
	if st := s.Stats(); st.Asked != 14 || st.Unknown != 7 {
		t.Errorf("stats %+v", st)
	}
}

// Stats reports counters .
// Asked counts generation requests answered as items (not a judge's),
// Unknown those of them whose prompt matched none of the server's facts.
type Stats struct{ Success, Failed, Faults, Asked, Unknown int64 }

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{Success: s.success.Load(), Failed: s.failed.Load(), Faults: s.faults.Load(), Asked: s.asked.Load(), Unknown: s.unknown.Load()}
}
