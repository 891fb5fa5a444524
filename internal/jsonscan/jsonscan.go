// Package jsonscan reads the structure of JSON text without decoding it
// into values: where a value ends, the members of an object, a string's
// text. It is for hot paths over input already known to be JSON; every
// function reports input it does not expect (ok false, -1, ErrShape)
// rather than guessing, so its caller can fall back to encoding/json.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrShape is JSON text in a shape the scanner does not read.
var ErrShape = errors.New("unexpected JSON shape")

// Members calls fn with each member of the JSON object v (its key's
// bytes between the quotes, escapes left as they are, and its value's
// text); an error from fn stops it with that error.
func Members(v []byte, fn func(key, val []byte) error) error { return MembersUntil(v, nil, fn) }

// MembersUntil is Members, stopping (without an error, before the value
// is read) at the first member whose key stop accepts (nil: none); stop
// is given the offset in v just after the key's closing quote.
func MembersUntil(v []byte, stop func(key []byte, after int) bool, fn func(key, val []byte) error) error {
	i := SkipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return ErrShape
	}
	i++
	for first := true; ; first = false {
		i = SkipSpace(v, i)
		if i >= len(v) {
			return ErrShape
		}
		if v[i] == '}' {
			return nil
		}
		if !first {
			if v[i] != ',' {
				return ErrShape
			}
			i = SkipSpace(v, i+1)
		}
		if i >= len(v) || v[i] != '"' {
			return ErrShape
		}
		ke := SkipString(v, i)
		if ke < 0 {
			return ErrShape
		}
		key := v[i+1 : ke-1]
		if stop != nil && stop(key, ke) {
			return nil
		}
		i = SkipSpace(v, ke)
		if i >= len(v) || v[i] != ':' {
			return ErrShape
		}
		vs := SkipSpace(v, i+1)
		ve := SkipValue(v, vs)
		if ve < 0 {
			return ErrShape
		}
		if err := fn(key, v[vs:ve]); err != nil {
			return err
		}
		i = ve
	}
}

// SkipSpace returns the offset of the first byte at or after i that is
// not JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the offset after the string starting at b[i] ('"'), or -1.
func SkipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		j += i
		// the quote is escaped when an odd number of backslashes precede it
		k := j - 1
		for k >= i && b[k] == '\\' {
			k--
		}
		if (j-1-k)%2 == 0 {
			return j + 1
		}
		i = j + 1
	}
}

// SkipValue returns the offset after the JSON value starting at b[i], or -1.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = SkipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' {
		i++
	}
	return i
}

// String reads the JSON string v (with its quotes) as encoding/json
// does; ok is false for anything but a string.
func String(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') >= 0 {
		return s, json.Unmarshal(v, &s) == nil
	}
	return string(body), true
}
