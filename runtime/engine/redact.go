package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/internal/jsonscan"
)

// Redacted is what replaces an API key wherever a server echoed it: in
// response bodies, and so in answers, errors, records, the cache, the
// manifest and log lines.
const Redacted = "[REDACTED]"

// MinAPIKeyLen is the shortest API key the engine sends: a shorter one is
// refused, as it could not be told apart from ordinary text to redact it.
const MinAPIKeyLen = 4

// noAPIKey is the bearer token sent when a model has no key; it is never
// redacted.
const noAPIKey = "EMPTY"

// secret is an API key in the spellings a server may echo it in.
type secret struct {
	forms [][]byte // as sent, then URL-encoded (query and path escaping) when that differs
}

// newSecret is the secret of key; nil when key is "", noAPIKey or
// shorter than MinAPIKeyLen.
func newSecret(key string) *secret {
	if key == noAPIKey || len(key) < MinAPIKeyLen {
		return nil
	}
	s := &secret{}
	for _, f := range []string{key, url.QueryEscape(key), url.PathEscape(key)} {
		if !s.has([]byte(f)) {
			s.forms = append(s.forms, []byte(f))
		}
	}
	return s
}

// bearerSecret is the secret of the bearer token that req carries in its
// Authorization header, nil when it carries none (or noAPIKey).
func bearerSecret(req *http.Request) *secret {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	return newSecret(strings.TrimSpace(token))
}

// has reports whether b holds one of the key's forms as it is.
func (s *secret) has(b []byte) bool {
	return slices.ContainsFunc(s.forms, func(f []byte) bool { return bytes.Contains(b, f) })
}

// text is t with every form of the key replaced by Redacted.
func (s *secret) text(t string) string {
	if s == nil || !s.has([]byte(t)) {
		return t
	}
	for _, f := range s.forms {
		t = strings.ReplaceAll(t, string(f), Redacted)
	}
	return t
}

// body is b with every form of the key replaced by Redacted (b itself when
// none), inside JSON string literals by their decoded text too.
func (s *secret) body(b []byte) []byte {
	if s == nil || (!s.has(b) && bytes.IndexByte(b, '\\') < 0) {
		return b
	}
	var out []byte // nil until something is replaced
	last := 0      // b[:last] is in out
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		start := i + q
		end := jsonscan.SkipString(b, start)
		if end < 0 {
			break
		}
		i = end
		lit := b[start:end]
		if bytes.IndexByte(lit, '\\') < 0 && !s.has(lit) {
			continue
		}
		text, ok := jsonscan.String(lit)
		if !ok || !s.has([]byte(text)) {
			continue
		}
		out = append(out, b[last:start]...)
		out = appendString(out, s.text(text))
		last = end
	}
	if out != nil {
		b = append(out, b[last:]...)
	}
	for _, f := range s.forms {
		if bytes.Contains(b, f) {
			b = bytes.ReplaceAll(b, f, []byte(Redacted))
		}
	}
	return b
}

// appendString appends t as a JSON string literal, without escaping
// HTML characters.
func appendString(b []byte, t string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(t) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// result is r with every form of the key replaced by Redacted in its
// texts and in its JSON fields (tool calls, logprobs).
func (s *secret) result(r Result) Result {
	if s == nil {
		return r
	}
	r.Text, r.Reasoning, r.Refusal = s.text(r.Text), s.text(r.Reasoning), s.text(r.Refusal)
	raw := func(m json.RawMessage) json.RawMessage {
		if m == nil {
			return nil
		}
		return json.RawMessage(s.body(m))
	}
	r.ToolCalls, r.Logprobs, r.PromptLogprobs = raw(r.ToolCalls), raw(r.Logprobs), raw(r.PromptLogprobs)
	return r
}

// checkKeyLen refuses an API key shorter than MinAPIKeyLen, naming it by
// its variable (what, as keyRefused names it), never by its value.
func checkKeyLen(key, what string) error {
	if key == "" || key == noAPIKey || len(key) >= MinAPIKeyLen {
		return nil
	}
	return fmt.Errorf("%s is %d byte(s) long, under the %d Bhasha needs to redact it from what servers answer; use a longer key", what, len(key), MinAPIKeyLen)
}
