package reportfiles

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// storedAnswers is the answers table read back from the run's store a row group
// at a time (the last kept); fill keeps its first error (check), later rows empty.
type storedAnswers struct {
	table  *tables.Table
	mu     sync.Mutex
	rd     *scored.Reader
	schema *score.Schema
	g      int           // the group read last (-1: none)
	first  int           // its first row
	group  *tables.Table // its answers rows
	err    error
}

// openStoredAnswers opens the store at path for the answers table of n
// rows, refusing one whose key or row count is not the rows'.
func openStoredAnswers(path string, key scored.Key, n int, schema *score.Schema) (*storedAnswers, error) {
	rd, err := scored.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the scored answers back: %w", err)
	}
	m := rd.Meta()
	if changed := key.Changed(m.Key); len(changed) > 0 || m.Rows != n {
		rd.Close()
		return nil, fmt.Errorf("reading the scored answers back: %s changed since they were read (%d rows, was %d; changed: %v)", path, m.Rows, n, changed)
	}
	s := &storedAnswers{rd: rd, schema: schema, g: -1}
	s.table = tables.AnswerRows(nil, schema)
	s.table.Source = &tables.Source{N: n, Fill: s.fill}
	return s, nil
}

// fill writes row i's cells into row.
func (s *storedAnswers) fill(i int, row []any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		clear(row)
		return
	}
	if g := s.rd.GroupOf(i); g != s.g {
		first, rows, err := s.rd.Group(g)
		if err != nil {
			s.err, s.g, s.group = err, -1, nil
			clear(row)
			return
		}
		s.g, s.first, s.group = g, first, tables.AnswerRows(rows, s.schema)
	}
	s.group.Source.Fill(i-s.first, row)
}

// picked reads the rows of picks (in order: each group once) and returns
// the function writing answer i's row into buf; it stops when ctx is done.
func (s *storedAnswers) picked(ctx context.Context, picks []int) (func(i int, buf []any) []any, error) {
	rows := make(map[int][]any, len(picks))
	for k, i := range slices.Sorted(slices.Values(picks)) {
		if k%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rows[i] = s.table.Row(i, nil)
	}
	s.g = -1 // the table is read from the store again
	if err := s.check(); err != nil {
		return nil, err
	}
	return func(i int, buf []any) []any { return append(buf[:0], rows[i]...) }, nil
}

// check is the first error reading the rows back met.
func (s *storedAnswers) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return fmt.Errorf("reading the scored answers back: %w", s.err)
	}
	return nil
}
