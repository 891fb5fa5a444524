package progress

import (
	"fmt"
	"time"
)

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
