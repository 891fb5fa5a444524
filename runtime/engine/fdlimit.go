package engine

// fileReserve is the number of descriptors of a soft open-file limit kept
// from the requests in flight: a quarter of it, at least 64, at most 256.
func fileReserve(soft uint64) uint64 {
	return min(max(soft/4, 64), 256)
}

// inflightAllowed is the number of requests that may be in flight under
// the soft open-file limit soft (at least 1).
func inflightAllowed(soft uint64) int {
	if soft <= fileReserve(soft)+1 {
		return 1
	}
	return int(min(soft-fileReserve(soft), 1<<30))
}

// clampTo bounds e's requests in flight (e.maxInflight) by soft, the
// process's soft RLIMIT_NOFILE (Go raises it to the hard limit at start,
// so it is what ulimit -n allowed), and says so once through Logf when
// the models' concurrency (MaxConcurrency per replica, summed) is past it.
func (e *Engine) clampTo(soft uint64) {
	want := e.concurrency()
	allowed := inflightAllowed(soft)
	e.maxInflight = allowed
	if want > allowed {
		e.opts.Logf("warning: concurrency %d clamped to %d: the open-file limit is %d (ulimit -n), and %d descriptors are kept for files, the cache and logs; raise it with ulimit -n to run more requests at once",
			want, allowed, soft, fileReserve(soft))
	}
}
