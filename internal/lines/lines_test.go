package lines

import (
	"strings"
	"testing"
)

func TestLongLineNamesLineAndLimit(t *testing.T) {
	cases := []struct {
		in, want string
		max, n   int
	}{
		{"a\nb\nc\n", "", 1024, 3},
		{"a\n" + strings.Repeat("x", 2000) + "\nc\n", "f.jsonl line 2: longer than the limit of 1024 bytes", 1024, 1},
		{strings.Repeat("y", 3<<20) + "\n", "f.jsonl line 1: longer than the limit of 2 MiB", 2 << 20, 0},
	}
	for _, c := range cases {
		s := New(strings.NewReader(c.in), "f.jsonl", c.max)
		n := 0
		for s.Scan() {
			n++
		}
		err := s.Err()
		if n != c.n || (c.want == "") != (err == nil) || (err != nil && err.Error() != c.want) {
			t.Errorf("%d lines, %v (want %d, %q)", n, err, c.n, c.want)
		}
	}
}
