package benchdata

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the calling process has used so far, user and
// system (getrusage); a benchmark reports it beside the wall time, which
// a shared machine's load moves more.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
