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

// Reformatted lines (re-serialised by another tool) are checked over their
// canonical form: members in order, the seal left out, each value
// re-encoded as the Writer encodes it (appendValue).

// sealKey is the seal member's name.
const sealKey = "record_sha256"

// checkReformatted is the seal state of a line not sealed as the Writer
// writes it: unsealed without a top-level seal member, else whether its
// canonical form matches the seal.
func checkReformatted(line []byte) sealState {
	if !bytes.Contains(line, []byte(`"`+sealKey+`"`)) {
		return unsealed
	}
	body, seal, err := canonical(line)
	switch {
	case errors.Is(err, errNoSeal):
		return unsealed
	case err != nil: // broken when the line has a top-level seal member
		found := false
		jsonscan.MembersUntil(line, func(key []byte, _ int) bool {
			found = string(key) == sealKey
			return found
		}, func(_, _ []byte) error { return nil })
		if found {
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

// canonical is the line's canonical form and its seal's value: errNoSeal
// without a top-level seal, another error when the seal is not the last
// string member or the line does not decode.
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
		body, err = appendValue(body, v, k)
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

// requestMatches reports whether the request body, or its canonical form, has the digest.
func requestMatches(body []byte, digest string) bool {
	if engine.RequestDigest(body) == digest {
		return true
	}
	c, err := appendValue(nil, body, "request")
	return err == nil && engine.RequestDigest(c) == digest
}

// appendString appends s encoded as encoding/json does.
func appendString(dst []byte, s string, html bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// appendValue appends the JSON value v of member key re-encoded as the
// Writer encodes it, without white space: HTML escaped in the request, and
// numbers with a fraction or exponent as float64s but in logprobs,
// prompt_logprobs and tool_calls.
func appendValue(dst, v []byte, key string) ([]byte, error) {
	html := key == "request"
	goFloats := key != "logprobs" && key != "prompt_logprobs" && key != "tool_calls"
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
			dst = appendString(dst, t, html)
		case json.Number:
			s := string(t)
			if goFloats && strings.ContainsAny(s, ".eE") {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, err
				}
				b, _ := json.Marshal(f) // finite: ParseFloat refuses what overflows
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
