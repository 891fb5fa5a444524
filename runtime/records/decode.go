package records

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// errShape is a sealed line whose structure the fast decoder does not
// expect; decodeSealed's caller then decodes it with encoding/json.
var errShape = errors.New("unexpected record shape")

// interner shares the repeated strings of a batch of records (a key's
// model, language, form, strategy, condition).
type interner map[string]string

func (in interner) of(b []byte) string {
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in) < 4096 {
		in[s] = s
	}
	return s
}

// decodeSealed decodes a sealed record line (as Bhasha's Writer wrote it:
// valid JSON, valid UTF-8) into r, reading the top-level members directly
// and leaving the request body out unless withRequest (a copy; with view,
// the line's own bytes). It gives what
// json.Unmarshal gives for every field of engine.Record; a member it does
// not expect to see in that shape is errShape.
func decodeSealed(line []byte, withRequest, view, withExtracted bool, in interner, r *engine.Record) error {
	return members(line, func(key, v []byte) error {
		var err error
		switch string(key) {
		case "key":
			r.Key, err = str(v, nil)
		case "fields":
			err = decodeKey(v, in, &r.Fields)
		case "kind":
			var s string
			s, err = str(v, in)
			r.Kind = engine.Kind(s)
		case "served_model":
			r.ServedModel, err = str(v, in)
		case "status":
			r.Status, err = str(v, in)
		case "error":
			r.Error, err = str(v, nil)
		case "response":
			r.Response, err = str(v, nil)
		case "reasoning":
			r.Reasoning, err = str(v, nil)
		case "finish_reason":
			r.FinishReason, err = str(v, in)
		case "prompt_tokens":
			r.PromptTokens, err = integer(v)
		case "completion_tokens":
			r.CompletionTokens, err = integer(v)
		case "latency_ms":
			r.LatencyMS, err = float(v)
		case "attempts":
			r.Attempts, err = integer(v)
		case "endpoint":
			r.Endpoint, err = str(v, in)
		case "cached":
			r.Cached, err = boolean(v)
		case "cache_key":
			r.CacheKey, err = str(v, nil)
		case "logprobs":
			r.Logprobs = raw(v)
		case "prompt_logprobs":
			r.PromptLogprobs = raw(v)
		case "refusal":
			r.Refusal, err = str(v, nil)
		case "tool_calls":
			r.ToolCalls = raw(v)
		case "empty_response":
			r.EmptyResponse, err = boolean(v)
		case "request":
			switch {
			case withRequest && view:
				r.Request = json.RawMessage(v)
			case withRequest:
				r.Request = raw(v)
			}
		case "request_sha256":
			r.RequestSHA256, err = str(v, nil)
		case "simulated":
			r.Simulated, err = boolean(v)
		case "identity":
			if string(v) != "null" {
				r.Identity = new(engine.Identity)
				err = decodeIdentity(v, in, r.Identity)
			}
		case "extracted":
			if withExtracted && string(v) != "null" {
				err = json.Unmarshal(v, &r.Extracted)
			}
		default: // record_sha256, and members of newer writers: not in Record
		}
		if err != nil {
			return errShape
		}
		return nil
	})
}

// decodeIdentity decodes a record's identity object.
func decodeIdentity(v []byte, in interner, id *engine.Identity) error {
	return members(v, func(key, val []byte) error {
		s, err := str(val, in)
		switch string(key) {
		case "id":
			id.ID = s
		case "root":
			id.Root = s
		case "revision":
			id.Revision = s
		}
		return err
	})
}

// members calls fn with each member of the flat JSON object v.
func members(v []byte, fn func(key, val []byte) error) error {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return errShape
	}
	i++
	for first := true; ; first = false {
		i = skipSpace(v, i)
		if i >= len(v) {
			return errShape
		}
		if v[i] == '}' {
			return nil
		}
		if !first {
			if v[i] != ',' {
				return errShape
			}
			i = skipSpace(v, i+1)
		}
		if i >= len(v) || v[i] != '"' {
			return errShape
		}
		ke := skipString(v, i)
		if ke < 0 {
			return errShape
		}
		key := v[i+1 : ke-1]
		i = skipSpace(v, ke)
		if i >= len(v) || v[i] != ':' {
			return errShape
		}
		vs := skipSpace(v, i+1)
		ve := skipValue(v, vs)
		if ve < 0 {
			return errShape
		}
		if err := fn(key, v[vs:ve]); err != nil {
			return err
		}
		i = ve
	}
}

// decodeKey decodes a record's fields object (engine.Key).
func decodeKey(v []byte, in interner, k *engine.Key) error {
	if string(v) == "null" {
		return nil
	}
	return members(v, func(key, val []byte) error {
		s, err := str(val, in)
		if err != nil {
			return err
		}
		switch string(key) {
		case "experiment":
			k.Experiment = s
		case "model":
			k.Model = s
		case "item":
			k.Item = s
		case "language":
			k.Language = s
		case "form":
			k.Form = s
		case "strategy":
			k.Strategy = s
		case "condition":
			k.Condition = s
		case "role":
			if err := k.Role.UnmarshalText([]byte(s)); err != nil {
				return err
			}
		}
		return nil
	})
}

// str reads a JSON string (interned when in is not nil).
func str(v []byte, in interner) (string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		if string(v) == "null" {
			return "", nil
		}
		return "", errShape
	}
	body := v[1 : len(v)-1]
	for _, c := range body {
		if c == '\\' {
			var s string
			err := json.Unmarshal(v, &s)
			return s, err
		}
	}
	if in != nil {
		return in.of(body), nil
	}
	return string(body), nil
}

func integer(v []byte) (int, error) {
	if string(v) == "null" {
		return 0, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		var f float64
		if json.Unmarshal(v, &f) == nil {
			return 0, errShape // json.Unmarshal refuses a fraction for an int: let it say so
		}
	}
	return n, err
}

func float(v []byte) (float64, error) {
	if string(v) == "null" {
		return 0, nil
	}
	return strconv.ParseFloat(string(v), 64)
}

func boolean(v []byte) (bool, error) {
	switch string(v) {
	case "true":
		return true, nil
	case "false", "null":
		return false, nil
	}
	return false, errShape
}

// raw copies a raw JSON value (json.RawMessage); null stays null, as
// encoding/json keeps it.
func raw(v []byte) json.RawMessage {
	return append(json.RawMessage(nil), v...)
}
