// Package jsonpos maps byte offsets of a JSON document to line numbers,
// so that loaders can name the line of a bad record.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/datasets/item"
)

// BadUTF8 finds the first byte of b that is not valid UTF-8. It returns
// that byte's offset, the JSON object key whose name or value holds it
// ("" when b is not JSON or the byte lies outside any object), and a
// message describing the bytes; bad is false when b is valid UTF-8.
func BadUTF8(b []byte) (off int, key, msg string, bad bool) {
	if utf8.Valid(b) {
		return 0, "", "", false
	}
	for off < len(b) {
		r, n := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	msg = fmt.Sprintf("invalid UTF-8 (byte %#02x at offset %d)", b[off], off)
	if bytes.HasPrefix(b, []byte("\xff\xfe")) || bytes.HasPrefix(b, []byte("\xfe\xff")) {
		msg = "the text is UTF-16 (it starts with a byte-order mark); save it as UTF-8"
	} else if b[off] >= 0x80 && b[off] <= 0xff {
		msg += "; is the file Latin-1 or Windows-1252? save it as UTF-8"
	}
	return off, keyAt(b, off), msg, true
}

// InvalidUTF8 checks one record of a JSON file: raw, which starts at byte
// start, where line maps offsets to lines. When raw is not valid UTF-8 it
// returns src with the line and key of the first bad byte and the
// message, and true.
func InvalidUTF8(src item.Problem, raw []byte, start int64, line func(int64) int) (item.Problem, bool) {
	off, key, msg, bad := BadUTF8(raw)
	if !bad {
		return src, false
	}
	src.Line, src.Field, src.Msg = line(start+int64(off)), key, msg
	return src, true
}

// keyAt walks the JSON tokens of b up to offset off and returns the key of
// the innermost object member that contains it.
func keyAt(b []byte, off int) string {
	type frame struct {
		obj, expectKey bool
		key            string
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		t, err := dec.Token()
		top := len(stack) - 1
		if err != nil || dec.InputOffset() > int64(off) {
			if top < 0 {
				return ""
			}
			if k, isKey := t.(string); isKey && err == nil && stack[top].obj && stack[top].expectKey {
				return k // the bad byte is in the key itself
			}
			for i := top; i >= 0; i-- { // the innermost member: lists have none
				if stack[i].obj && stack[i].key != "" {
					return stack[i].key
				}
			}
			return ""
		}
		switch t {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, expectKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
			top--
		default:
			if top >= 0 && stack[top].obj && stack[top].expectKey {
				stack[top].key, _ = t.(string)
				stack[top].expectKey = false
				continue
			}
		}
		if top >= 0 && stack[top].obj {
			stack[top].expectKey = true
		}
	}
}

// Counter wraps a reader and answers "which line is offset n on" for
// offsets that only grow and that it has read, in memory bounded by the
// reader's read-ahead.
type Counter struct {
	r       io.Reader
	read    int64   // bytes read so far
	pending []int64 // offsets of newlines not yet counted
	line    int     // newlines before the last queried offset
}

// NewCounter wraps r.
func NewCounter(r io.Reader) *Counter { return &Counter{r: r} }

func (c *Counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			c.pending = append(c.pending, c.read+int64(i))
		}
	}
	c.read += int64(n)
	return n, err
}

// Line returns the 1-based line of offset n; n must not be smaller than
// the offset of the previous call.
func (c *Counter) Line(n int64) int {
	i, _ := slices.BinarySearch(c.pending, n)
	c.line += i
	c.pending = c.pending[:copy(c.pending, c.pending[i:])]
	return c.line + 1
}
