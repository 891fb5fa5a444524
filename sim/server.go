// Package sim is a vLLM-compatible OpenAI server whose models are
// simulated: deterministic functions of the request that know the facts
// they are loaded with, answer them with an accuracy that depends on model
// size, language, script, prompt strategy and distractors, and say
// "simulated" wherever they name themselves. It injects faults (429 with
// Retry-After, 500, hangs, connection resets, garbage bodies), models
// latency and a bounded number of running requests with a waiting queue,
// and exposes vLLM's Prometheus metric names.
//
// What a request is for comes from outside its wording: the role from the
// X-Bhasha-Role header, the cues of its protocol (engine.Request.Cues)
// from X-Bhasha-Cue, the JSON shape of an answer from its
// structured_outputs schema. Within a prompt it reads only the question
// (a known fact's cue), a "Candidates:" line, a multiple-choice prompt's
// last "A: " and a judge prompt's gold and answer lines. A request
// without headers is answered as a plain question.
//
// A prompt that matches none of the loaded facts is answered "I don't
// know." (" unknown" for a completion) with the response header
// X-Bhasha-Sim: unknown-item (engine.SimHeader, engine.SimUnknownItem);
// Config.Log is told so once, then with a count every
// Config.UnknownLogEvery such requests.
package sim

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// Version is what /version reports.
const Version = "bhasha-sim 0.2 (simulated vLLM OpenAI API)"

// Behaviour versions the simulated models' answers. It is part of each
// model's root, so cached answers of an older simulator are never served
// as a newer one's: bump it whenever answers change.
const Behaviour = "b3"

// Root is what /v1/models reports as a simulated model's root, the
// weights part of the cache identity: the model id, the behaviour version
// and a digest of the facts the server was loaded with, so that answers
// cached from a simulator that knew other facts (another --dataset or
// --facts) are never served as this one's.
func Root(id string, facts []Fact) string { return rootOf(id, factsDigest(facts)) }

// factsDigest is the first 6 bytes, in hex, of the SHA-256 of facts as JSON Lines.
func factsDigest(facts []Fact) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, f := range facts {
		enc.Encode(f)
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:6])
}

func rootOf(id, digest string) string {
	return fmt.Sprintf("simulated/%s@%s/facts-%s", id, Behaviour, digest)
}

// DefaultUnknownLogEvery is how many requests for unknown items go by
// between two counts on Config.Log, unless told otherwise.
const DefaultUnknownLogEvery = 1000

// Fault kinds for injection.
const (
	Fault429     = "429"
	Fault500     = "500"
	FaultTimeout = "timeout"
	FaultReset   = "reset"
	FaultGarbage = "garbage"
)

// AllFaults lists every fault kind.
var AllFaults = []string{Fault429, Fault500, FaultTimeout, FaultReset, FaultGarbage}

// Config configures a Server. Zero values mean: default models, no latency,
// unbounded concurrency, no faults.
type Config struct {
	Models         []ModelSpec
	Facts          []Fact
	TTFT           time.Duration // time to first token
	PerToken       time.Duration // per generated token
	MaxConcurrency int           // running requests; the rest wait in a queue (0: unbounded)
	FailRate       float64       // probability that an attempt gets a fault
	FailTypes      []string      // fault kinds drawn uniformly (default: all)
	RetryAfter     time.Duration // sent with 429s (default 1 s)
	HangMax        time.Duration // how long a "timeout" fault hangs at most (default 10 min)
	// APIKey, if set, is required as "Authorization: Bearer KEY" on /v1
	// routes (vLLM's --api-key); other requests get 401.
	APIKey string
	// OnRequest, if set, sees every generation request body before faults.
	OnRequest func(path string, body []byte)
	// MaxBodyBytes bounds a request body (default 8 MiB); a larger one
	// gets 413 in vLLM's error shape.
	MaxBodyBytes int64
	// ReadTimeout bounds the time to read a whole request, headers and
	// body (default 10 s); IdleTimeout closes idle keep-alive connections
	// (default 5 s, vLLM's keep-alive timeout).
	ReadTimeout, IdleTimeout time.Duration
	// Log, if set, is told when the server is asked about items it does
	// not know (see engine.SimHeader): once, with what to do about it, and then
	// with a count every UnknownLogEvery such requests (default
	// DefaultUnknownLogEvery). Each message is one Write of one line.
	Log             io.Writer
	UnknownLogEvery int
}

