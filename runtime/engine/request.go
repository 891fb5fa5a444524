// Package engine executes evaluation requests against OpenAI-compatible
// (vLLM) endpoints: replica balancing, bounded adaptive concurrency, retries,
// a content-addressed response cache and one record per request.
//
// The contract in one line: every Request handed to Run ends as exactly one
// Record, with status "ok" and the model's text, or status "failed" and the
// error that stopped it; nothing is dropped, and a failure is never taken for an answer (the tables count it as a wrong one).
package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/internal/jsonscan"
)

// Kind is the OpenAI endpoint a request goes to.
type Kind string

const (
	// Chat posts to /v1/chat/completions; the server applies the model's chat template.
	Chat Kind = "chat"
	// Completion posts to /v1/completions with a raw prompt string.
	Completion Kind = "completion"
)

// Path is the endpoint path relative to the /v1 base URL.
func (k Kind) Path() string {
	if k == Completion {
		return "completions"
	}
	return "chat/completions"
}

// Key identifies one request of an experiment. It is stable across runs:
// the same experiment produces the same keys, so resumption and joins work.
type Key struct {
	Experiment string `json:"experiment"`
	Model      string `json:"model"`
	Item       string `json:"item"`
	Language   string `json:"language,omitempty"`
	Form       string `json:"form,omitempty"`
	Strategy   string `json:"strategy,omitempty"`
	Condition  string `json:"condition,omitempty"`
	// Role is what the request asks: the answer (zero), a two-step
	// strategy's translation, a judge's verdict, a multiple-choice option.
	Role Role `json:"role,omitzero"`
}

var keyEscaper = strings.NewReplacer("%", "%25", "|", "%7C")
var keyUnescaper = strings.NewReplacer("%7C", "|", "%25", "%")

// String joins the eight fields with '|' in the order experiment, model,
// item, language, form, strategy, condition, role (its text form). '%' and '|' inside a
// field are percent-escaped, so the string parses back unambiguously.
func (k Key) String() string {
	f := k.fields()
	for _, s := range f {
		if strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '|') >= 0 {
			for i := range f {
				f[i] = keyEscaper.Replace(f[i])
			}
			break
		}
	}
	return strings.Join(f[:], "|")
}

func (k Key) fields() [8]string {
	return [8]string{k.Experiment, k.Model, k.Item, k.Language, k.Form, k.Strategy, k.Condition, k.Role.String()}
}

// ParseKey is the inverse of Key.String.
func ParseKey(s string) (Key, error) {
	p := strings.Split(s, "|")
	if len(p) != 8 {
		return Key{}, fmt.Errorf("parsing key %q: want 8 '|'-separated fields, got %d", s, len(p))
	}
	for i := range p {
		p[i] = keyUnescaper.Replace(p[i])
	}
	role, err := ParseRole(p[7])
	if err != nil {
		return Key{}, fmt.Errorf("parsing key %q: %w", s, err)
	}
	return Key{p[0], p[1], p[2], p[3], p[4], p[5], p[6], role}, nil
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role" yaml:"role"`
	Content string `json:"content" yaml:"content"`
}

// Decoding holds the sampling parameters. Nil pointers are left to the
// server's defaults, except Temperature, which defaults to 0 (greedy).
// vLLM-only fields (TopK, MinTokens, PromptLogprobs, StructuredOutputs,
// ChatTemplateKwargs) are sent under the names vLLM reads.
type Decoding struct {
	MaxTokens          int            `json:"max_tokens" yaml:"max_tokens"`
	Temperature        *float64       `json:"temperature,omitempty" yaml:"temperature"`
	TopP               *float64       `json:"top_p,omitempty" yaml:"top_p"`
	TopK               *int           `json:"top_k,omitempty" yaml:"top_k"`
	Seed               *int64         `json:"seed,omitempty" yaml:"seed"`
	MinTokens          *int           `json:"min_tokens,omitempty" yaml:"min_tokens"`
	Stop               []string       `json:"stop,omitempty" yaml:"stop"`
	Logprobs           *int           `json:"logprobs,omitempty" yaml:"logprobs"`
	Echo               bool           `json:"echo,omitempty" yaml:"echo"`
	PromptLogprobs     *int           `json:"prompt_logprobs,omitempty" yaml:"prompt_logprobs"`
	StructuredOutputs  map[string]any `json:"structured_outputs,omitempty" yaml:"structured_outputs"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty" yaml:"chat_template_kwargs"`
}

