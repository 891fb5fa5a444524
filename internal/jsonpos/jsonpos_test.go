package jsonpos

import (
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