// Server serves the simulated models. Create with New.
type Server struct {
	cfg    Config
	models map[string]ModelSpec
	kb     *Knowledge
	digest string // factsDigest(cfg.Facts), for Root
	tok    Tokenizer
	sem    chan struct{}

	running, waiting        atomic.Int64
	success, failed, faults atomic.Int64
	asked, unknown          atomic.Int64 // generation requests answered as an item, and of them, unknown ones
	promptToks, genToks     atomic.Int64
	faultCounts             [5]atomic.Int64
	mux                     *http.ServeMux
}

// New builds a server.
func New(cfg Config) (*Server, error) {
	if len(cfg.Models) == 0 {
		cfg.Models = DefaultModels()
	}
	if len(cfg.FailTypes) == 0 {
		cfg.FailTypes = AllFaults
	}
	for _, f := range cfg.FailTypes {
		if slices.Index(AllFaults, f) < 0 {
			return nil, fmt.Errorf("unknown fault type %q (want one of %s)", f, strings.Join(AllFaults, ", "))
		}
	}
	if cfg.FailRate < 0 || cfg.FailRate > 1 {
		return nil, fmt.Errorf("fail rate %g is outside [0, 1]", cfg.FailRate)
	}
	cfg.RetryAfter = cmp.Or(max(cfg.RetryAfter, 0), time.Second)
	cfg.HangMax = cmp.Or(max(cfg.HangMax, 0), 10*time.Minute)
	cfg.MaxBodyBytes = cmp.Or(max(cfg.MaxBodyBytes, 0), 8<<20)
	cfg.ReadTimeout = cmp.Or(max(cfg.ReadTimeout, 0), 10*time.Second)
	cfg.IdleTimeout = cmp.Or(max(cfg.IdleTimeout, 0), 5*time.Second)
	cfg.UnknownLogEvery = cmp.Or(max(cfg.UnknownLogEvery, 0), DefaultUnknownLogEvery)
	s := &Server{cfg: cfg, models: map[string]ModelSpec{}, digest: factsDigest(cfg.Facts)}
	for _, m := range cfg.Models {
		m.MaxModelLen = cmp.Or(m.MaxModelLen, 4096)
		s.models[m.ID] = m
	}
	if len(cfg.Facts) > 0 {
		s.kb = NewKnowledge(cfg.Facts)
	}
	if cfg.MaxConcurrency > 0 {
		s.sem = make(chan struct{}, cfg.MaxConcurrency)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.generate)
	mux.HandleFunc("POST /v1/completions", s.generate)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("POST /tokenize", s.tokenize)
	mux.HandleFunc("POST /detokenize", s.detokenize)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": Version})
	})
	mux.HandleFunc("GET /metrics", s.metrics)
	s.mux = mux
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.APIKey != "" && strings.HasPrefix(r.URL.Path, "/v1/") && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
		writeErr(w, http.StatusUnauthorized, "AuthenticationError", "Unauthorized")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	s.mux.ServeHTTP(w, r)
}

// Start listens on addr (use 127.0.0.1:0 for a free port) and serves until
// ctx ends. It returns the base URL (ending in /v1).
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("simulator listening on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: min(10*time.Second, s.cfg.ReadTimeout),
		ReadTimeout: s.cfg.ReadTimeout, IdleTimeout: s.cfg.IdleTimeout}
	context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		hs.Close()
	})
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/v1", nil
}

