package records

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/internal/jsonscan"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// Reformatted lines.
//
// A line re-serialised by another tool (Python's json.dumps: spaces after
// colons and commas, \u escapes) keeps its record_sha256 member but not
// the bytes the Writer sealed. It is checked over its canonical form: its
// members in order, the seal left out, each value re-encoded as the
// Writer encodes it (no HTML escaping; the request body with it, as the
// engine marshals it; logprobs, prompt_logprobs and tool_calls keep their
// numbers as written). A line whose seal does not match that form is read
// as one whose seal is broken.

// sealKey is the seal member's name.
const sealKey = "record_sha256"

// canonMode says how canonical re-encodes a member's value.
type canonMode struct {
	html     bool // escape <, > and & as json.Marshal does (the request body)
	goFloats bool // a number with a fraction or exponent as encoding/json writes a float64
}

// modeOf is how the Writer encoded the member key.
func modeOf(key string) canonMode {
	switch key {
	case "request":
		return canonMode{html: true, goFloats: true}
	case "logprobs", "prompt_logprobs", "tool_calls":
		return canonMode{}
	}
	return canonMode{goFloats: true}
}

// checkReformatted is the seal state of a line that does not end in the
// seal as the Writer writes it: unsealed when it has no top-level
// record_sha256 member (or is no JSON object: the reader names that);
// sealOK when the seal is that of the line's canonical form; sealBroken
// otherwise (a seal that is not the last member, or not a digest, too).
// It costs a search of the line, and for a line that names a seal, a
// decoding and an encoding of it.
func checkReformatted(line []byte) sealState {
	if !bytes.Contains(line, []byte(`"`+sealKey+`"`)) {
		return unsealed
	}
	body, seal, err := canonical(line)
	switch {
	case errors.Is(err, errNoSeal):
		return unsealed
	case err != nil:
		if hasSealMember(line) {
			return sealBroken
		}
		return unsealed
	}
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) == seal {
		return sealOK
	}
	return sealBroken
}

// errNoSeal is a line without a top-level seal member.
var errNoSeal = errors.New("no " + sealKey + " member")

// hasSealMember reports whether the JSON object line has a top-level
// seal member (false when it is no object).
func hasSealMember(line []byte) bool {
	found := false
	jsonscan.MembersUntil(line, func(key []byte, _ int) bool {
		found = string(key) == sealKey
		return found
	}, func(_, _ []byte) error { return nil })
	return found
}

// canonical is the line's canonical form (see Reformatted lines) and its
// seal's value. errNoSeal when it has no top-level seal member; another
// error when it is not a JSON object, the seal is not its last member or
// not a string, or a value does not decode.
func canonical(line []byte) (body []byte, seal string, err error) {
	body = append(make([]byte, 0, len(line)), '{')
	found, after := false, false
	err = jsonscan.Members(line, func(key, v []byte) error {
		k, ok := jsonscan.String(append(append([]byte{'"'}, key...), '"'))
		if !ok {
			return jsonscan.ErrShape
		}
		if k == sealKey {
			if found {
				return errors.New("two " + sealKey + " members")
			}
			s, ok := jsonscan.String(v)
			if !ok {
				return errors.New(sealKey + " is not a string")
			}
			found, seal = true, s
			return nil
		}
		if found {
			after = true
		}
		if len(body) > 1 {
			body = append(body, ',')
		}
		body = appendString(body, k, false)
		body = append(body, ':')
		var err error
		body, err = appendValue(body, v, modeOf(k))
		return err
	})
	switch {
	case err != nil:
		return nil, "", err
	case !found:
		return nil, "", errNoSeal
	case after:
		return nil, "", errors.New(sealKey + " is not the last member")
	}
	return append(body, '}'), seal, nil
}

// requestMatches reports whether the request body has the digest: its
// bytes', or those of its canonical form (as the engine marshals a body:
// the body of a line re-serialised by another tool).
func requestMatches(body []byte, digest string) bool {
	if engine.RequestDigest(body) == digest {
		return true
	}
	c, err := appendValue(nil, body, modeOf("request"))
	return err == nil && engine.RequestDigest(c) == digest
}

// appendString appends s encoded as encoding/json does, with or without
// HTML escaping.
func appendString(dst []byte, s string, html bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// appendValue appends the JSON value v re-encoded in mode m: no white
// space, every string as encoding/json writes it, numbers as m says,
// members and elements in their order.
func appendValue(dst, v []byte, m canonMode) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	type level struct {
		obj bool
		n   int // keys and values (an object) or elements so far
	}
	var stack []level
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if t, ok := tok.(json.Delim); ok && (t == '}' || t == ']') {
			stack = stack[:len(stack)-1]
			dst = append(dst, byte(t))
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.obj && top.n%2 == 1:
				dst = append(dst, ':')
			case top.n > 0:
				dst = append(dst, ',')
			}
			top.n++
		}
		switch t := tok.(type) {
		case json.Delim:
			dst = append(dst, byte(t))
			stack = append(stack, level{obj: t == '{'})
		case string:
			dst = appendString(dst, t, m.html)
		case json.Number:
			s := string(t)
			if m.goFloats && strings.ContainsAny(s, ".eE") {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(f)
				if err != nil {
					return nil, err
				}
				dst = append(dst, b...)
			} else {
				dst = append(dst, s...)
			}
		case bool:
			dst = strconv.AppendBool(dst, t)
		case nil:
			dst = append(dst, "null"...)
		}
	}
	return dst, nil
}
