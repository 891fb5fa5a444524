package engine

import (
	"github.com/bhashalab/bhasha/analysis/extract"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
)

// Status values of a Record.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// Result is what a server answered to one request: the part that is cached.
type Result struct {
	Text             string          `json:"text"`
	Reasoning        string          `json:"reasoning,omitempty"`
	FinishReason     string          `json:"finish_reason"`
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	Logprobs         json.RawMessage `json:"logprobs,omitempty"`
	PromptLogprobs   json.RawMessage `json:"prompt_logprobs,omitempty"`
	Refusal          string          `json:"refusal,omitempty"`
	ToolCalls        json.RawMessage `json:"tool_calls,omitempty"`
	// Empty is set when the model really produced an empty text (see
	// ParseResponse); an empty Text without it is not an answer.
	Empty bool `json:"empty,omitempty"`
}

// Valid reports whether r is an answer: a text, a refusal, tool calls, or
// an empty text that ParseResponse accepted as one. Cache entries written
// before empty answers were checked (an empty text without Empty) are not
// valid and are sent again.
func (r Result) Valid() bool {
	return r.Text != "" || r.Empty || r.Refusal != "" || len(r.ToolCalls) > 0
}

// Record is one line of records.jsonl: the outcome of one request.
//
// Fields:
//
//	key               the request's stable key (Key.String: experiment|model|item|language|form|strategy|condition|stage)
//	fields            the same key as an object, for jq/pandas/DuckDB filtering
//	kind              "chat" or "completion"
//	served_model      the model name sent to the server
//	status            "ok" or "failed"
//	error             why a failed request failed (empty when ok)
//	response          the generated text (empty when failed)
//	reasoning         reasoning text the server returned separately, if any
//	finish_reason     "stop", "length", ... as the server said
//	prompt_tokens     prompt tokens counted by the server
//	completion_tokens generated tokens counted by the server
//	latency_ms        wall time of the successful attempt (0 when cached)
//	attempts          attempts made in this run (0 when cached)
//	endpoint          base URL of the replica that answered, without credentials
//	cached            true when the answer came from the response cache
//	cache_key         hex SHA-256 under which the answer is cached
//	logprobs          the choice's logprobs object, when asked for
//	prompt_logprobs   vLLM's prompt_logprobs, when asked for
//	refusal           the chat message's refusal, when the server returned one
//	tool_calls        the chat message's tool calls, when the server returned any
//	empty_response    true when the model produced an empty text (a real,
//	                  empty answer: finish_reason stop or length); an ok
//	                  record never has an empty response without it
//	request           the request body exactly as sent (prompt or messages,
//	                  every decoding parameter, the served model name)
//	request_sha256    hex SHA-256 of that body: what a resumed run compares
//	                  to decide whether the experiment changed
//	identity          the model that answered: served id, the root (weights)
//	                  its server reported, the revision the experiment pins;
//	                  also on cached records (the cache key includes it)
//	simulated         true when that server said it is a simulator
//	                  (owned_by "… simulated …" or a root "simulated/…")
//	extracted         the study's reading of the response: value, method
//	                  (json, fenced-json, json-with-text, single-quoted-json,
//	                  truncated-json, first-line, or unparsed), null, fields,
//	                  note, in_candidates; absent for raw request studies
type Record struct {
	Key              string          `json:"key"`
	Fields           Key             `json:"fields"`
	Kind             Kind            `json:"kind"`
	ServedModel      string          `json:"served_model"`
	Status           string          `json:"status"`
	Error            string          `json:"error"`
	Response         string          `json:"response"`
	Reasoning        string          `json:"reasoning,omitempty"`
	FinishReason     string          `json:"finish_reason"`
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	LatencyMS        float64         `json:"latency_ms"`
	Attempts         int             `json:"attempts"`
	Endpoint         string          `json:"endpoint"`
	Cached           bool            `json:"cached"`
	CacheKey         string          `json:"cache_key"`
	Logprobs         json.RawMessage `json:"logprobs,omitempty"`
	PromptLogprobs   json.RawMessage `json:"prompt_logprobs,omitempty"`
	Refusal          string          `json:"refusal,omitempty"`
	ToolCalls        json.RawMessage `json:"tool_calls,omitempty"`
	EmptyResponse    bool            `json:"empty_response,omitempty"`
	Request          json.RawMessage `json:"request,omitempty"`
	RequestSHA256    string          `json:"request_sha256,omitempty"`
	Identity         *Identity       `json:"identity,omitempty"`
	Simulated        bool            `json:"simulated,omitempty"`
	Extracted        *extract.Result `json:"extracted,omitempty"`

	duplicate bool // cached by this engine earlier in the run (Stats.Duplicates)
}

// SetResult fills the answer fields of rec from r.
func (rec *Record) SetResult(r Result) {
	rec.Response = r.Text
	rec.Reasoning = r.Reasoning
	rec.FinishReason = r.FinishReason
	rec.PromptTokens = r.PromptTokens
	rec.CompletionTokens = r.CompletionTokens
	rec.Logprobs = r.Logprobs
	rec.PromptLogprobs = r.PromptLogprobs
	rec.Refusal = r.Refusal
	rec.ToolCalls = r.ToolCalls
	rec.EmptyResponse = r.Empty
}

// Result returns the cached part of an ok record.
func (rec *Record) Result() Result {
	return Result{Text: rec.Response, Reasoning: rec.Reasoning, FinishReason: rec.FinishReason,
		PromptTokens: rec.PromptTokens, CompletionTokens: rec.CompletionTokens,
		Logprobs: rec.Logprobs, PromptLogprobs: rec.PromptLogprobs,
		Refusal: rec.Refusal, ToolCalls: rec.ToolCalls, Empty: rec.EmptyResponse}
}

// Identity names the model that answers, for the cache key: the served id,
// the server's root (the weights it loaded) and an optional revision the
// user pins in the experiment. Endpoint URLs and API keys are not part of it.
type Identity struct {
	ID       string `json:"id"`
	Root     string `json:"root"`
	Revision string `json:"revision,omitempty"`
}

// String is "id (root R, revision V)", for messages.
func (id Identity) String() string {
	s := id.ID
	if id.Root != "" && id.Root != id.ID {
		s += " (root " + id.Root
		if id.Revision != "" {
			s += ", revision " + id.Revision
		}
		s += ")"
	} else if id.Revision != "" {
		s += " (revision " + id.Revision + ")"
	}
	return s
}

// IsSimulated reports whether a server's /v1/models entry says it is a
// simulator: owned_by mentions "simulated" or the root starts "simulated/".
func (m ServedModel) IsSimulated() bool {
	return strings.Contains(m.OwnedBy, "simulated") || strings.HasPrefix(m.Root, "simulated/")
}

// CacheKey is SHA-256 over "bhasha-cache-v2" followed by the endpoint
// kind, the model identity (id, root, revision) and the exact request body,
// each written as its decimal length, ':' and its bytes, so that no two
// different tuples hash the same input. Two models, two revisions or two
// bodies differing in any byte never share a key; endpoint URLs and API
// keys are not part of it.
func CacheKey(id Identity, kind Kind, body []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte("bhasha-cache-v2"))
	for _, f := range [][]byte{[]byte(kind), []byte(id.ID), []byte(id.Root), []byte(id.Revision), body} {
		h.Write(strconv.AppendInt(nil, int64(len(f)), 10))
		h.Write([]byte{':'})
		h.Write(f)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// RequestDigest is the hex SHA-256 of a request body (Record.RequestSHA256).
func RequestDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// HexKey formats a cache key.
func HexKey(k [32]byte) string { return hex.EncodeToString(k[:]) }
