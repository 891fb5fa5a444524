package experiment

import (
	"context"
	"fmt"
	"sync"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// Streamer is implemented by a plan that scores its records one at a
// time, as they are read, holding only what its scoring needs across
// records (a two-step answer's first stage, a judge's verdict) instead
// of every record. Its rows must be those its Score returns for the same
// records.
type Streamer interface {
	// Scorer starts one scoring pass.
	Scorer() (RecordScorer, error)
}

// RecordScorer is one streamed scoring pass.
type RecordScorer interface {
	// Record scores one extracted record on its own: the rows it gives
	// (none for a record only another's row reads), and whether Finish
	// needs the record itself (keep: its Kept, a few fields, is held). It
	// is called from several goroutines
	// at once, on every record read, including records the reading then
	// leaves out (a failed record a later ok one replaces); the record
	// is not used after Record returns.
	Record(r *engine.Record) (rows []score.Row, keep bool, err error)
	// Finish is called once with the rows of the records, in the order
	// Score would have met them, and what was kept of the records Record
	// asked to keep (same order): it joins what spans records and returns
	// the final rows.
	Finish(rows []score.Row, kept []Kept) ([]score.Row, error)
}

// Kept is what a streamed pass holds of a record another record's row
// reads (a two-step answer's first stage): its key fields, whether it
// succeeded, its latency and whether it came from the cache. It is a
// sixth of an engine.Record's size, which matters at a million first
// stages.
type Kept struct {
	Fields    engine.Key
	LatencyMS float64
	OK        bool // Status == engine.StatusOK
	Cached    bool
}

// KeptOf is what a pass keeps of r.
func KeptOf(r *engine.Record) Kept {
	return Kept{Fields: r.Fields, LatencyMS: r.LatencyMS, OK: r.Status == engine.StatusOK, Cached: r.Cached}
}

// SelfExtracting is implemented by a RecordScorer whose Record extracts
// each record itself, as the plan's Extract does (Record.Extracted of an
// ok record), when Extracts is true: ScoreContext then does not.
type SelfExtracting interface {
	Extracts() bool
}

// ScoreOptions adjust ScoreContext.
type ScoreOptions struct {
	// Progress, when set, is called with the records files' bytes read so
	// far and their total, from one goroutine.
	Progress func(read, total int64)
	// Records, when known (the manifest's count of records), sizes the
	// rows held at once.
	Records int
}

// Scored is what ScoreContext found.
type Scored struct {
	Rows     []score.Row
	Findings records.Findings
	// Lines is the number of record lines read.
	Lines int
}

// side is what a record gives a streamed pass besides its first row:
// that it gives none, its further rows, the index in sides.kept of what
// Finish needs of it (-1 for nothing).
type side struct {
	none bool
	kept int32
	more []score.Row
}

// sides holds the records' side results by line, from many goroutines.
type sides struct {
	mu   sync.Mutex
	m    map[int32]side
	kept []Kept
}

// put records line's side, and k when v keeps one.
func (s *sides) put(line int, v side, k *Kept) {
	s.mu.Lock()
	if k != nil {
		v.kept = int32(len(s.kept))
		s.kept = append(s.kept, *k)
	}
	s.m[int32(line)] = v
	s.mu.Unlock()
}

// ScoreContext is Score with a context (cancelling it stops the reading
// between batches of records, with ctx's error) and progress. Records are
// decoded and scored as they are read, on every core: a plan that is a
// Streamer holds only its rows and what spans records (one row per
// record, in place, with no copy); another plan's records are held
// (without their request bodies unless it reads them) and scored at the
// end, as Score does.
func (e *Experiment) ScoreContext(ctx context.Context, dir string, o ScoreOptions) (*Scored, error) {
	if e.plan == nil {
		return nil, fmt.Errorf("scoring %s: experiment %s is not built", dir, e.Name)
	}
	rr, ok := e.plan.(RequestReader)
	so := records.StreamOptions{Experiment: e.Name, WithRequests: ok && rr.ReadsRequests(), Progress: o.Progress, Records: o.Records}
	st, ok := e.plan.(Streamer)
	if !ok {
		recs, _, d, n, err := records.Unique(ctx, dir, so, func(_ int, r *engine.Record) (*engine.Record, error) {
			c := *r // the reader decodes the next line into r
			e.Extract(&c)
			return &c, nil
		})
		if err != nil {
			return nil, fmt.Errorf("scoring %s: %w", dir, err)
		}
		rows, err := e.plan.Score(recs)
		if err != nil {
			return nil, fmt.Errorf("scoring %s: %w", dir, err)
		}
		return &Scored{Rows: rows, Findings: d, Lines: n}, nil
	}
	sc, err := st.Scorer()
	if err != nil {
		return nil, fmt.Errorf("scoring %s: %w", dir, err)
	}
	self, _ := sc.(SelfExtracting)
	extracts := self != nil && self.Extracts()
	so.SkipExtracted = extracts
	sd := &sides{m: map[int32]side{}}
	rows, lines, d, n, err := records.Unique(ctx, dir, so, func(line int, r *engine.Record) (score.Row, error) {
		if !extracts {
			e.Extract(r)
		}
		rs, keep, err := sc.Record(r)
		if err != nil {
			return score.Row{}, fmt.Errorf("scoring %s: %w", r.Key, err)
		}
		v := side{kept: -1}
		var k *Kept
		if keep {
			kk := KeptOf(r)
			k = &kk
		}
		if len(rs) > 1 {
			v.more = rs[1:]
		}
		if len(rs) == 0 {
			v.none = true
		}
		if v.none || v.more != nil || k != nil {
			sd.put(line, v, k)
		}
		if len(rs) == 0 {
			return score.Row{}, nil
		}
		return rs[0], nil
	})
	if err != nil {
		return nil, fmt.Errorf("scoring %s: %w", dir, err)
	}
	// The kept records' rows in order, in place: the first row of each
	// record that gives one, its further rows (rare) in a new slice.
	var kept []Kept
	more := false
	at := 0
	for i := range rows {
		v, ok := sd.m[lines[i]]
		if ok && v.kept >= 0 {
			kept = append(kept, sd.kept[v.kept])
		}
		if ok && v.more != nil {
			more = true
		}
		if ok && v.none {
			continue
		}
		rows[at] = rows[i]
		lines[at] = lines[i]
		at++
	}
	clear(rows[at:])
	rows, lines = rows[:at], lines[:at]
	if more {
		var all []score.Row
		for i := range rows {
			all = append(all, rows[i])
			all = append(all, sd.m[lines[i]].more...)
		}
		rows = all
	}
	sd = nil
	if rows, err = sc.Finish(rows, kept); err != nil {
		return nil, fmt.Errorf("scoring %s: %w", dir, err)
	}
	return &Scored{Rows: rows, Findings: d, Lines: n}, nil
}