// Equal reports whether d and o decode alike: reflect.DeepEqual's answer
// (pointers compared by what they point to, a nil map unequal to an empty one).
func (d Decoding) Equal(o Decoding) bool {
	return d.MaxTokens == o.MaxTokens && d.Echo == o.Echo &&
		eqPtr(d.Temperature, o.Temperature) && eqPtr(d.TopP, o.TopP) && eqPtr(d.TopK, o.TopK) &&
		eqPtr(d.Seed, o.Seed) && eqPtr(d.MinTokens, o.MinTokens) && eqPtr(d.Logprobs, o.Logprobs) &&
		eqPtr(d.PromptLogprobs, o.PromptLogprobs) &&
		(d.Stop == nil) == (o.Stop == nil) && slices.Equal(d.Stop, o.Stop) &&
		eqMap(d.StructuredOutputs, o.StructuredOutputs) && eqMap(d.ChatTemplateKwargs, o.ChatTemplateKwargs)
}

func eqPtr[T comparable](a, b *T) bool { return a == b || a != nil && b != nil && *a == *b }

// eqMap is reflect.DeepEqual of two maps, answered at once for one map
// object (as the requests of one strategy share theirs).
func eqMap(a, b map[string]any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() || reflect.DeepEqual(a, b)
}

// Request is one model call. Exactly one of Messages (Chat) or Prompt
// (Completion) is used, according to Kind.
type Request struct {
	Key      Key
	Kind     Kind
	Messages []Message
	Prompt   string
	Decoding Decoding
	// Cues say what the request asks for outside its wording
	// (CueTranslateFirst, CueOneWordVerdict): sent in the HeaderCue
	// header, not in the body, so not part of the cache key.
	Cues []string
}

