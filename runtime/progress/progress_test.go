package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	cases := []struct {
		done, failed, total int
		el                  time.Duration
		want                []string
	}{
		{0, 0, 100, 0, []string{"0/100", "0%", "ETA ?", "failed 0"}},
		{50, 2, 100, 10 * time.Second, []string{"50/100", "50%", "5.0/s", "ETA 10s", "failed 2", "[============            ]"}},
		{100, 0, 100, 4 * time.Second, []string{"100/100", "100%", "ETA 0s"}},
	}
	for _, c := range cases {
		got := Line("exp", c.done, c.failed, c.total, c.el)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
	}
}

func TestQuietWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "exp", 10)
	b.Update(5, 0)
	b.Finish(10, 0)
	if buf.Len() != 0 {
		t.Errorf("wrote %q to a non-terminal", buf.String())
	}
}
