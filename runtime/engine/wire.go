package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// errBadBody marks a response that is not the JSON it should be.
var errBadBody = errors.New("unparseable response body")

// wireResponse is what parseResponse reads of a chat or completion response.
type wireResponse struct {
	Model   string `json:"model"`
	Choices []*struct {
		Text    *string `json:"text"`
		Message *struct {
			Content          *string         `json:"content"`
			ReasoningContent *string         `json:"reasoning_content"`
			Reasoning        *string         `json:"reasoning"`
			Refusal          string          `json:"refusal"`
			ToolCalls        json.RawMessage `json:"tool_calls"`
		} `json:"message"`
		FinishReason string          `json:"finish_reason"`
		Logprobs     json.RawMessage `json:"logprobs"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	PromptLogprobs json.RawMessage `json:"prompt_logprobs"`
}

// present reports whether a raw JSON value is there and not null, [] or {}.
func present(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "[]", "{}":
		return false
	}
	return true
}

// ParseResponse decodes a chat or completion response body. A body is an
// answer only when the server returned one:
//
//   - a body carrying an "error" object, no choices, or a null first choice
//     is a bad response;
//   - a chat message whose content is null or missing is a bad response
//     unless it carries tool calls or a refusal (kept in Result);
//   - a completion choice whose text is null or missing is a bad response;
//   - an empty text is an answer (Result.Empty) only when the server says
//     why generation ended (finish_reason "stop" or "length"); an empty
//     text without a finish reason is a bad response.
//
// Bad responses wrap errBadBody: the engine retries them and never caches
// them.
func ParseResponse(kind Kind, raw []byte) (Result, error) {
	res, _, err := parseResponse(kind, raw)
	return res, err
}

// parseResponse is ParseResponse, also returning the response's "model" field.
func parseResponse(kind Kind, raw []byte) (Result, string, error) {
	var w wireResponse
	if err := json.Unmarshal(raw, &w); err != nil {
		return Result{}, "", fmt.Errorf("%w: %v (body starts %q)", errBadBody, err, prefix(raw, 60))
	}
	if present(w.Error) {
		return Result{}, "", fmt.Errorf("%w: status 200 with an error object: %s", errBadBody, prefix(w.Error, 200))
	}
	if len(w.Choices) == 0 {
		return Result{}, "", fmt.Errorf("%w: no choices (body starts %q)", errBadBody, prefix(raw, 60))
	}
	c := w.Choices[0]
	if c == nil {
		return Result{}, "", fmt.Errorf("%w: choices[0] is null", errBadBody)
	}
	var res Result
	switch kind {
	case Chat:
		m := c.Message
		if m == nil {
			return Result{}, "", fmt.Errorf("%w: chat choice has no message", errBadBody)
		}
		res.Refusal = m.Refusal
		if present(m.ToolCalls) {
			res.ToolCalls = m.ToolCalls
		}
		switch {
		case m.Content != nil:
			res.Text = *m.Content
		case res.Refusal == "" && res.ToolCalls == nil:
			return Result{}, "", fmt.Errorf("%w: message.content is null or missing (no tool calls, no refusal)", errBadBody)
		}
		if r := cmp.Or(m.ReasoningContent, m.Reasoning); r != nil {
			res.Reasoning = *r
		}
	default:
		if c.Text == nil {
			return Result{}, "", fmt.Errorf("%w: completion choice has no text (null or missing)", errBadBody)
		}
		res.Text = *c.Text
	}
	res.FinishReason = c.FinishReason
	if w.Usage != nil {
		res.PromptTokens = w.Usage.PromptTokens
		res.CompletionTokens = w.Usage.CompletionTokens
	}
	if res.Text == "" && res.Refusal == "" && res.ToolCalls == nil {
		if res.FinishReason != "stop" && res.FinishReason != "length" {
			return Result{}, "", fmt.Errorf("%w: empty text and finish_reason %q (want stop or length for an empty answer)", errBadBody, res.FinishReason)
		}
		res.Empty = true
	}
	if len(c.Logprobs) > 0 && string(c.Logprobs) != "null" {
		res.Logprobs = c.Logprobs
	}
	if len(w.PromptLogprobs) > 0 && string(w.PromptLogprobs) != "null" {
		res.PromptLogprobs = w.PromptLogprobs
	}
	return res, w.Model, nil
}

// prefix is the first n bytes of b (all of a shorter b).
func prefix(b []byte, n int) string { return string(b[:min(len(b), n)]) }

// Headers that tell a server (the simulator; vLLM ignores them) what a
// request is for. They are not part of the body, so not of the cache key.
const (
	HeaderRole     = "X-Bhasha-Role"     // Role.Name(): answer, translation, judge, choice
	HeaderStrategy = "X-Bhasha-Strategy" // Key.Strategy
)

// attempt sends body once to rep, the response bounded by responseBound and
// its model checked by replica.checkModel.
func attempt(ctx context.Context, rep *replica, served string, r Request, body []byte, timeout time.Duration) (Result, error) {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := rep.send(context.WithValue(actx, boundKey{}, responseBound(r, len(body))), http.MethodPost, rep.base+"/"+r.Kind.Path(), body, func(h http.Header) {
		h.Set(HeaderRole, r.Key.Role.Name())
		h.Set(HeaderStrategy, r.Key.Strategy)
		if len(r.Cues) > 0 {
			h.Set(HeaderCue, strings.Join(r.Cues, ","))
		}
	})
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return Result{}, fmt.Errorf("%s: attempt timed out after %s", rep.base, timeout)
		}
		if p, ok := errors.AsType[refusal](err); ok {
			// without the client's "Post URL: " (a redirect's query string)
			return Result{}, fmt.Errorf("%s: %w", rep.base, p)
		}
		return Result{}, fmt.Errorf("%s: %w", rep.base, err)
	}
	res, model, err := parseResponse(r.Kind, raw)
	if err == nil {
		err = rep.checkModel(served, model)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", rep.base, err)
	}
	return res, nil
}

// send makes one request to url through rep's (guarded) client, with the
// bearer token, the JSON content headers and whatever header adds, and
// returns the response body; a status of 400 or more is a *statusError.
//
// The engine speaks HTTP through net/http itself rather than through the
// OpenAI client library, whose per-request setup costs the engine a tenth
// of its CPU time per answer (BenchmarkPostOpenAIClient sets the two side
// by side).
func (rep *replica) send(ctx context.Context, method, url string, body []byte, header func(http.Header)) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+rep.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if header != nil {
		header(req.Header)
	}
	resp, err := rep.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, &statusError{Code: resp.StatusCode, Header: resp.Header, Message: statusMessage(resp.StatusCode, b)}
	}
	return io.ReadAll(resp.Body)
}

// statusError is an HTTP error status a server answered, with its
// headers (Retry-After) and its message.
type statusError struct {
	Code    int
	Header  http.Header
	Message string
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Code, e.Message) }

// statusMessage is the server's message in an error body b: its
// {"error": {"message"}}, {"error": "…"} or top-level {"message"}, else
// the start of the body, else the status's text.
func statusMessage(code int, b []byte) string {
	var m struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &m) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var text string
		switch {
		case json.Unmarshal(m.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(m.Error, &text) == nil && text != "":
			return text
		case m.Message != "":
			return m.Message
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return http.StatusText(code)
	}
	return prefix(b, 300)
}
