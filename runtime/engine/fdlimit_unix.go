//go:build unix

package engine

import "syscall"

// openFileLimit is the process's soft RLIMIT_NOFILE.
func openFileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur <= 0 {
		return 0, false
	}
	return uint64(rl.Cur), true
}
