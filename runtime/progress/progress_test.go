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

func TestPlainLine(t *testing.T) {
	cases := []struct {
		name string
		s    State
		want string
	}{
		{"running", State{Label: "exp", Done: 1200, Total: 8800, Failed: 4, Cached: 310, Elapsed: 3 * time.Second},
			"exp: 1200/8800 (13.6 %), 4 failed, 310 cached, 400.0/s, about 19 s left"},
		{"nothing done yet", State{Label: "exp stage 2", Total: 10, Elapsed: time.Second},
			"exp stage 2: 0/10 (0.0 %), 0 failed, 0 cached, 0.0/s, time left unknown"},
		{"minutes left", State{Label: "e", Done: 10, Total: 2010, Elapsed: time.Second},
			"e: 10/2010 (0.5 %), 0 failed, 0 cached, 10.0/s, about 3 min 20 s left"},
		{"hours left", State{Label: "e", Done: 1, Total: 7501, Elapsed: time.Second},
			"e: 1/7501 (0.0 %), 0 failed, 0 cached, 1.0/s, about 2 h 5 min left"},
		{"seconds left", State{Label: "e", Done: 10, Total: 14, Elapsed: time.Second},
			"e: 10/14 (71.4 %), 0 failed, 0 cached, 10.0/s, about 0.4 s left"},
		{"final", State{Label: "exp", Done: 8800, Total: 8800, Failed: 4, Cached: 310, Elapsed: 20500 * time.Millisecond, Final: true},
			"exp: 8800/8800 (100.0 %), 4 failed, 310 cached, 429.3/s, done in 21 s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := PlainLine(c.s); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// Plain prints a line each time a stage's states reach the interval since
// its start or last line, then the final state once, and starts again with
// the next stage; lines are plain (no carriage return, no escape).
func TestPlainEveryAndAtTheEnd(t *testing.T) {
	ms := time.Millisecond
	type step struct {
		s    State
		want string // the line printed, "" for none
	}
	st := func(label string, done int, el time.Duration, final bool) State {
		return State{Label: label, Done: done, Total: 10, Cached: 1, Elapsed: el, Final: final}
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"ticks and the end", []step{
			{st("e", 1, 40*ms, false), ""},
			{st("e", 2, 100*ms, false), "e: 2/10 (20.0 %), 0 failed, 1 cached, 20.0/s, about 0.4 s left"},
			{st("e", 3, 150*ms, false), ""},
			{st("e", 4, 230*ms, false), "e: 4/10 (40.0 %), 0 failed, 1 cached, 17.4/s, about 0.3 s left"},
			{st("e", 5, 300*ms, false), ""}, // 100 ms after the last line, not after 200
			{st("e", 10, 310*ms, true), "e: 10/10 (100.0 %), 0 failed, 1 cached, 32.3/s, done in 0.3 s"},
		}},
		{"a short stage prints its end only", []step{
			{st("e", 5, 10*ms, false), ""},
			{st("e", 10, 20*ms, true), "e: 10/10 (100.0 %), 0 failed, 1 cached, 500.0/s, done in 0.0 s"},
		}},
		{"stages start again", []step{
			{st("e stage 1", 10, 150*ms, true), "e stage 1: 10/10 (100.0 %), 0 failed, 1 cached, 66.7/s, done in 0.1 s"},
			{st("e stage 2", 1, 50*ms, false), ""},
			{st("e stage 2", 2, 100*ms, false), "e stage 2: 2/10 (20.0 %), 0 failed, 1 cached, 20.0/s, about 0.4 s left"},
			{st("e stage 2", 10, 120*ms, true), "e stage 2: 10/10 (100.0 %), 0 failed, 1 cached, 83.3/s, done in 0.1 s"},
			{st("e stage 2", 1, 30*ms, false), ""}, // a run after the first, same label
			{st("e stage 2", 2, 110*ms, false), "e stage 2: 2/10 (20.0 %), 0 failed, 1 cached, 18.2/s, about 0.4 s left"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := NewPlain(&buf, 100*ms)
			for i, s := range c.steps {
				buf.Reset()
				p.Update(s.s)
				want := ""
				if s.want != "" {
					want = s.want + "\n"
				}
				if got := buf.String(); got != want {
					t.Errorf("step %d: printed %q, want %q", i, got, want)
				}
			}
		})
	}
}

func TestPlainOff(t *testing.T) {
	var buf bytes.Buffer
	p := NewPlain(&buf, 0)
	p.Update(State{Label: "exp", Done: 1, Total: 2, Elapsed: time.Hour})
	p.Update(State{Label: "exp", Done: 2, Total: 2, Elapsed: time.Hour, Final: true})
	if s := buf.String(); s != "" {
		t.Errorf("an interval of 0 printed %q", s)
	}
}

func TestStepLine(t *testing.T) {
	for _, tc := range []struct {
		done, total int
		el          time.Duration
		final       bool
		want        string
	}{
		{0, 0, 0, false, "report: x: started"},
		{0, 0, 800 * time.Millisecond, true, "report: x: done in 0.8 s"},
		{0, 10, 0, false, "report: x: 0/10 (0.0 %), 0.0/s, time left unknown"},
		{30, 120, 3 * time.Second, false, "report: x: 30/120 (25.0 %), 10.0/s, about 9.0 s left"},
		{120, 120, 12 * time.Second, true, "report: x: 120/120 (100.0 %), 10.0/s, done in 12 s"},
	} {
		if got := StepLine("report: x", tc.done, tc.total, tc.el, tc.final); got != tc.want {
			t.Errorf("StepLine(%d, %d, %v, %v) = %q, want %q", tc.done, tc.total, tc.el, tc.final, got, tc.want)
		}
	}
}
