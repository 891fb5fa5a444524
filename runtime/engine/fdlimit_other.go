//go:build !unix

package engine

// openFileLimit reports no limit where there is no RLIMIT_NOFILE.
func openFileLimit() (uint64, bool) { return 0, false }
