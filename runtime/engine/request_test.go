package engine

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func TestBody(t *testing.T) {
	full := Decoding{MaxTokens: 10, TopK: ptr(5), Seed: ptr(int64(7)), MinTokens: ptr(1), PromptLogprobs: ptr(0),
		Logprobs: ptr(3), StructuredOutputs: map[string]any{"json": map[string]any{"type": "object"}},
		ChatTemplateKwargs: map[string]any{"enable_thinking": false}, Stop: []string{"\n"}}
	cases := []struct {
		name    string
		req     Request
		want    []string // substrings of the JSON body
		absent  []string
		wantErr string
	}{
		{"chat greedy by default", Request{Kind: Chat, Messages: []Message{{"user", "q"}}, Decoding: Decoding{MaxTokens: 4}},
			[]string{`"model":"M"`, `"temperature":0`, `"max_tokens":4`, `"messages":[{"role":"user","content":"q"}]`}, []string{"prompt", "top_k", "echo"}, ""},
		{"chat vLLM extras", Request{Kind: Chat, Messages: []Message{{"user", "q"}}, Decoding: full},
			[]string{`"top_k":5`, `"seed":7`, `"min_tokens":1`, `"prompt_logprobs":0`, `"logprobs":true`, `"top_logprobs":3`,
				`"structured_outputs":{"json":{"type":"object"}}`, `"chat_template_kwargs":{"enable_thinking":false}`, `"stop":["\n"]`}, nil, ""},
		{"completion logprobs is an int", Request{Kind: Completion, Prompt: "p", Decoding: Decoding{MaxTokens: 0, Echo: true, Logprobs: ptr(0), ChatTemplateKwargs: map[string]any{"x": 1}}},
			[]string{`"prompt":"p"`, `"echo":true`, `"logprobs":0`, `"max_tokens":0`}, []string{"chat_template_kwargs", "messages", "top_logprobs"}, ""},
		{"chat without messages", Request{Kind: Chat}, nil, nil, "no messages"},
		{"echo on chat", Request{Kind: Chat, Messages: []Message{{"user", "q"}}, Decoding: Decoding{Echo: true}}, nil, nil, "echo"},
		{"unknown kind", Request{Kind: "embed"}, nil, nil, "unknown kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.req.Body("M")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !json.Valid(b) {
				t.Fatalf("%v %s", err, b)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("body %s lacks %s", b, w)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(string(b), `"`+a+`"`) {
					t.Errorf("body %s has %s", b, a)
				}
			}
			b2, _ := c.req.Body("M")
			if string(b) != string(b2) {
				t.Error("body not deterministic")
			}
		})
	}
}

func TestCacheKeySeparates(t *testing.T) {
	body := []byte(`{"model":"m"}`)
	base := CacheKey(Identity{ID: "m", Root: "r"}, Chat, body)
	for name, k := range map[string][32]byte{
		"model":    CacheKey(Identity{ID: "m2", Root: "r"}, Chat, body),
		"root":     CacheKey(Identity{ID: "m", Root: "r2"}, Chat, body),
		"revision": CacheKey(Identity{ID: "m", Root: "r", Revision: "abc"}, Chat, body),
		"kind":     CacheKey(Identity{ID: "m", Root: "r"}, Completion, body),
		"body":     CacheKey(Identity{ID: "m", Root: "r"}, Chat, []byte(`{"model":"m" }`)),
		// Field boundaries are delimited: moving a character across them changes the key.
		"boundary": CacheKey(Identity{ID: "m", Root: "", Revision: "r"}, Chat, body),
		"shift":    CacheKey(Identity{ID: "mr", Root: ""}, Chat, body),
	} {
		if k == base {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
	if CacheKey(Identity{ID: "m", Root: "r"}, Chat, body) != base {
		t.Error("key not deterministic")
	}
}

func TestRetryAfter(t *testing.T) {
	cases := []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "150", "Retry-After": "9"}, 150 * time.Millisecond},
		{map[string]string{"Retry-After": "3600"}, 2 * time.Minute},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{}, 0},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		if got := retryAfter(h); got != c.want {
			t.Errorf("%v: %s, want %s", c.h, got, c.want)
		}
	}
	h := http.Header{}
	h.Set("Retry-After", time.Now().Add(10*time.Second).UTC().Format(http.TimeFormat))
	if got := retryAfter(h); got < 8*time.Second || got > 11*time.Second {
		t.Errorf("HTTP date: %s", got)
	}
}

