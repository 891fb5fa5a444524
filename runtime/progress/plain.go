package progress

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// DefaultEvery is how often Plain prints a line while a stage runs, unless
// told otherwise.
const DefaultEvery = 5 * time.Second

// State is one stage's progress as Plain shows it.
type State struct {
	Label  string // what is running: the experiment, and its stage when it has several
	Done   int    // records written in this stage
	Total  int    // requests the stage sends or answers from the cache
	Failed int    // of Done, failed
	Cached int    // of Done, answered from the cache
	// Elapsed is the time since the stage started.
	Elapsed time.Duration
	// Final marks the stage's last state: Plain prints it and stops
	// ticking until the next stage's first state.
	Final bool
}

// PlainLine renders s as one line without carriage return or escape
// sequence, e.g.
//
//	exp: 1200/8800 (13.6 %), 4 failed, 310 cached, 412.3/s, about 18 s left
//
// and, for a final state, "…, done in 21 s" instead of the time left.
// The rate is Done per second of Elapsed; the time left is unknown while
// nothing is done.
func PlainLine(s State) string {
	pct := 0.0
	if s.Total > 0 {
		pct = 100 * float64(s.Done) / float64(s.Total)
	}
	rate, when := pace(s.Done, s.Total, s.Elapsed, s.Final)
	return fmt.Sprintf("%s: %d/%d (%.1f %%), %d failed, %d cached, %.1f/s, %s", s.Label, s.Done, s.Total, pct, s.Failed, s.Cached, rate, when)
}

// humanDuration writes d as "0.4 s" (under 10 s), "18 s", "3 min 20 s"
// or "2 h 5 min", rounded to the last unit shown.
func humanDuration(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f s", max(d.Seconds(), 0))
	}
	sec := int64(math.Round(d.Seconds()))
	switch {
	case sec < 60:
		return fmt.Sprintf("%d s", sec)
	case sec < 3600:
		return fmt.Sprintf("%d min %d s", sec/60, sec%60)
	}
	min := (sec + 30) / 60
	return fmt.Sprintf("%d h %d min", min/60, min%60)
}

// Plain prints a stage's progress as plain lines (PlainLine) on a writer
// that is not a terminal: one when at least the interval has passed (by
// the states' Elapsed) since the stage started or since its last line, and
// one for the stage's final state. It prints from the goroutine that calls
// Update, one Write per line, so w needs no more locking than the caller's
// other writes to it; while no state arrives (no record is written),
// nothing is printed. The zero value is not usable; call NewPlain.
type Plain struct {
	w     io.Writer
	every time.Duration

	mu    sync.Mutex
	label string        // the stage's
	last  time.Duration // Elapsed of the stage's last state
	next  time.Duration // Elapsed from which the next line is due
	ended bool          // the stage's final state was printed
}

// NewPlain returns a Plain printing every interval; an interval of 0 or
// less prints nothing at all.
func NewPlain(w io.Writer, every time.Duration) *Plain {
	return &Plain{w: w, every: every, ended: true}
}

// Update takes a stage's latest state and prints it if a line is due: a
// final state always, another when its Elapsed reaches the interval after
// the previous line (or the stage's start). A state after a final one, or
// with another label or an earlier Elapsed, starts a new stage.
func (p *Plain) Update(s State) {
	if p.every <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended || s.Label != p.label || s.Elapsed < p.last {
		p.label, p.next, p.ended = s.Label, p.every, false
	}
	p.last = s.Elapsed
	if !s.Final && s.Elapsed < p.next {
		return
	}
	p.next = s.Elapsed + p.every
	p.ended = s.Final
	io.WriteString(p.w, PlainLine(s)+"\n")
}

// StepLine renders one step of a long job that is not a run's stage (a
// report's: reading the records, writing a sheet) as one plain line, e.g.
//
//	report: sheet samples: 120000/424500 (28.3 %), 15210.4/s, about 20 s left
//	report: sheet samples: 424500/424500 (100.0 %), 15102.7/s, done in 28 s
//	report: HTML report: done in 0.8 s
//
// A step without rows (total 0) shows only its time; the rate is done
// per second of elapsed, and the time left is unknown while nothing is
// done.
func StepLine(label string, done, total int, elapsed time.Duration, final bool) string {
	rate, when := pace(done, total, elapsed, final)
	if total <= 0 {
		if !final {
			return label + ": started"
		}
		return label + ": " + when
	}
	return fmt.Sprintf("%s: %d/%d (%.1f %%), %.1f/s, %s", label, done, total, 100*float64(done)/float64(total), rate, when)
}

// pace is done per second of elapsed, and when: "done in …" when final,
// "about … left" at that rate, or "time left unknown" while nothing is done.
func pace(done, total int, elapsed time.Duration, final bool) (rate float64, when string) {
	if sec := elapsed.Seconds(); sec > 0 {
		rate = float64(done) / sec
	}
	switch {
	case final:
		return rate, "done in " + humanDuration(elapsed)
	case rate > 0 && total >= done:
		return rate, "about " + humanDuration(time.Duration(float64(total-done)/rate*float64(time.Second))) + " left"
	}
	return rate, "time left unknown"
}
