// Package jsonpos maps byte offsets of a JSON document to line numbers,
// so that loaders can name the line of a bad record.
package jsonpos

import "bytes"

// Lines answers "which line is offset n on" for one document.
type Lines struct{ starts []int }

// New indexes the line starts of b.
func New(b []byte) *Lines {
	l := &Lines{starts: []int{0}}
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return l
		}
		i += j + 1
		l.starts = append(l.starts, i)
	}
}

// Line returns the 1-based line of byte offset n.
func (l *Lines) Line(n int64) int {
	lo, hi := 0, len(l.starts)
	for lo+1 < hi {
		m := (lo + hi) / 2
		if int64(l.starts[m]) <= n {
			lo = m
		} else {
			hi = m
		}
	}
	return lo + 1
}
