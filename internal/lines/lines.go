// Package lines reads line-oriented files (JSON Lines) with a bounded line
// length, counting lines so that every error names the file and line: a
// line over the limit says which line and what the limit is.
package lines

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// DefaultMax is the longest line read by default (64 MiB).
const DefaultMax = 64 << 20

// Scanner reads the lines of one file.
type Scanner struct {
	sc   *bufio.Scanner
	path string
	max  int
	n    int
}

// New reads r (named path in errors), lines of at most max bytes
// (DefaultMax when max ≤ 0).
func New(r io.Reader, path string, max int) *Scanner {
	if max <= 0 {
		max = DefaultMax
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, min(1<<20, max)), max)
	return &Scanner{sc: sc, path: path, max: max}
}

// Scan advances to the next line.
func (s *Scanner) Scan() bool {
	if s.sc.Scan() {
		s.n++
		return true
	}
	return false
}

// Bytes is the current line, without its end; valid until the next Scan.
func (s *Scanner) Bytes() []byte { return s.sc.Bytes() }

// Line is the 1-based number of the current line.
func (s *Scanner) Line() int { return s.n }

// Err is the error that stopped Scan, if any, naming the file and line.
func (s *Scanner) Err() error {
	err := s.sc.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("%s line %d: longer than the limit of %s", s.path, s.n+1, size(s.max))
	}
	return fmt.Errorf("reading %s after line %d: %w", s.path, s.n, err)
}

func size(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
