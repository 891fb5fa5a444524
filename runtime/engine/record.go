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
type Record struct {
	Key              string          `json:"key"`                       // the request's stable key (Key.String)
	Fields           Key             `json:"fields"`                    // the same key as an object, for jq/pandas/DuckDB filtering
	Kind             Kind            `json:"kind"`                      // "chat" or "completion"
	ServedModel      string          `json:"served_model"`              // the model name sent to the server
	Status           string          `json:"status"`                    // "ok" or "failed"
	Error            string          `json:"error"`                     // why a failed request failed (empty when ok)
	Response         string          `json:"response"`                  // the generated text (empty when failed)
	Reasoning        string          `json:"reasoning,omitempty"`       // reasoning text the server returned separately, if any
	FinishReason     string          `json:"finish_reason"`             // "stop", "length", ... as the server said
	PromptTokens     int             `json:"prompt_tokens"`             // counted by the server
	CompletionTokens int             `json:"completion_tokens"`         // counted by the server
	LatencyMS        float64         `json:"latency_ms"`                // wall time of the successful attempt (0 when cached)
	Attempts         int             `json:"attempts"`                  // attempts made in this run (0 when cached)
	Endpoint         string          `json:"endpoint"`                  // base URL of the replica that answered, without credentials
	Cached           bool            `json:"cached"`                    // the answer came from the response cache
	CacheKey         string          `json:"cache_key"`                 // hex SHA-256 under which the answer is cached
	Logprobs         json.RawMessage `json:"logprobs,omitempty"`        // the choice's logprobs object, when asked for
	PromptLogprobs   json.RawMessage `json:"prompt_logprobs,omitempty"` // vLLM's prompt_logprobs, when asked for
	Refusal          string          `json:"refusal,omitempty"`         // the chat message's refusal, if any
	ToolCalls        json.RawMessage `json:"tool_calls,omitempty"`      // the chat message's tool calls, if any
	// EmptyResponse: the model produced an empty text (finish_reason stop
	// or length); an ok record never has an empty response without it.
	EmptyResponse bool `json:"empty_response,omitempty"`
	// Request is the body exactly as sent; RequestSHA256, its hex SHA-256,
	// is what a resumed run compares to decide whether the experiment changed.
	Request       json.RawMessage `json:"request,omitempty"`
	RequestSHA256 string          `json:"request_sha256,omitempty"`
	// Identity is the model that answered (served id, the root its server
	// reported, the revision the experiment pins), also on cached records.
	Identity  *Identity `json:"identity,omitempty"`
	Simulated bool      `json:"simulated,omitempty"` // that server said it is a simulator (ServedModel.IsSimulated)
	// Extracted is the study's reading of the response (value, method,
	// null, fields, note, in_candidates); absent for raw request studies.
	Extracted *extract.Result `json:"extracted,omitempty"`

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