// apiError is vLLM's error body: {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    int    `json:"code"`
	} `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// readBody reads a request body within Config.MaxBodyBytes and, unless v
// is nil, decodes its JSON into v, answering 413 (too large) or 400
// (unreadable, not JSON) itself when it cannot.
func readBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeErr(w, http.StatusRequestEntityTooLarge, "BadRequestError", fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit))
		return nil, false
	case err != nil:
		writeErr(w, http.StatusBadRequest, "BadRequestError", "reading body: "+err.Error())
		return nil, false
	case v != nil:
		if err := json.Unmarshal(body, v); err != nil {
			writeErr(w, http.StatusBadRequest, "BadRequestError", "invalid JSON body: "+err.Error())
			return nil, false
		}
	}
	return body, true
}

// model is the served model named id, answering 404 itself when there is none.
func (s *Server) model(w http.ResponseWriter, id string) (ModelSpec, bool) {
	m, ok := s.models[id]
	if !ok {
		writeErr(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", id))
	}
	return m, ok
}

func writeErr(w http.ResponseWriter, code int, typ, msg string) {
	var e apiError
	e.Error.Message, e.Error.Type, e.Error.Code = msg, typ, code
	writeJSON(w, code, e)
}

type genRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Prompt         any      `json:"prompt"`
	MaxTokens      *int     `json:"max_tokens"`
	MaxCompletion  *int     `json:"max_completion_tokens"`
	Stop           any      `json:"stop"`
	Logprobs       any      `json:"logprobs"`
	TopLogprobs    *int     `json:"top_logprobs"`
	Echo           bool     `json:"echo"`
	PromptLogprobs *int     `json:"prompt_logprobs"`
	Temperature    *float64 `json:"temperature"`
	TopP           *float64 `json:"top_p"`
	Seed           *int64   `json:"seed"`
	// StructuredOutputs is vLLM's {"json": schema}: the answer's fields.
	StructuredOutputs struct {
		JSON struct {
			Properties map[string]any `json:"properties"`
		} `json:"json"`
	} `json:"structured_outputs"`
	role string   // from engine.HeaderRole
	cues []string // from engine.HeaderCue
}

// validate returns vLLM's message for the first bad sampling parameter;
// max_tokens 0 is valid only for a completion that echoes its prompt.
func (g *genRequest) validate(chat bool) string {
	for _, mt := range []*int{g.MaxTokens, g.MaxCompletion} {
		if mt != nil && (*mt < 0 || (*mt == 0 && (chat || !g.Echo))) {
			return fmt.Sprintf("max_tokens must be at least 1, got %d.", *mt)
		}
	}
	if g.Temperature != nil && *g.Temperature < 0 {
		return fmt.Sprintf("temperature must be non-negative, got %g.", *g.Temperature)
	}
	if g.TopP != nil && (*g.TopP <= 0 || *g.TopP > 1) {
		return fmt.Sprintf("top_p must be in (0, 1], got %g.", *g.TopP)
	}
	if n, ok := g.Logprobs.(float64); ok && !chat && n < 0 {
		return fmt.Sprintf("logprobs must be non-negative, got %g.", n)
	}
	if g.TopLogprobs != nil && *g.TopLogprobs < 0 {
		return fmt.Sprintf("top_logprobs must be non-negative, got %d.", *g.TopLogprobs)
	}
	if g.PromptLogprobs != nil && *g.PromptLogprobs < 0 {
		return fmt.Sprintf("prompt_logprobs must be non-negative, got %d.", *g.PromptLogprobs)
	}
	return ""
}

func (g *genRequest) text() string {
	if len(g.Messages) > 0 {
		var sb strings.Builder
		for _, m := range g.Messages {
			switch c := m.Content.(type) {
			case string:
				sb.WriteString(c)
			case []any: // content parts
				for _, p := range c {
					pm, _ := p.(map[string]any)
					t, _ := pm["text"].(string)
					sb.WriteString(t)
				}
			}
			sb.WriteByte('\n')
		}
		return sb.String()
	}
	switch p := g.Prompt.(type) {
	case string:
		return p
	case []any:
		if len(p) > 0 {
			s, _ := p[0].(string)
			return s
		}
	}
	return ""
}

// templated is the simulator's chat template, for prompt token counts.
func (g *genRequest) templated() string {
	if len(g.Messages) == 0 {
		return g.text()
	}
	var sb strings.Builder
	for _, m := range g.Messages {
		c, _ := m.Content.(string)
		sb.WriteString("<|" + m.Role + "|>\n" + c + "\n")
	}
	sb.WriteString("<|assistant|>\n")
	return sb.String()
}

func (s *Server) inject(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.FailRate <= 0 || rand.Float64() >= s.cfg.FailRate {
		return false
	}
	kind := s.cfg.FailTypes[rand.IntN(len(s.cfg.FailTypes))]
	s.faults.Add(1)
	s.faultCounts[slices.Index(AllFaults, kind)].Add(1)
	switch kind {
	case Fault429:
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(s.cfg.RetryAfter.Seconds()))))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(s.cfg.RetryAfter.Milliseconds(), 10))
		writeErr(w, http.StatusTooManyRequests, "RateLimitError", "simulated overload: too many requests")
	case Fault500:
		writeErr(w, http.StatusInternalServerError, "InternalServerError", "simulated internal error")
	case FaultTimeout:
		t := time.NewTimer(s.cfg.HangMax)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-t.C:
		}
		writeErr(w, http.StatusGatewayTimeout, "Timeout", "simulated hang ended")
	case FaultReset:
		hj, ok := w.(http.Hijacker)
		if !ok {
			writeErr(w, http.StatusInternalServerError, "InternalServerError", "cannot reset")
			return true
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			return true
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with RST
		}
		conn.Close()
	case FaultGarbage:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `<html><body>502 Bad Gateway</body></html>{"id": "cmpl-`)
	}
	s.failed.Add(1)
	return true
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, nil)
	if !ok {
		return
	}
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
	if s.cfg.OnRequest != nil {
		s.cfg.OnRequest(r.URL.Path, body)
	}
	// Queue for a running slot, as vLLM's scheduler does.
	if s.sem != nil {
		s.waiting.Add(1)
		select {
		case s.sem <- struct{}{}:
			s.waiting.Add(-1)
		case <-r.Context().Done():
			s.waiting.Add(-1)
			return
		}
		defer func() { <-s.sem }()
	}
	s.running.Add(1)
	defer s.running.Add(-1)
	if s.inject(w, r) {
		return
	}
	var g genRequest
	if err := json.Unmarshal(body, &g); err != nil {
		s.failed.Add(1)
		writeErr(w, http.StatusBadRequest, "BadRequestError", "invalid JSON body: "+err.Error())
		return
	}
	g.role, g.cues = r.Header.Get(engine.HeaderRole), engine.ParseCues(r.Header.Get(engine.HeaderCue))
	m, ok := s.model(w, g.Model)
	if !ok {
		s.failed.Add(1)
		return
	}
	resp, promptToks, genToks, unknown, msg := s.respond(m, &g, chat)
	if msg != "" {
		s.failed.Add(1)
		writeErr(w, http.StatusBadRequest, "BadRequestError", msg)
		return
	}
	if unknown {
		w.Header().Set(engine.SimHeader, engine.SimUnknownItem)
	}
	if d := s.cfg.TTFT + time.Duration(genToks)*s.cfg.PerToken; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	s.success.Add(1)
	s.promptToks.Add(int64(promptToks))
	s.genToks.Add(int64(genToks))
	writeJSON(w, http.StatusOK, resp)
}

