package experiment

import (
	"context"
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

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
	// is called from several goroutines at once, on every record read,
	// including records the reading then leaves out (a failed record a
	// later ok one replaces); the record is not used after Record returns.
	// Its CacheKey and RequestSHA256 are empty: no row reads them, and
	// the pass does not read them (records.StreamOptions.SkipDigests).
	// The rows are appended to rows (a buffer the caller reuses once it
	// has copied them) and returned.
	Record(r *engine.Record, rows []score.Row) (_ []score.Row, keep bool, err error)
	// Finish is called once with the rows of the records, in the order
	// the plan's Score would have met them, and what was kept of the records Record
	// asked to keep (same order): it joins what spans records and returns
	// the final rows.
	Finish(rows []score.Row, kept []Kept) ([]score.Row, error)
}

// Kept is what a streamed pass holds of a record another record's row
// reads (a two-step answer's first stage): its key fields, whether it
// succeeded, its latency and whether it came from the cache.
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

// made is where a record's first row and kept fields are in a pass (-1: none).
type made struct{ row, kept int32 }

// pass holds what the records gave a streamed pass, from many goroutines:
// each record's first row packed, in blocks of rowBlock, what was kept
// (in blocks too), and the further rows of a record, by line.
type pass struct {
	mu      sync.Mutex
	blocks  [][]packed // each filled by one goroutine (its packer)
	texts   *texts
	details []*score.Detail
	kept    [][]Kept
	more    map[int32][]score.Row
}

func newPass() *pass {
	t := &texts{seed: maphash.MakeSeed(), all: []string{""}}
	for i := range t.shard {
		t.shard[i].ids = map[string]uint32{}
	}
	return &pass{texts: t}
}

// rowBlock is the rows of one of pass's blocks.
const rowBlock = 4096

// put holds a copy of rs and k (when not nil) in the blocks of pk, the
// calling goroutine's packer, and says where.
func (p *pass) put(line int, rs []score.Row, k *Kept, pk *packer) made {
	m := made{row: -1, kept: -1}
	if len(rs) == 0 && k == nil {
		return m
	}
	if pk.pass != p { // a packer of another pass: its blocks are not this one's
		pk.pass, pk.rows, pk.kept = p, filling[packed]{}, filling[Kept]{}
	}
	if len(rs) > 0 {
		row := pk.pack(p.texts, &rs[0])
		if rs[0].Detail != nil || len(rs) > 1 {
			p.mu.Lock()
			if rs[0].Detail != nil {
				row.detail = int32(len(p.details))
				p.details = append(p.details, rs[0].Detail)
			}
			if len(rs) > 1 {
				if p.more == nil {
					p.more = map[int32][]score.Row{}
				}
				p.more[int32(line)] = slices.Clone(rs[1:])
			}
			p.mu.Unlock()
		}
		m.row = pk.rows.put(&p.mu, &p.blocks, row)
	}
	if k != nil {
		m.kept = pk.kept.put(&p.mu, &p.kept, *k)
	}
	return m
}

// ordered are the rows of ms (lines[i] is ms[i]'s line) and what was kept
// of them, in ms's order, copied on parts goroutines (0: GOMAXPROCS, at
// most one per 16,384 records); each block is let go once copied.
func (p *pass) ordered(ms []made, lines []int32, parts int) ([]score.Row, []Kept) {
	if parts <= 0 {
		parts = min(runtime.GOMAXPROCS(0), len(ms)/(1<<14)) // a part worth a goroutine
	}
	parts = max(1, min(parts, len(ms)))
	left := make([]atomic.Int32, len(p.blocks)) // rows of each block still to copy
	from := make([]int, parts+1)                // part k is ms[from[k]:from[k+1]]
	at := make([]int, parts+1)                  // and rows[at[k]:at[k+1]]
	kat := make([]int, parts+1)                 // and kept[kat[k]:kat[k+1]]
	for k := range parts {
		from[k+1] = len(ms) * (k + 1) / parts
	}
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() {
			n, nk := 0, 0
			for i := from[k]; i < from[k+1]; i++ {
				m := ms[i]
				if m.row >= 0 {
					left[m.row/rowBlock].Add(1)
					n++
					if p.more != nil {
						n += len(p.more[lines[i]])
					}
				}
				if m.kept >= 0 {
					nk++
				}
			}
			at[k+1], kat[k+1] = n, nk
		})
	}
	wg.Wait()
	for k := range parts {
		at[k+1] += at[k]
		kat[k+1] += kat[k]
	}
	kept := make([]Kept, kat[parts])
	rows := make([]score.Row, at[parts])
	all := p.texts.all
	for k := range parts {
		wg.Go(func() {
			j, jk := at[k], kat[k]
			for i := from[k]; i < from[k+1]; i++ {
				m := ms[i]
				if m.kept >= 0 {
					kept[jk] = p.kept[m.kept/rowBlock][m.kept%rowBlock]
					jk++
				}
				if m.row < 0 {
					continue
				}
				b := m.row / rowBlock
				rows[j] = unpack(&p.blocks[b][m.row%rowBlock], all, p.details)
				j++
				if p.more != nil {
					j += copy(rows[j:], p.more[lines[i]])
				}
				if left[b].Add(-1) == 0 {
					p.blocks[b] = nil
				}
			}
		})
	}
	wg.Wait()
	p.blocks, p.more, p.details, p.texts, p.kept = nil, nil, nil, nil, nil
	return rows, kept
}

// ScoreContext reads dir's records and scores every answer with the
// study's rules, one per key: when a key was recorded more than once (a
// directory two runs wrote into at once), records.Unique keeps one;
// records of another experiment, edited records and keys whose answers
// disagree are left out, and the Findings say which, with their lines.
// Records imported from a batch, or written before a rule changed, are
// extracted again with the study's rule first. Cancelling ctx stops the
// reading between batches of records, with ctx's error. Records are
// decoded and scored as they are read, on every core: a plan that is a
// Streamer holds only its packed rows (packed.go) and what spans records;
// another plan's records are held (without their request bodies unless it
// reads them) and scored at the end by the plan's Score.
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
	so.SkipDigests = true // a scorer reads neither a record's cache key nor its request's digest
	p := newPass()
	type scratch struct {
		rows []score.Row
		pk   packer
	}
	var pool sync.Pool // of *scratch
	ms, lines, d, n, err := records.Unique(ctx, dir, so, func(line int, r *engine.Record) (made, error) {
		if !extracts {
			e.Extract(r)
		}
		buf, _ := pool.Get().(*scratch)
		if buf == nil {
			buf = new(scratch)
		}
		defer pool.Put(buf)
		rs, keep, err := sc.Record(r, buf.rows[:0])
		buf.rows = rs
		if err != nil {
			return made{}, fmt.Errorf("scoring %s: %w", r.Key, err)
		}
		var k *Kept
		if keep {
			kk := KeptOf(r)
			k = &kk
		}
		return p.put(line, rs, k, &buf.pk), nil
	})
	if err != nil {
		return nil, fmt.Errorf("scoring %s: %w", dir, err)
	}
	// What reading held (its decoding buffers, Unique's index of keys) is
	// garbage now: a collection before the rows are allocated lets them
	// reuse its memory, and keeps one from running while they are written.
	runtime.GC()
	rows, kept := p.ordered(ms, lines, 0)
	ms, lines = nil, nil
	if rows, err = sc.Finish(rows, kept); err != nil {
		return nil, fmt.Errorf("scoring %s: %w", dir, err)
	}
	return &Scored{Rows: rows, Findings: d, Lines: n}, nil
}