func TestBackoffBounds(t *testing.T) {
	for n := 1; n < 40; n++ {
		d := backoff(n, 100*time.Millisecond, 2*time.Second)
		hi := min(100*time.Millisecond<<min(n-1, 20), 2*time.Second)
		if d < hi/2 || d > hi {
			t.Errorf("attempt %d: %s outside [%s, %s]", n, d, hi/2, hi)
		}
	}
}

func TestParseResponse(t *testing.T) {
	cases := []struct {
		kind    Kind
		body    string
		text    string
		wantErr bool
	}{
		{Chat, `{"choices":[{"message":{"content":"Paris","reasoning_content":"r"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`, "Paris", false},
		{Completion, `{"choices":[{"text":" Paris","finish_reason":"length","logprobs":{"tokens":["a"]}}],"prompt_logprobs":[null,{"1":{"logprob":-1}}]}`, " Paris", false},
		{Chat, `{"choices":[]}`, "", true},
		{Chat, `<html>`, "", true},
		{Chat, `{"choices":[{"text":"x"}]}`, "", true},
	}
	for _, c := range cases {
		r, err := ParseResponse(c.kind, []byte(c.body))
		if (err != nil) != c.wantErr || r.Text != c.text {
			t.Errorf("%s: %+v %v", c.body, r, err)
		}
	}
	r, _ := ParseResponse(Completion, []byte(cases[1].body))
	if len(r.Logprobs) == 0 || len(r.PromptLogprobs) == 0 || r.FinishReason != "length" {
		t.Errorf("logprobs lost: %+v", r)
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, k := range []Key{
		{Experiment: "e", Model: "m", Item: "1"},
		{Experiment: "a|b", Model: "50%", Item: "x%7Cy", Language: "hin", Form: "code-mixed", Strategy: "TinT-CM", Condition: "c", Role: Translation()},
		{Experiment: "e", Model: "judge", Item: "1", Strategy: "qa", Role: Judge("m|x:y")},
		{Experiment: "e", Model: "m", Item: "1", Strategy: "mc1", Role: Choice(12)},
	} {
		f := k.fields()
		for i := range f {
			f[i] = keyEscaper.Replace(f[i])
		}
		if want := strings.Join(f[:], "|"); k.String() != want {
			t.Errorf("%+v -> %q, want %q", k, k.String(), want)
		}
		got, err := ParseKey(k.String())
		if err != nil || got != k {
			t.Errorf("%+v -> %q -> %+v %v", k, k.String(), got, err)
		}
		b, err := json.Marshal(k)
		var back Key
		if err == nil {
			err = json.Unmarshal(b, &back)
		}
		if err != nil || back != k {
			t.Errorf("%+v -> JSON %s -> %+v %v", k, b, back, err)
		}
		if k.Role.IsZero() && strings.Contains(string(b), "role") {
			t.Errorf("answer role written to JSON: %s", b)
		}
	}
	for _, bad := range []string{"a|b", "e|m|1||||c|stage-2", "e|m|1||||c|choice:-1", "e|m|1||||c|judge:"} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) succeeded", bad)
		}
	}
}

