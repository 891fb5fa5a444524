// Package jsonscan reads the structure of JSON text without decoding it
// into values: where a value ends, the members of an object, a string's
// text. It is for hot paths over input already known to be JSON (a
// sealed records line, a request body Bhasha wrote), where
// encoding/json's validation and reflection are most of the cost; every
// function reports input it does not expect (ok false, -1, ErrShape)
// rather than guessing, so its caller can fall back to encoding/json.
package jsonscan

import (
	"bytes"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
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

// Unescape decodes the body of a JSON string (between its quotes) whose
// first backslash is at i, as encoding/json does: the two-character
// escapes, \uXXXX, a surrogate pair as one rune, a lone surrogate as
// U+FFFD. The body is a sealed line's (valid UTF-8); an escape JSON does not allow is ErrShape.
func Unescape(body []byte, i int) (string, error) {
	out := make([]byte, 0, len(body))
	out = append(out, body[:i]...)
	for i < len(body) {
		c := body[i]
		if c != '\\' {
			j := bytes.IndexByte(body[i:], '\\')
			if j < 0 {
				out = append(out, body[i:]...)
				break
			}
			out = append(out, body[i:i+j]...)
			i += j
			continue
		}
		if i+1 >= len(body) {
			return "", ErrShape
		}
		switch body[i+1] {
		case '"', '\\', '/':
			out = append(out, body[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(body, i+2)
			if !ok {
				return "", ErrShape
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(body, i+2); ok && i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", ErrShape
		}
		i += 2
	}
	return string(out), nil
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// String reads the JSON string v (with its quotes) as encoding/json
// does; ok is false for anything but a string.
func String(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	if i := bytes.IndexByte(body, '\\'); i >= 0 {
		s, err := Unescape(body, i)
		return s, err == nil
	}
	return string(body), true
}
