// Package progress shows how far a run is. Bar draws a one-line progress
// bar (done/total, rate, ETA, failures) on a terminal, redrawn at most
// every 200 ms, and stays quiet when its output is not a terminal. Plain
// prints plain lines (no carriage return, no escape sequence) every few
// seconds and at the end of each stage, for output that is a file or a
// pipe (nohup, a batch job, CI).
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Bar is a progress bar. The zero value is not usable; call New.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	total   int
	start   time.Time
	last    time.Time
	label   string
}

// New returns a bar writing to w; it draws only when w is a terminal.
func New(w io.Writer, label string, total int) *Bar {
	return &Bar{w: w, enabled: IsTerminal(w), total: total, start: time.Now(), label: label}
}

// IsTerminal reports whether w is a terminal: an *os.File open on one.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Line renders the bar's text for done requests of which failed failed:
// "label [=====>    ] 120/400 30% 85.2/s ETA 3s failed 2".
func Line(label string, done, failed, total int, elapsed time.Duration) string {
	const width = 24
	frac := 0.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	fill := int(frac * width)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	rate, _ := pace(done, total, elapsed, false)
	eta := "?"
	if rate > 0 && total >= done {
		eta = time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%s [%s] %d/%d %3.0f%% %.1f/s ETA %s failed %d", label, bar, done, total, 100*frac, rate, eta, failed)
}

// Update redraws the bar if enough time has passed.
func (b *Bar) Update(done, failed int) {
	if !b.enabled {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if now.Sub(b.last) < 200*time.Millisecond && done < b.total {
		return
	}
	b.last = now
	fmt.Fprintf(b.w, "\r\033[K%s", Line(b.label, done, failed, b.total, now.Sub(b.start)))
}

// Finish ends the bar's line.
func (b *Bar) Finish(done, failed int) {
	if !b.enabled {
		return
	}
	b.last = time.Time{}
	b.Update(done, failed)
	fmt.Fprintln(b.w)
}
