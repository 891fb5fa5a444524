package experiment

import (
	"context"
	"fmt"

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
	// needs the record itself (keep: a copy without its response text,
	// request or logprobs is held). It is called from several goroutines
	// at once, on every record read, including records the reading then
	// leaves out (a failed record a later ok one replaces); the record
	// is not used after Record returns.
	Record(r *engine.Record) (rows []score.Row, keep bool, err error)
	// Finish is called once with the rows of the kept records, in the
	// order Score would have met them, and the kept records (same order):
	// it joins what spans records and returns the final rows.
	Finish(rows []score.Row, kept []*engine.Record) ([]score.Row, error)
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
}

// Scored is what ScoreContext found.
type Scored struct {
	Rows     []score.Row
	Findings records.Findings
	// Lines is the number of record lines read.
	Lines int
}

// streamed is what one record gives a streamed pass: its row inline (a
// record gives at most one, but for rare plans), without an allocation
// per record.
type streamed struct {
	row  score.Row
	n    int8        // rows: 0, 1 (row), or more (row, then more)
	more []score.Row // rows after the first
	kept *engine.Record
	rec  *engine.Record // a plan that does not stream: the record itself (its request dropped unless read)
}

// ScoreContext is Score with a context (cancelling it stops the reading
// between batches of records, with ctx's error) and progress. Records are
// decoded and scored as they are read, on every core: a plan that is a
// Streamer holds only its rows and what spans records; another plan's
// records are held (without their request bodies unless it reads them)
// and scored at the end, as Score does.
func (e *Experiment) ScoreContext(ctx context.Context, dir string, o ScoreOptions) (*Scored, error) {
	if e.plan == nil {
		return nil, fmt.Errorf("scoring %s: experiment %s is not built", dir, e.Name)
	}
	rr, ok := e.plan.(RequestReader)
	withRequests := ok && rr.ReadsRequests()
	var sc RecordScorer
	if s, ok := e.plan.(Streamer); ok {
		var err error
		if sc, err = s.Scorer(); err != nil {
			return nil, fmt.Errorf("scoring %s: %w", dir, err)
		}
	}
	_, selfExtracting := sc.(SelfExtracting)
	work := func(r *engine.Record) (streamed, error) {
		if !selfExtracting || !sc.(SelfExtracting).Extracts() {
			e.Extract(r)
		}
		if sc == nil {
			return streamed{rec: r}, nil
		}
		rows, keep, err := sc.Record(r)
		if err != nil {
			return streamed{}, fmt.Errorf("scoring %s: %w", r.Key, err)
		}
		var s streamed
		if len(rows) > 0 {
			s.row, s.n = rows[0], int8(min(len(rows), 2))
			if len(rows) > 1 {
				s.more = rows[1:]
			}
		}
		if keep {
			s.kept = slim(r)
		}
		return s, nil
	}
	vals, d, n, err := records.Unique(ctx, dir, records.StreamOptions{Experiment: e.Name, WithRequests: withRequests, Progress: o.Progress,
		SkipExtracted: selfExtracting && sc.(SelfExtracting).Extracts()}, work)
	if err != nil {
		return nil, fmt.Errorf("scoring %s: %w", dir, err)
	}
	out := &Scored{Findings: d, Lines: n}
	if sc == nil {
		recs := make([]*engine.Record, len(vals))
		for i, v := range vals {
			recs[i] = v.rec
		}
		vals = nil
		if out.Rows, err = e.plan.Score(recs); err != nil {
			return nil, fmt.Errorf("scoring %s: %w", dir, err)
		}
		return out, nil
	}
	nrows := 0
	var kept []*engine.Record
	for i := range vals {
		nrows += int(min(vals[i].n, 1)) + len(vals[i].more)
		if vals[i].kept != nil {
			kept = append(kept, vals[i].kept)
		}
	}
	rows := make([]score.Row, 0, nrows)
	for i := range vals {
		if vals[i].n > 0 {
			rows = append(rows, vals[i].row)
			rows = append(rows, vals[i].more...)
		}
	}
	vals = nil
	if out.Rows, err = sc.Finish(rows, kept); err != nil {
		return nil, fmt.Errorf("scoring %s: %w", dir, err)
	}
	return out, nil
}

// slim is the part of a record a Finish step reads: its key, status,
// timing, cache and extraction, without the texts and bodies that make a
// record large.
func slim(r *engine.Record) *engine.Record {
	return &engine.Record{Key: r.Key, Fields: r.Fields, Kind: r.Kind, Status: r.Status, Error: r.Error,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, LatencyMS: r.LatencyMS,
		Cached: r.Cached, EmptyResponse: r.EmptyResponse, Simulated: r.Simulated, Extracted: r.Extracted}
}