// respond builds the response object; unknown: an item's prompt matched no
// fact; msg, when not empty: why the request is refused with 400.
func (s *Server) respond(m ModelSpec, g *genRequest, chat bool) (resp map[string]any, promptToks, genToks int, unknown bool, msg string) {
	if chat && len(g.Messages) == 0 {
		return nil, 0, 0, false, "messages: field required"
	}
	if msg = g.validate(chat); msg != "" {
		return nil, 0, 0, false, msg
	}
	text := g.text()
	maxTok := 16
	if chat {
		maxTok = 256
	}
	if p := cmp.Or(g.MaxTokens, g.MaxCompletion); p != nil {
		maxTok = *p
	}
	promptToks = s.tok.Count(g.templated())
	if promptToks+maxTok > m.MaxModelLen {
		return nil, 0, 0, false, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion).", m.MaxModelLen, promptToks+maxTok, promptToks, maxTok)
	}
	var out string
	var known bool
	if g.role == "judge" {
		out, known = judgeVerdict(text, g.cue().oneWord), true
	} else {
		out, known = s.answer(m, text, g.cue())
		unknown = !known // answer knows an item exactly when a fact's cue is in the prompt
		s.noteAsked(unknown)
	}
	if !known {
		out = "I don't know."
		if !chat {
			out = " unknown"
		}
	} else if !chat && !strings.HasPrefix(out, " ") && !strings.HasPrefix(out, "{") {
		out = " " + out // cloze continuation
	}
	finish := "stop"
	for _, st := range stops(g.Stop) {
		if i := strings.Index(out, st); st != "" && i >= 0 {
			out = out[:i]
		}
	}
	if cut, truncated := s.tok.Truncate(out, maxTok); truncated {
		out, finish = cut, "length"
	}
	genToks = s.tok.Count(out)
	now := time.Now().Unix()
	idHash := strconv.FormatUint(uint64(unit(m.ID, text)*(1<<53)), 36)
	usage := map[string]int{"prompt_tokens": promptToks, "completion_tokens": genToks, "total_tokens": promptToks + genToks}
	choice := map[string]any{"index": 0, "finish_reason": finish, "stop_reason": nil, "logprobs": nil}
	resp = map[string]any{"created": now, "model": m.ID, "usage": usage, "system_fingerprint": "simulated", "choices": []any{choice}}
	if chat {
		resp["id"], resp["object"] = "chatcmpl-sim-"+idHash, "chat.completion"
		choice["message"] = map[string]any{"role": "assistant", "content": out}
		if b, ok := g.Logprobs.(bool); ok && b {
			choice["logprobs"] = s.chatLogprobs(m, text, out)
		}
	} else {
		resp["id"], resp["object"] = "cmpl-sim-"+idHash, "text_completion"
		choice["text"] = out
		if g.Echo {
			choice["text"] = text + out
		}
		if n, ok := g.Logprobs.(float64); ok && n >= 0 {
			choice["logprobs"] = s.completionLogprobs(m, text, out, g.Echo)
		}
	}
	if g.PromptLogprobs != nil {
		resp["prompt_logprobs"] = s.promptLogprobs(m, text)
	}
	return resp, promptToks, genToks, unknown, ""
}