// wireBody is the JSON body sent: fixed field order and sorted map keys
// give one request the same bytes, hashed for the cache as sent.
type wireBody struct {
	Model              string         `json:"model"`
	Messages           []Message      `json:"messages,omitempty"`
	Prompt             *string        `json:"prompt,omitempty"`
	MaxTokens          int            `json:"max_tokens"`
	Temperature        float64        `json:"temperature"`
	TopP               *float64       `json:"top_p,omitempty"`
	TopK               *int           `json:"top_k,omitempty"`
	Seed               *int64         `json:"seed,omitempty"`
	MinTokens          *int           `json:"min_tokens,omitempty"`
	Stop               []string       `json:"stop,omitempty"`
	Logprobs           any            `json:"logprobs,omitempty"`
	TopLogprobs        *int           `json:"top_logprobs,omitempty"`
	Echo               bool           `json:"echo,omitempty"`
	PromptLogprobs     *int           `json:"prompt_logprobs,omitempty"`
	StructuredOutputs  map[string]any `json:"structured_outputs,omitempty"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
}

// Body returns the JSON request body for the served model name.
// For chat requests Logprobs n becomes "logprobs": true, "top_logprobs": n;
// Echo and a raw prompt are completion-only, chat_template_kwargs chat-only.
func (r Request) Body(servedModel string) ([]byte, error) {
	d := r.Decoding
	b := wireBody{
		Model:          servedModel,
		MaxTokens:      d.MaxTokens,
		TopP:           d.TopP,
		TopK:           d.TopK,
		Seed:           d.Seed,
		MinTokens:      d.MinTokens,
		Stop:           d.Stop,
		PromptLogprobs: d.PromptLogprobs,
		// an empty map is omitted as a nil one
		StructuredOutputs: d.StructuredOutputs,
	}
	if d.Temperature != nil {
		b.Temperature = *d.Temperature
	}
	switch r.Kind {
	case Chat:
		if len(r.Messages) == 0 {
			return nil, fmt.Errorf("request %s: chat request has no messages", r.Key)
		}
		b.Messages = r.Messages
		if d.Logprobs != nil {
			b.Logprobs = true
			b.TopLogprobs = d.Logprobs
		}
		b.ChatTemplateKwargs = d.ChatTemplateKwargs
		if d.Echo {
			return nil, fmt.Errorf("request %s: echo is only valid for completion requests", r.Key)
		}
	case Completion:
		p := r.Prompt
		b.Prompt = &p
		if d.Logprobs != nil {
			b.Logprobs = *d.Logprobs
		}
		b.Echo = d.Echo
	default:
		return nil, fmt.Errorf("request %s: unknown kind %q (want chat or completion)", r.Key, r.Kind)
	}
	if d.MaxTokens < 0 {
		return nil, fmt.Errorf("request %s: max_tokens %d is negative", r.Key, d.MaxTokens)
	}
	return json.Marshal(b)
}

// PromptOf reads a request body (Request.Body's JSON, as records keep it)
// back into its prompt: a completion's prompt, or a chat's messages. A
// body in the shape Bhasha writes is read by internal/jsonscan, any other
// by encoding/json, whose errors it returns.
func PromptOf(body []byte) (prompt string, messages []Message, err error) {
	if p, m, ok := promptMembers(body); ok {
		var msgs []Message
		if m == nil || json.Unmarshal(m, &msgs) == nil {
			if p == nil {
				return "", msgs, nil
			}
			if s, ok := jsonscan.String(p); ok {
				return s, nil, nil
			}
		}
	}
	return promptOfJSON(body)
}

// promptMembers is the raw "prompt" and "messages" of body (nil when
// absent); ok is false when encoding/json must read it instead.
func promptMembers(body []byte) (prompt, msgs []byte, ok bool) {
	other := false
	err := jsonscan.Members(body, func(key, v []byte) error {
		switch string(key) {
		case "prompt":
			if prompt != nil || len(v) == 0 || v[0] != '"' {
				return jsonscan.ErrShape
			}
			prompt = v
		case "messages":
			if msgs != nil {
				return jsonscan.ErrShape
			}
			msgs = v
		default:
			if strings.EqualFold(string(key), "prompt") || strings.EqualFold(string(key), "messages") || bytes.IndexByte(key, '\\') >= 0 {
				other = true
			}
		}
		return nil
	})
	return prompt, msgs, err == nil && !other
}

// promptOfJSON is PromptOf through encoding/json.
func promptOfJSON(body []byte) (prompt string, messages []Message, err error) {
	var b struct {
		Prompt   *string   `json:"prompt"`
		Messages []Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return "", nil, fmt.Errorf("reading a request body: %w", err)
	}
	if b.Prompt != nil {
		return *b.Prompt, nil, nil
	}
	return "", b.Messages, nil
}

// HeaderCue carries a request's cues (Request.Cues), comma-separated, to
// the server: Bhasha's simulator reads them (vLLM ignores the header). Like
// the other X-Bhasha headers it is not part of the body, so not of the
// cache key.
const HeaderCue = "X-Bhasha-Cue"

// Cues a study's protocol puts on a request to say what the request asks
// for outside its wording, in terms no study owns: the simulator answers
// from them and never from a template's text or a strategy's name.
const (
	// CueTranslateFirst: the prompt asks the model to translate the
	// question before answering it (or to translate it only).
	CueTranslateFirst = "translate-first"
	// CueOneWordVerdict: a judge request whose verdict is one word
	// (CORRECT, WRONG, ABSTAIN), not a JSON object.
	CueOneWordVerdict = "one-word-verdict"
)

// ParseCues reads a HeaderCue value: its comma-separated cues, trimmed,
// empty ones dropped.
func ParseCues(h string) []string {
	var out []string
	for c := range strings.SplitSeq(h, ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
