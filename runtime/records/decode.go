package records

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/internal/jsonscan"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// errShape is a sealed line whose structure the fast decoder does not
// expect; decodeSealed's caller then decodes it with encoding/json.
var errShape = jsonscan.ErrShape

// interner shares the repeated strings of a batch of records (a key's
// model, language, form, strategy, condition): a direct-mapped cache of
// the strings last made, by a hash of their length and three bytes (a
// string met again is compared, never hashed in full; a collision only
// makes a new string). The nil *interner shares nothing.
type interner struct{ slot [1024]string }

func (in *interner) of(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	h := (uint(len(b))*31+uint(b[0]))*31 + uint(b[len(b)/2])*7 + uint(b[len(b)-1])
	p := &in.slot[h%uint(len(in.slot))]
	if *p == string(b) {
		return *p
	}
	*p = string(b)
	return *p
}

// decodeSealed decodes a sealed record line (as Bhasha's Writer wrote it:
// valid JSON, valid UTF-8) into r, reading the top-level members directly
// and leaving out what o does not ask for: the request body unless
// o.WithRequests (a copy; with o.RequestView, the line's own bytes), the
// extracted result with o.SkipExtracted, the cache key and request digest
// with o.SkipDigests, every member but the key, status, error, response
// and request with o.TextsOnly. It gives what json.Unmarshal gives for every field
// of engine.Record it reads; a member it does not expect to see in that
// shape is errShape.
func decodeSealed(line []byte, o StreamOptions, in *interner, r *engine.Record) error {
	withRequest, view := o.WithRequests, o.RequestView
	// The Writer writes the members in engine.Record's order, leaving the
	// request out, then splices the request body in, then the seal. A
	// request met after members in that order, one of them ordered after
	// Request (request_sha256, identity, simulated, extracted), is the
	// last member: the line's reading ends there, the body being what
	// lies before the seal, never walked (it is most of the line's
	// bytes). A line in any other order (rewritten and sealed again by
	// another tool) is read whole.
	last, ordered, after := -1, true, false
	spliced := func(key []byte, at int) bool {
		if !ordered || !after || string(key) != "request" || !hasSealTail(line) {
			return false
		}
		if withRequest { // the body is what lies between the key and the seal
			i := jsonscan.SkipSpace(line, at)
			if i >= len(line) || line[i] != ':' {
				return false
			}
			body := bytes.TrimRight(line[jsonscan.SkipSpace(line, i+1):len(line)-sealLen], " \t\r\n")
			if view {
				r.Request = json.RawMessage(body)
			} else {
				r.Request = raw(body)
			}
		}
		return true
	}
	return jsonscan.MembersUntil(line, spliced, func(key, v []byte) error {
		var err error
		if ordered {
			pos := writerOrder(key)
			ordered = pos > last
			last = pos
			after = after || pos >= afterRequest
		}
		if o.TextsOnly {
			switch string(key) {
			case "key", "status", "error", "response", "request":
			default:
				return nil
			}
		}
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
			if !o.SkipDigests {
				r.CacheKey, err = str(v, nil)
			}
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
			if !o.SkipDigests {
				r.RequestSHA256, err = str(v, nil)
			}
		case "simulated":
			r.Simulated, err = boolean(v)
		case "identity":
			if string(v) != "null" {
				r.Identity = new(engine.Identity)
				err = decodeIdentity(v, in, r.Identity)
			}
		case "extracted":
			if !o.SkipExtracted && string(v) != "null" {
				r.Extracted, err = decodeExtracted(v, in)
			}
		default: // record_sha256, and members of newer writers: not in Record
		}
		if err != nil {
			return errShape
		}
		return nil
	})
}

// decodeExtracted decodes a record's extracted result, read directly; one
// with a member it does not expect in that shape is decoded by
// encoding/json, which takes about eight times as long on a typical
// result (BenchmarkDecodeExtracted), most of reading a segment.
func decodeExtracted(v []byte, in *interner) (*extract.Result, error) {
	x := new(extract.Result)
	err := jsonscan.Members(v, func(key, val []byte) error {
		var err error
		switch string(key) {
		case "fields", "numbers":
			if string(val) == "null" {
				return nil
			}
			return jsonscan.Members(val, func(k, fv []byte) error {
				if bytes.IndexByte(k, '\\') >= 0 {
					return errShape
				}
				if string(key) == "fields" {
					s, err := str(fv, nil)
					if x.Fields == nil {
						x.Fields = map[string]string{}
					}
					x.Fields[string(k)] = s
					return err
				}
				f, err := float(fv)
				if x.Numbers == nil {
					x.Numbers = map[string]float64{}
				}
				x.Numbers[string(k)] = f
				return err
			})
		case "in_candidates":
			if string(val) != "null" {
				b, err := boolean(val)
				x.InCandidates = &b
				return err
			}
		case "value":
			x.Value, err = str(val, nil)
		case "method":
			var m string
			m, err = str(val, in)
			x.Method = extract.Method(m)
		case "null":
			x.Null, err = boolean(val)
		case "fallback":
			x.Fallback, err = str(val, nil)
		case "note":
			x.Note, err = str(val, in)
		default:
			return errShape
		}
		return err
	})
	if err != nil {
		x = nil
		err = json.Unmarshal(v, &x)
	}
	return x, err
}

// decodeIdentity decodes a record's identity object.
func decodeIdentity(v []byte, in *interner, id *engine.Identity) error {
	return jsonscan.Members(v, func(key, val []byte) error {
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

// afterRequest is writerOrder's place of request_sha256, the first member
// engine.Record orders after Request.
const afterRequest = 21

// writerOrder is the place of a member in the Writer's lines (-1 for
// one it does not write).
func writerOrder(key []byte) int {
	switch string(key) {
	case "key":
		return 0
	case "fields":
		return 1
	case "kind":
		return 2
	case "served_model":
		return 3
	case "status":
		return 4
	case "error":
		return 5
	case "response":
		return 6
	case "reasoning":
		return 7
	case "finish_reason":
		return 8
	case "prompt_tokens":
		return 9
	case "completion_tokens":
		return 10
	case "latency_ms":
		return 11
	case "attempts":
		return 12
	case "endpoint":
		return 13
	case "cached":
		return 14
	case "cache_key":
		return 15
	case "logprobs":
		return 16
	case "prompt_logprobs":
		return 17
	case "refusal":
		return 18
	case "tool_calls":
		return 19
	case "empty_response":
		return 20
	case "request_sha256":
		return 21
	case "identity":
		return 22
	case "simulated":
		return 23
	case "extracted":
		return 24
	}
	return -1
}

// hasSealTail reports whether line ends in its seal member.
func hasSealTail(line []byte) bool {
	return len(line) > sealLen && string(line[len(line)-sealLen:len(line)-sealLen+len(sealMember)]) == sealMember && string(line[len(line)-2:]) == `"}`
}

// decodeKey decodes a record's fields object (engine.Key).
func decodeKey(v []byte, in *interner, k *engine.Key) error {
	if string(v) == "null" {
		return nil
	}
	return jsonscan.Members(v, func(key, val []byte) error {
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
func str(v []byte, in *interner) (string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		if string(v) == "null" {
			return "", nil
		}
		return "", errShape
	}
	body := v[1 : len(v)-1]
	if i := bytes.IndexByte(body, '\\'); i >= 0 {
		return jsonscan.Unescape(body, i)
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