// noteAsked counts a request asked as an item and logs unknown ones (Config.Log).
func (s *Server) noteAsked(unknown bool) {
	asked := s.asked.Add(1)
	if !unknown {
		return
	}
	n := s.unknown.Add(1)
	switch {
	case s.cfg.Log == nil:
	case n == 1:
		fmt.Fprintf(s.cfg.Log, "bhasha sim: the simulator does not know this item: its prompts match none of its %d facts; start it with --config EXP (or --dataset) to know the experiment's items (its answer stays \"I don't know\"; responses say %s: %s)\n",
			len(s.cfg.Facts), engine.SimHeader, engine.SimUnknownItem)
	case n%int64(s.cfg.UnknownLogEvery) == 0:
		fmt.Fprintf(s.cfg.Log, "bhasha sim: %d of %d requests so far asked about items the simulator does not know (none of its %d facts)\n", n, asked, len(s.cfg.Facts))
	}
}

func stops(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// logprobSeq is each token's log-probability, in (-3.1, -0.1], after the
// hash of the tokens before it; nil for the first when first is set.
func (s *Server) logprobSeq(m ModelSpec, ids []int64, first bool) []any {
	out := make([]any, len(ids))
	var ctx uint64 = 1469598103934665603
	for i, id := range ids {
		if i > 0 || !first {
			out[i] = -0.1 - 3*unit(m.ID, strconv.FormatUint(ctx, 16), strconv.FormatInt(id, 16))
		}
		ctx = (ctx ^ uint64(id)) * 1099511628211
	}
	return out
}

func (s *Server) completionLogprobs(m ModelSpec, prompt, out string, echo bool) map[string]any {
	var ids []int64
	if echo {
		ids = s.tok.Encode(prompt)
	}
	ids = append(ids, s.tok.Encode(out)...)
	lps := s.logprobSeq(m, ids, echo)
	if echo {
		s.biasChoice(m, prompt, lps)
	}
	// text_offset counts code points of the full text, as vLLM does.
	toks := make([]string, len(ids))
	offs := make([]int, len(ids))
	full, base, b := out, utf8.RuneCountInString(prompt), 0
	if echo {
		full, base = prompt+out, 0
	}
	for i, id := range ids {
		toks[i] = s.tok.Piece(id)
		offs[i] = base + utf8.RuneCountInString(full[:min(b, len(full))])
		b += int(id >> 32)
	}
	return map[string]any{"tokens": toks, "token_logprobs": lps, "top_logprobs": nil, "text_offset": offs}
}

// biasChoice adds the model's multiple-choice preference to the first
// token of the answer after the prompt's last "\nA: " (scored with echo).
func (s *Server) biasChoice(m ModelSpec, prompt string, lps []any) {
	bonus := s.choiceBonus(m, prompt)
	i := strings.LastIndex(prompt, "\nA: ")
	if bonus == 0 || i < 0 {
		return
	}
	// Index of the token holding the answer's first byte.
	n := s.tok.Count(prompt[:i+len("\nA:")])
	if n < len(lps) {
		if v, ok := lps[n].(float64); ok {
			lps[n] = math.Min(-0.01, v+bonus)
		}
	}
}

func (s *Server) chatLogprobs(m ModelSpec, prompt, out string) map[string]any {
	ids := s.tok.Encode(out)
	lps := s.logprobSeq(m, ids, false)
	content := make([]any, len(ids))
	for i, id := range ids {
		content[i] = map[string]any{"token": s.tok.Piece(id), "logprob": lps[i], "bytes": []byte(s.tok.Piece(id)), "top_logprobs": []any{}}
	}
	return map[string]any{"content": content}
}

func (s *Server) promptLogprobs(m ModelSpec, prompt string) []any {
	ids := s.tok.Encode(prompt)
	lps := s.logprobSeq(m, ids, true)
	out := make([]any, len(ids))
	for i, id := range ids {
		if lps[i] == nil {
			continue
		}
		out[i] = map[string]any{strconv.FormatInt(id, 10): map[string]any{"logprob": lps[i], "rank": 1, "decoded_token": s.tok.Piece(id)}}
	}
	return out
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	var data []any
	for _, m := range s.cfg.Models {
		mm := s.models[m.ID]
		data = append(data, map[string]any{
			"id": mm.ID, "object": "model", "created": 0, "owned_by": "bhasha-sim (simulated)",
			"root": rootOf(mm.ID, s.digest), "parent": nil, "max_model_len": mm.MaxModelLen,
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	var g genRequest
	if _, ok := readBody(w, r, &g); !ok {
		return
	}
	m, ok := s.model(w, g.Model)
	if !ok {
		return
	}
	ids := s.tok.Encode(g.templated())
	// unlike vLLM, bounded by the model's context, as generation is
	if len(ids) > m.MaxModelLen {
		writeErr(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens.", m.MaxModelLen, len(ids)))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(ids), "max_model_len": m.MaxModelLen, "tokens": ids})
}

func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string  `json:"model"`
		Tokens []int64 `json:"tokens"`
	}
	if _, ok := readBody(w, r, &req); !ok {
		return
	}
	if _, ok := s.model(w, req.Model); !ok {
		return
	}
	text, err := s.tok.Decode(req.Tokens)
	if err != nil {
		writeErr(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"prompt": text})
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	var sb strings.Builder
	gauge := func(name, help string, v int64) {
		fmt.Fprintf(&sb, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		for _, m := range s.cfg.Models {
			fmt.Fprintf(&sb, "%s{model_name=%q} %d\n", name, m.ID, v)
		}
	}
	gauge("vllm:num_requests_running", "Number of requests currently running (simulated).", s.running.Load())
	gauge("vllm:num_requests_waiting", "Number of requests waiting (simulated).", s.waiting.Load())
	fmt.Fprintf(&sb, "# HELP vllm:request_success_total Count of successfully processed requests (simulated).\n# TYPE vllm:request_success_total counter\n")
	fmt.Fprintf(&sb, "vllm:request_success_total{finished_reason=\"stop\"} %d\n", s.success.Load())
	fmt.Fprintf(&sb, "# HELP vllm:prompt_tokens_total Prompt tokens processed (simulated).\n# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total %d\n", s.promptToks.Load())
	fmt.Fprintf(&sb, "# HELP vllm:generation_tokens_total Generation tokens produced (simulated).\n# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total %d\n", s.genToks.Load())
	fmt.Fprintf(&sb, "# HELP bhasha_sim_faults_total Injected faults by kind.\n# TYPE bhasha_sim_faults_total counter\n")
	for i, k := range AllFaults {
		fmt.Fprintf(&sb, "bhasha_sim_faults_total{kind=%q} %d\n", k, s.faultCounts[i].Load())
	}
	io.WriteString(w, sb.String())
}
