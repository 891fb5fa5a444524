package jsonpos

import (
	"io"
	"strings"
	"testing"
)

func TestBadUTF8(t *testing.T) {
	cases := []struct {
		name, in, key, msg string
		bad                bool
	}{
		{"valid", `{"q": "हिन्दी"}`, "", "", false},
		{"in a value", "{\"a\": \"x\", \"question\": \"caf\xe9\"}", "question", "Latin-1", true},
		{"in a nested value", "{\"Answer\": {\"Value\": \"\xff\"}, \"b\": 1}", "Value", "invalid UTF-8", true},
		{"in a key", "{\"a\": 1, \"k\xe9y\": 2}", "k\ufffdy", "invalid UTF-8", true},
		{"in a list", "{\"aliases\": [\"ok\", \"\xc3\"]}", "aliases", "invalid UTF-8", true},
		{"utf-16", "\xff\xfe{\x00", "", "UTF-16", true},
		{"not json", "plain \xff text", "", "invalid UTF-8", true},
	}
	for _, c := range cases {
		off, key, msg, bad := BadUTF8([]byte(c.in))
		if bad != c.bad || key != c.key || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: off %d key %q msg %q bad %v", c.name, off, key, msg, bad)
		}
	}
}

// Line maps each offset to its 1-based line: a newline belongs to the
// line it ends, an offset past the end to the last line.
func TestLinesLine(t *testing.T) {
	l := NewCounter(strings.NewReader("a\nbc\n\nd"))
	io.ReadAll(l)
	for _, c := range []struct {
		off  int64
		line int
	}{{0, 1}, {1, 1}, {2, 2}, {4, 2}, {5, 3}, {6, 4}, {100, 4}} {
		if got := l.Line(c.off); got != c.line {
			t.Errorf("Line(%d) = %d, want %d", c.off, got, c.line)
		}
	}
	if got := NewCounter(strings.NewReader("")).Line(0); got != 1 {
		t.Errorf("empty document: line %d", got)
	}
}
