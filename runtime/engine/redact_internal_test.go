package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// uEscape writes every byte of s as a JSON \u00XX escape.
func uEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(`\u00`)
		b.WriteString("0123456789abcdef"[s[i]>>4 : s[i]>>4+1])
		b.WriteString("0123456789abcdef"[s[i]&15 : s[i]&15+1])
	}
	return b.String()
}

// A server's body has the key replaced by Redacted in every spelling a
// server may echo it in (as sent, after "Bearer", JSON-escaped, URL-encoded,
// in a body that is not JSON), and every other byte kept: a JSON body
// stays the JSON it was, less the key.
func TestSecretBody(t *testing.T) {
	const key = "sk-Te/st+Key=4242" // '/', '+' and '=' are escaped by URL encoding, '/' may be by JSON
	cases := []struct {
		name, in, want string
	}{
		{"plain text 401", `rejected credentials 'Bearer sk-Te/st+Key=4242'`, `rejected credentials 'Bearer [REDACTED]'`},
		{"OpenAI error object",
			`{"error":{"message":"rejected credentials 'Bearer sk-Te/st+Key=4242'","type":"invalid_request_error","code":"invalid_api_key"}}`,
			`{"error":{"message":"rejected credentials 'Bearer [REDACTED]'","type":"invalid_request_error","code":"invalid_api_key"}}`},
		{"older vLLM top-level message", `{"object":"error","message":"key sk-Te/st+Key=4242 refused","code":500}`,
			`{"object":"error","message":"key [REDACTED] refused","code":500}`},
		{"every byte \\u-escaped", `{"content":"the key is ` + uEscape(key) + `, caf\u00e9"}`,
			`{"content":"the key is [REDACTED], café"}`},
		{"slash escaped", `{"content":"sk-Te\/st+Key=4242"}`, `{"content":"[REDACTED]"}`},
		{"query-encoded", `GET /v1/models?key=sk-Te%2Fst%2BKey%3D4242 refused`, `GET /v1/models?key=[REDACTED] refused`},
		{"path-encoded in JSON", `{"url":"/keys/sk-Te%2Fst+Key=4242"}`, `{"url":"/keys/[REDACTED]"}`},
		{"escaped, beside HTML and a newline", `{"t":"<b>\n` + uEscape(key) + `</b>"}`, `{"t":"<b>\n[REDACTED]</b>"}`},
		{"in an object key", `{"sk-Te/st+Key=4242":1}`, `{"[REDACTED]":1}`},
		{"twice in one string", `{"a":"sk-Te/st+Key=4242 sk-Te/st+Key=4242"}`, `{"a":"[REDACTED] [REDACTED]"}`},
		{"string cut short", `{"error":"Bearer sk-Te/st+Key=4242`, `{"error":"Bearer [REDACTED]`},
		{"cut short inside an escaped key", `{"error":"` + uEscape(key)[:40], `{"error":"` + uEscape(key)[:40]},
		{"no key, escapes kept as they are", `{"content":"caf\u00e9 \"q\" \/ <b>","n":[1,2]}`, `{"content":"caf\u00e9 \"q\" \/ <b>","n":[1,2]}`},
		{"no key, not JSON", `upstream connect error`, `upstream connect error`},
	}
	s := newSecret(key)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(s.body([]byte(c.in)))
			if got != c.want {
				t.Errorf("body(%s)\n got %s\nwant %s", c.in, got, c.want)
			}
			if json.Valid([]byte(c.in)) && !json.Valid([]byte(got)) {
				t.Errorf("valid JSON became invalid: %s", got)
			}
		})
	}
}

// Only a key that can be told from ordinary text is redacted: none, the
// placeholder sent without one, and keys under MinAPIKeyLen are not (and
// the last are refused before anything is sent).
func TestSecretOfShortKeys(t *testing.T) {
	cases := []struct {
		key    string
		redact bool
		refuse bool
	}{
		{"", false, false},
		{noAPIKey, false, false},
		{"Q", false, true},
		{"Q7Z", false, true},
		{"k3yz", true, false},
		{"sk-a-long-key", true, false},
	}
	for _, c := range cases {
		if got := newSecret(c.key) != nil; got != c.redact {
			t.Errorf("newSecret(%q) != nil is %v, want %v", c.key, got, c.redact)
		}
		err := checkKeyLen(c.key, "the API key from $T_KEY")
		if (err != nil) != c.refuse {
			t.Errorf("checkKeyLen(%q) = %v, want refused %v", c.key, err, c.refuse)
		}
		if err != nil && (!strings.Contains(err.Error(), "$T_KEY") || strings.Contains(err.Error(), c.key)) {
			t.Errorf("checkKeyLen(%q) = %v: want the variable named, never the key", c.key, err)
		}
	}
}