// promptBodies are request bodies of every shape PromptOf reads.
var promptBodies = []string{
	`{"model":"m","prompt":"Q: \u0905\"x\"?\nA:","max_tokens":60,"structured_outputs":{"json":{"properties":{"prompt":{"type":"string"}}}}}`,
	`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"Q: \"a\"?"}],"temperature":0}`,
	`{"prompt":null,"messages":[{"role":"user","content":"x"}]}`,
	`{"Prompt":"upper case key"}`,
	`{"pr\u006fmpt":"escaped key"}`,
	`{"prompt":"a","prompt":"last wins"}`,
	`{"messages":[{"role":"user","content":"x"}],"prompt":"both"}`,
	`{}`, `null`, `{"prompt":12}`, `{"prompt":"x"`, `[1]`,
}

// PromptOf gives what encoding/json gives, for the bodies Body writes and
// for others the fast reading leaves to encoding/json.
func TestPromptOfAgreesWithEncodingJSON(t *testing.T) {
	for _, b := range promptBodies {
		wp, wm, werr := promptOfJSON([]byte(b))
		gp, gm, gerr := PromptOf([]byte(b))
		if gp != wp || !reflect.DeepEqual(gm, wm) || (gerr == nil) != (werr == nil) {
			t.Errorf("PromptOf(%s) = %q, %v, %v; encoding/json: %q, %v, %v", b, gp, gm, gerr, wp, wm, werr)
		}
	}
	// and a body Body writes
	r := Request{Key: Key{Item: "1"}, Kind: Completion, Prompt: "नमस्ते\n\"hi\""}
	body, err := r.Body("m")
	if err != nil {
		t.Fatal(err)
	}
	if p, _, err := PromptOf(body); err != nil || p != r.Prompt {
		t.Errorf("PromptOf(Body) = %q, %v", p, err)
	}
}

// Decoding.Equal agrees with reflect.DeepEqual when any one field (each
// field of the struct, found by reflection, so that a new field is
// covered) differs, is nil on one side, or points to an equal value.
func TestDecodingEqualAgreesWithDeepEqual(t *testing.T) {
	f, g := 0.5, 0.5
	variants := func(typ reflect.Type) []reflect.Value {
		switch typ.Kind() {
		case reflect.Int:
			return []reflect.Value{reflect.ValueOf(0), reflect.ValueOf(7)}
		case reflect.Bool:
			return []reflect.Value{reflect.ValueOf(false), reflect.ValueOf(true)}
		case reflect.Pointer:
			vs := []reflect.Value{reflect.Zero(typ)}
			for _, x := range []float64{f, g, 2} {
				p := reflect.New(typ.Elem())
				p.Elem().Set(reflect.ValueOf(x).Convert(typ.Elem()))
				vs = append(vs, p)
			}
			return vs
		case reflect.Slice:
			return []reflect.Value{reflect.ValueOf([]string(nil)), reflect.ValueOf([]string{}), reflect.ValueOf([]string{"\n"}), reflect.ValueOf([]string{"\n", "Q:"})}
		case reflect.Map:
			return []reflect.Value{reflect.ValueOf(map[string]any(nil)), reflect.ValueOf(map[string]any{}),
				reflect.ValueOf(map[string]any{"a": []any{1.0}}), reflect.ValueOf(map[string]any{"a": []any{2.0}})}
		}
		t.Fatalf("Decoding has a field of kind %s: teach this test and Decoding.Equal", typ.Kind())
		return nil
	}
	typ := reflect.TypeFor[Decoding]()
	for i := range typ.NumField() {
		vs := variants(typ.Field(i).Type)
		for _, a := range vs {
			for _, b := range vs {
				var x, y Decoding
				x.MaxTokens, y.MaxTokens = 16, 16
				reflect.ValueOf(&x).Elem().Field(i).Set(a)
				reflect.ValueOf(&y).Elem().Field(i).Set(b)
				if got, want := x.Equal(y), reflect.DeepEqual(x, y); got != want {
					t.Errorf("%s: %v against %v: Equal %v, DeepEqual %v", typ.Field(i).Name, a, b, got, want)
				}
			}
		}
	}
}
