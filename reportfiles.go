package bhasha

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/hashindex"
	"github.com/bhashalab/bhasha/internal/jsonscan"
	"github.com/bhashalab/bhasha/internal/memlimit"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// ReportStep is how far writing a report has come: the step (reading
// the records' prompts and responses, a sheet, the HTML file), rows done
// of its total (0 of 0 for a step without rows), the time since it
// started, and Final at its end.
type ReportStep = report.Step

// ReportOption adjusts how WriteReport writes the reports.
type ReportOption func(*reportConfig)

type reportConfig struct {
	progress  func(ReportStep)
	sheetRows int
	release   bool
	keepUpTo  int // ReleaseRows keeps the rows of a run of at most this many answers
	tables    func([]*Table)
	early     bool // the records' texts read beside the tables (ReportTables)
}

// ReportTables has WriteReport write every table as CSV under DIR/tables
// too, as WriteTables does, and call fn with them once written (before
// the HTML and the workbook). A run directory that cannot be written
// (records.IsReadOnly) gets no table files: fn is called with none, and
// Notes says so. When WriteReport builds the tables itself
// (none built before) for a workbook, and the run has at most earlyRows
// scored answers, the records' prompts and responses are read meanwhile,
// on goroutines of their own: the two need nothing of each other, and
// holding the rows and that pass's buffers at once fits such a run.
// Otherwise the tables are written first, paced as WriteTables paces
// them, and the report follows, as when WriteTables is called before
// WriteReport. For a program that writes the tables and the report, as
// bhasha report does.
func ReportTables(fn func([]*Table)) ReportOption {
	return func(c *reportConfig) { c.tables = fn }
}

// earlyRows is the most scored answers a report reads the records' texts
// for beside building its tables (ReportTables): their rows are about 300
// bytes each, so at most about 300 MB held beside that pass.
const earlyRows = 1 << 20

// ReportProgress has fn told of each step of writing the reports: at its
// start, every 20,000 rows and at its end (the command line prints a
// line per step; a notebook cell shows it in place, kernel.Save).
func ReportProgress(fn func(ReportStep)) ReportOption {
	return func(c *reportConfig) { c.progress = fn }
}

// SheetRows bounds the rows of the workbook's long sheets (the samples,
// and a table over report.StreamRows rows; default report.MaxSampleRows,
// within Excel's 1,048,576 rows a sheet). A run with more answers keeps
// the first n in the sheet, whose last row, like the README sheet, says
// how many were left out and that tables/answers.csv and records.jsonl
// hold them all: the workbook is not split into continuation sheets,
// which no spreadsheet filters or sorts as one.
func SheetRows(n int) ReportOption { return func(c *reportConfig) { c.sheetRows = n } }

// ReleaseRows has WriteReport let go of the run's scored answers once the
// report's tables are built, when the run has more than earlyRows of
// them, and read the answers it lists (the explorer's, the samples
// sheet's) back from the run's store of scored answers
// (DIR/scored.parquet, package scored) a row group at a time: at the
// papers' 4.9 million answers the rows are 1.3 GB that the rest of the
// report (reading every record's text, writing the workbook) need not
// hold. A smaller run's rows (at most about 300 MB) are kept: reading
// them back took longer than holding them (on the 460,500-record run,
// 0.2–0.8 s of a 6–8 s report, for 30 MB more at its peak). Afterwards
// the Results is as Open left it: a later call that needs the answers
// reads them back from the store and builds its tables again (seconds at
// that scale). For a program that writes one report, as bhasha report
// does; not while another goroutine uses the Results. Without a current
// store (NoScoredStore, a run directory that cannot be written) it
// changes nothing: the report reads the rows in memory.
func ReleaseRows() ReportOption { return releaseAbove(earlyRows) }

// releaseAbove is ReleaseRows for a run of more than n scored answers
// (0: any run, as the tests ask).
func releaseAbove(n int) ReportOption {
	return func(c *reportConfig) { c.release, c.keepUpTo = true, n }
}

// reportHeadroom is what WriteReport lets the heap grow beyond its live
// heap: more than scoring's (memlimit.Headroom), since writing the
// workbook and decoding every prompt allocate several times the live heap
// and a tighter limit spends the time saved by streaming on collections.
const reportHeadroom = 256 << 20

// ExplorerSeed seeds the random draw of the HTML explorer's samples
// (explorerPicks): the same run gives the same page.
const ExplorerSeed = 20

// WriteReport writes the run's HTML report to html and its workbook to
// xlsx (either may be "", for none), reading the records' prompts and
// responses once for both. Each file is written atomically (a temporary
// file renamed into place when complete): when ctx ends, or anything
// fails, the file being written is left as it was, and only a file
// already complete has been replaced. The HTML report is written first.
//
// Memory does not grow with the prompts and responses: those of the
// explorer's bounded selection (ExplorerSamples) are kept, and the
// workbook's samples sheet streams every answer's from a temporary file
// (removed at the end) in table order, beside the answers table's rows.
//
// While it writes, Go's soft memory limit follows the live heap
// (internal/memlimit: at most reportHeadroom beyond it above
// memlimit.Floor), unless GOMEMLIMIT is set; the limit there was is given
// back at the end.
func (r *Results) WriteReport(ctx context.Context, html, xlsx string, opts ...ReportOption) error {
	var c reportConfig
	for _, o := range opts {
		o(&c)
	}
	if c.tables != nil {
		// The records' texts are read beside the tables only for a
		// workbook of a run small enough (earlyRows); else the tables are
		// written first, paced as WriteTables paces them.
		if c.early = xlsx != "" && r.tables == nil; c.early {
			n, err := r.Scored() // counted from the store when it is current
			if err != nil {
				return err
			}
			c.early = n <= earlyRows
		}
		if !c.early {
			if err := r.reportTables(&c, report.Options{Progress: c.progress}); err != nil {
				return err
			}
		}
	}
	defer memlimit.Hold(memlimit.Floor, reportHeadroom, 4)()
	open := func(path string) (*atomicfile.File, error) {
		if path == "" {
			return nil, nil
		}
		return atomicfile.Create(path)
	}
	hf, err := open(html)
	if err != nil {
		return fmt.Errorf("HTML report of %s: %w", r.dir, err)
	}
	if hf != nil {
		defer hf.Abort()
	}
	xf, err := open(xlsx)
	if err != nil {
		return fmt.Errorf("workbook of %s: %w", r.dir, err)
	}
	if xf != nil {
		defer xf.Abort()
	}
	var hw, xw io.Writer
	if hf != nil {
		hw = hf
	}
	if xf != nil {
		xw = xf
	}
	return r.writeReports(ctx, c, hw, xw, func() error {
		if hf == nil {
			return nil
		}
		if err := hf.Commit(); err != nil {
			return fmt.Errorf("HTML report of %s: %w", r.dir, err)
		}
		return nil
	}, func() error {
		if xf == nil {
			return nil
		}
		if err := xf.Commit(); err != nil {
			return fmt.Errorf("workbook of %s: %w", r.dir, err)
		}
		return nil
	})
}

// reportTables writes the tables' files (ReportTables: WriteTables), as
// the step "tables" of o.Progress, and tells c.tables of them, once.
func (r *Results) reportTables(c *reportConfig, o report.Options) error {
	st := stepOf(o, "tables", 0)
	ts, err := r.WriteTables()
	if records.IsReadOnly(err) {
		// Nothing can be written there: the report holds the tables.
		r.notes = append(r.notes, fmt.Sprintf("the run directory %s is read-only: its tables were not written under %s (the report holds them)", r.dir, filepath.Join(r.dir, "tables")))
		ts, err = nil, nil
	}
	if err != nil {
		return err
	}
	st.done(0)
	c.tables(ts)
	c.tables = nil
	return nil
}

// writeReports writes the HTML report into hw and the workbook into xw
// (either nil for none), calling htmlDone once the HTML is written and
// xlsxDone once the workbook is.
func (r *Results) writeReports(ctx context.Context, c reportConfig, hw, xw io.Writer, htmlDone, xlsxDone func() error) error {
	o := report.Options{Progress: c.progress, SheetRows: c.sheetRows}
	if fn := o.Progress; fn != nil {
		// The steps that run at once (the records' texts beside the
		// tables, the HTML beside the workbook) tell of themselves in turn.
		var mu sync.Mutex
		o.Progress = func(s report.Step) {
			mu.Lock()
			defer mu.Unlock()
			fn(s)
		}
	}
	// The records' texts read beside the tables (ReportTables): every
	// answer's, for the workbook, into sp; early ends with the pass.
	var sp *textSpill
	var early chan error
	if c.early { // a workbook of at most earlyRows answers (WriteReport)
		if err := r.score(); err != nil {
			return err
		}
		n := len(r.rows)
		hash := newKeyHash()
		want := r.rowIndex(hash)
		var err error
		if sp, err = newTextSpill(n); err != nil {
			return fmt.Errorf("report of %s: %w", r.dir, err)
		}
		defer sp.Close()
		pass, stop := context.WithCancel(ctx)
		early = make(chan error, 1)
		go func() {
			err := r.readTexts(pass, o, want, hash, n, sp.seen, sp.put)
			if err == nil {
				if err = sp.flush(); err != nil {
					err = fmt.Errorf("report of %s: %w", r.dir, err)
				}
			}
			early <- err
		}()
		defer func() {
			stop()
			if early != nil { // the report ended before the pass was waited for
				<-early
			}
		}()
	}
	waitEarly := func() error {
		err := <-early
		early = nil
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		return err // readTexts says what it was reading
	}
	if c.tables != nil {
		if err := r.reportTables(&c, o); err != nil {
			return err
		}
	}
	p, err := r.page()
	if err != nil {
		return err
	}
	answers, ok := r.set.Table("answers") // made row by row: the report holds none of them
	if !ok {
		return fmt.Errorf("report of %s: the run has no answers table", r.dir)
	}
	var picks []int
	var pickKeys []string // the record key of each pick (the rows may be let go below)
	var how string
	if hw != nil {
		picks, how = r.explorerPicks(ExplorerSamples)
		pickKeys = r.rowKeys(picks)
	}
	n := len(r.rows)
	rowAt := answers.Row                 // the explorer's rows
	check := func() error { return nil } // whether the rows read back were read
	var want *hashindex.Index
	hash := newKeyHash()
	if c.release && r.storeKey != nil && n > c.keepUpTo {
		// A store that cannot be read back now (replaced, removed) leaves
		// the rows in memory: the report reads them there.
		if st, err := openStoredAnswers(filepath.Join(r.dir, scored.FileName), r.storeKey, n, r.schema); err == nil {
			defer st.close()
			if pr, err := st.picked(ctx, picks); err == nil {
				rowAt, answers, check = pr.Row, st.table, st.check
				p.Tables = slices.Clone(p.Tables)
				for i, t := range p.Tables {
					if t.Name == "answers" && t.Source != nil {
						p.Tables[i] = st.table
					}
				}
				r.forget()
				if early == nil { // else the texts are being read already
					if want, err = st.index(ctx, hash, stepOf(o, "reading the scored answers' keys back", n)); err != nil {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						return fmt.Errorf("report of %s: %w", r.dir, err)
					}
				}
			} else if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	if early != nil {
		if err := waitEarly(); err != nil {
			return err
		}
	} else if hw != nil || xw != nil {
		if want == nil {
			want = r.rowIndex(hash)
		}
		// The texts go to a spill on disk: every answer's for the
		// workbook, else only the explorer's picks'; the explorer reads
		// back those it keeps (a few thousand of its 20,000 picks fit its
		// bytes), none held in memory meanwhile.
		if sp, err = newTextSpill(n); err != nil {
			return fmt.Errorf("report of %s: %w", r.dir, err)
		}
		defer sp.Close()
		picked := make(map[int]bool, len(picks))
		for _, i := range picks {
			picked[i] = true
		}
		if err := r.readTexts(ctx, o, want, hash, n, sp.seen, func(i int, t sampleText) error {
			if xw != nil || picked[i] {
				return sp.put(i, t)
			}
			return nil
		}); err != nil {
			return err
		}
		want = nil
		if err := sp.flush(); err != nil {
			return fmt.Errorf("report of %s: %w", r.dir, err)
		}
	}
	// The HTML page is made and written beside the workbook, when there
	// is one, on a goroutine of its own: its explorer's samples read back
	// from the spill (getAt) beside the workbook's (getRef), the page's
	// figures and tables read beside the workbook's. It is kept
	// (htmlDone) once written, whatever the workbook does, as when it was
	// written first; the workbook is kept only once the page is written.
	var page chan error
	if hw != nil {
		prepare := func() error {
			hp := p
			var err error
			if hp.Samples, hp.SamplesTotal, hp.SamplesHow, err = r.explorerTable(answers, rowAt, n, picks, pickKeys, sp, how); err != nil {
				return err
			}
			write, err := report.PrepareHTML(ctx, hp, o)
			if err != nil {
				return err
			}
			if err := check(); err != nil {
				return err
			}
			return write(hw)
		}
		page = make(chan error, 1)
		if xw == nil {
			page <- prepare()
		} else {
			go func() { page <- prepare() }()
		}
	}
	pageDone := func() error {
		if page == nil {
			return nil
		}
		err := <-page
		page = nil
		if err != nil {
			return fmt.Errorf("HTML report of %s: %w", r.dir, err)
		}
		return htmlDone()
	}
	defer pageDone() // on the workbook's error: the page is still kept
	if xw != nil {
		xp := p
		xp.SampleRows = r.sampleRows(answers, sp)
		if err := report.WriteXLSXContext(ctx, xw, xp, o); err != nil {
			return fmt.Errorf("workbook of %s: %w", r.dir, err)
		}
		if err := check(); err != nil {
			return fmt.Errorf("workbook of %s: %w", r.dir, err)
		}
		if err := pageDone(); err != nil {
			return err
		}
		if err := xlsxDone(); err != nil {
			return err
		}
	}
	return pageDone()
}

// sampleText is what a sample has from its record: the prompt as sent,
// the raw response, why the request failed.
type sampleText struct {
	prompt, response, err string
	// key is the prompt's key in a promptSet; known: the set held it
	// when the record was read, so prompt was not made.
	key   [2]uint64
	known bool
	// promptRef, read back from a spill by getRef, is where the spill
	// holds the prompt, plus one (textSpill.promptAt); prompt is then not
	// made. 0: prompt holds the text.
	promptRef int64
}

// promptSet is where a spill holds each prompt, by key, asked by the
// records' pass's decoders (on every core) while its consumer adds to
// it: a prompt already spilled is not made again from its request (on
// a run of several models, most of them). A prompt's key is a 128-bit
// hash (two maphash seeds) of its request's prompt source
// (engine.PromptSource), else of its text, under seeds of their own.
type promptSet struct {
	raw     [2]maphash.Seed
	textKey func(string) [2]uint64 // a prompt's key by its text (newKeyHash)
	shards  [64]struct {
		mu sync.RWMutex
		m  map[[2]uint64]int64 // the prompt's place in the spill
	}
}

func newPromptSet() *promptSet {
	p := &promptSet{raw: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, textKey: newKeyHash()}
	for i := range p.shards {
		p.shards[i].m = map[[2]uint64]int64{}
	}
	return p
}

func (p *promptSet) rawKey(b []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(p.raw[0], b), maphash.Bytes(p.raw[1], b)}
}

// get is where the spill holds the prompt of key k, if it does.
func (p *promptSet) get(k [2]uint64) (int64, bool) {
	sh := &p.shards[k[0]%uint64(len(p.shards))]
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	at, ok := sh.m[k]
	return at, ok
}

func (p *promptSet) has(k [2]uint64) bool {
	_, ok := p.get(k)
	return ok
}

func (p *promptSet) add(k [2]uint64, at int64) {
	sh := &p.shards[k[0]%uint64(len(p.shards))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.m[k] = at
}

// recordText is a record's text as the records' pass's decoders make it,
// with its prompt's key in seen, the prompt left unmade when seen holds
// it.
func recordText(rec *engine.Record, seen *promptSet) sampleText {
	t := sampleText{response: rec.Response, err: rec.Error}
	src, ok := engine.PromptSource(rec.Request)
	if ok {
		if t.key = seen.rawKey(src); seen.has(t.key) {
			t.known = true
			return t
		}
		// A completion's prompt is its source's string, as PromptText
		// reads it (engine.PromptOf), without reading the body again.
		if len(src) > 0 && src[0] == '"' {
			if p, ok := jsonscan.String(src); ok {
				t.prompt = p
				return t
			}
		}
	}
	t.prompt = PromptText(rec.Request)
	if !ok {
		t.key = seen.textKey(t.prompt)
	}
	return t
}

// readTexts reads the records once and calls fn with the text of each of
// the n answers' records (answer i: the one want finds at i by its key's
// hash under hash, as newKeyHash makes them): the first ok record of its
// key, else its first (as records.ReadUnique chooses), possibly after an
// earlier call for the same i with a failed one, which the later call
// replaces. An answer without a record of its own (a multiple-choice
// item's, a withheld second stage) gets no call. Each text's prompt is
// keyed in seen, and left unmade when seen holds it (recordText).
func (r *Results) readTexts(ctx context.Context, o report.Options, want *hashindex.Index, hash func(string) [2]uint64, n int, seen *promptSet, fn func(i int, t sampleText) error) error {
	const unseen, seenFailed, seenOK = 0, 1, 2
	state := make([]byte, n)
	total := r.manifest.Counts.Records
	step := report.Options{Progress: o.Progress}
	st := stepOf(step, "reading the records' prompts and responses", total)
	// The records are decoded, matched to their answer and their prompt
	// text made on every core (want is only read there); the order of
	// the lines, and so which record of a key is kept, is decided here.
	// Only the key, request, response, error and status are read
	// (TextsOnly): the rest of each record is left undecoded.
	type text struct {
		i int32 // the answer's index, -1 for a record no answer reads
		t sampleText
	}
	lines := 0
	_, err := records.Each(ctx, r.dir, records.StreamOptions{WithRequests: true, RequestView: true, SkipExtracted: true, SkipDigests: true, TextsOnly: true}, func(_ int, rec *engine.Record) (text, error) {
		i, ok := want.Find(hash(rec.Key))
		if !ok {
			return text{i: -1}, nil
		}
		return text{i: i, t: recordText(rec, seen)}, nil
	}, func(_ int, _ string, ok bool, v text) error {
		lines++
		st.at(lines)
		i := v.i
		if i < 0 || state[i] == seenOK || (state[i] == seenFailed && !ok) {
			return nil
		}
		state[i] = seenFailed
		if ok {
			state[i] = seenOK
		}
		return fn(int(i), v.t)
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("samples of %s: %w", r.dir, err)
	}
	st.done(lines)
	return nil
}

// rowIndex is the index of the answers in memory by their key's hash
// under hash (newKeyHash).
func (r *Results) rowIndex(hash func(string) [2]uint64) *hashindex.Index {
	return hashindex.New(len(r.rows), func(i int) [2]uint64 { return hash(r.rows[i].Key.String()) })
}

// newKeyHash is a 128-bit hash of record keys, for an index of the
// answers by their key's hash (hashindex: sorted, not a map, 25 bytes an
// answer where a map takes 45, 120 MB at 4.9 million).
func newKeyHash() func(string) [2]uint64 {
	seed := [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	return func(k string) [2]uint64 { return [2]uint64{maphash.String(seed[0], k), maphash.String(seed[1], k)} }
}

// progressStep reports one step of the root package's own (the records'
// pass) as report.Options does for the writers'.
type progressStep struct {
	fn    func(ReportStep)
	what  string
	total int
	start time.Time
}

func stepOf(o report.Options, what string, total int) *progressStep {
	s := &progressStep{fn: o.Progress, what: what, total: total, start: time.Now()}
	if s.fn != nil {
		s.fn(ReportStep{What: what, Total: total})
	}
	return s
}

func (s *progressStep) at(done int) {
	if s.fn != nil && done%20_000 == 0 {
		s.fn(ReportStep{What: s.what, Done: done, Total: s.total, Elapsed: time.Since(s.start)})
	}
}

func (s *progressStep) done(done int) {
	if s.fn != nil {
		s.fn(ReportStep{What: s.what, Done: done, Total: max(s.total, done), Elapsed: time.Since(s.start), Final: true})
	}
}

// explorerPicks draws the HTML explorer's samples, at most limit of
// them (all when the run has no more): ranked, so that the
// explorer can keep the longest prefix that fits in its bytes
// (report.MaxExplorerBytes). First, for each of the answer schema's flags
// (the study's criteria, abstain, failed, …), one answer where it holds
// and one where it does not, when the run has both; then the answers of
// every model × language × strategy in turn, one from each group per
// round, each group's in a random order (ExplorerSeed), until limit. The
// explorer thus shows the same number from each group (all of a group
// smaller than that), and how says so.
func (r *Results) explorerPicks(limit int) (picks []int, how string) {
	n := len(r.rows)
	type group struct{ model, language, strategy string }
	index := map[group]int{}
	var members [][]int32
	for i := range r.rows {
		k := r.rows[i].Key
		g := group{k.Model, k.Language, k.Strategy}
		j, ok := index[g]
		if !ok {
			j = len(members)
			index[g] = j
			members = append(members, nil)
		}
		members[j] = append(members[j], int32(i))
	}
	rng := rand.New(rand.NewPCG(ExplorerSeed, uint64(n)))
	for _, m := range members {
		rng.Shuffle(len(m), func(a, b int) { m[a], m[b] = m[b], m[a] })
	}
	// The round-robin order over the groups, all of it (flags rare in the
	// run are looked for through it).
	order := make([]int32, 0, n)
	for round := 0; len(order) < n; round++ {
		for _, m := range members {
			if round < len(m) {
				order = append(order, m[round])
			}
		}
	}
	taken := make(map[int]bool, limit)
	take := func(i int) {
		if !taken[i] && len(picks) < limit {
			taken[i] = true
			picks = append(picks, i)
		}
	}
	var flags []string
	for _, f := range r.schema.Fields() {
		if f.Type != score.FlagField {
			continue
		}
		found := [2]int{-1, -1}
		for _, i := range order {
			v := 0
			if f.Flag(&r.rows[i]) {
				v = 1
			}
			if found[v] < 0 {
				found[v] = int(i)
				if found[1-v] >= 0 {
					break
				}
			}
		}
		if found[0] >= 0 && found[1] >= 0 {
			take(found[0])
			take(found[1])
			flags = append(flags, f.Name)
		}
	}
	for _, i := range order {
		if len(picks) >= limit {
			break
		}
		take(int(i))
	}
	return picks, fmt.Sprintf("drawn at random (seed %d) in turn from each of the %d model × language × strategy groups, so that each group shows as many answers as the others (all of a smaller group), and for each of %s an answer where it holds and one where it does not",
		ExplorerSeed, len(members), strings.Join(flags, ", "))
}

// rowKeys are the record keys of r.rows[i] for each i in sel, in order.
func (r *Results) rowKeys(sel []int) []string {
	keys := make([]string, len(sel))
	for j, i := range sel {
		keys[j] = r.rows[i].Key.String()
	}
	return keys
}

// explorerTable is the explorer's samples table: the answers table's
// rows of picks (in table order) with their texts (read back from sp,
// each once; each long text cut as the page shows it,
// report.CutSampleTexts, its note naming the record's key, keys[j] for
// picks[j]), kept to the longest prefix of picks (their rank) that fits
// in report.MaxExplorerBytes; and the run's total and how they were drawn
// ("" and 0 when they are all).
func (r *Results) explorerTable(answers *Table, rowAt func(i int, buf []any) []any, n int, picks []int, keys []string, sp *textSpill, how string) (*Table, int, string, error) {
	cols, extra := r.sampleColumns(answers)
	t := tables.New("samples", "one row per scored answer with its prompt and response: the study's answer schema", cols...)
	var rows [][]any // of the picks kept, in rank order
	size := 0
	for j, i := range picks {
		txt, err := sp.getAt(i)
		if err != nil {
			return nil, 0, "", err
		}
		row := report.CutSampleTexts(t.Header, append(rowAt(i, make([]any, 0, len(cols))), extra(txt)...), keys[j])
		b, _ := json.Marshal(row)
		if size += len(b) + 1; size > report.MaxExplorerBytes {
			break
		}
		rows = append(rows, row)
	}
	keep := len(rows)
	order := make([]int, keep)
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int { return picks[a] - picks[b] })
	t.Rows = make([][]any, keep)
	for j, k := range order {
		t.Rows[j] = rows[k]
	}
	if keep == n {
		return t, 0, "", nil
	}
	return t, n, how, nil
}

// sampleColumns are the samples table's columns, the answers table's then
// sampleExtras', and the extras' cells of one sample's text.
func (r *Results) sampleColumns(answers *Table) ([]tables.Column, func(sampleText) []any) {
	cols := slices.Clone(answers.Columns())
	for _, x := range sampleExtras() {
		cols = append(cols, x.col)
	}
	sim := r.manifest.Simulated
	return cols, func(t sampleText) []any {
		var prompt any = t.prompt
		if t.promptRef != 0 { // left in the spill: the sheet reads it once (report.TextRef)
			prompt = report.TextRef(t.promptRef)
		}
		return []any{prompt, t.response, t.err, sim}
	}
}

// sampleRows streams the samples sheet: each answers row with its
// record's text, read back from the spill, its prompt by reference
// (report.TextRef: the sheet reads each distinct prompt once).
func (r *Results) sampleRows(answers *Table, sp *textSpill) *report.Rows {
	cols, extra := r.sampleColumns(answers)
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.Name
	}
	text := func(ref report.TextRef) (string, error) { return sp.promptAt(int64(ref)) }
	return &report.Rows{Name: "samples", Header: header, Len: answers.Len(), Text: text, Each: func(ctx context.Context, fn func([]any) error) error {
		// The rows are made (each answer's row and its texts read back)
		// on a goroutine of their own, a batch at a time, while fn
		// writes the batch before.
		const batch = 512
		type rowBatch struct {
			cells []any // n rows of len(cols) cells
			n     int
			err   error // after the n rows: why the rest was not made
		}
		width, total := len(cols), answers.Len()
		made, free := make(chan *rowBatch, 2), make(chan *rowBatch, 3)
		for range cap(free) {
			free <- &rowBatch{cells: make([]any, batch*width)}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(made)
			row := make([]any, 0, width)
			for first := 0; first < total; first += batch {
				var b *rowBatch
				select {
				case b = <-free:
				case <-stop:
					return
				}
				b.n, b.err = 0, nil
				for i := first; i < min(total, first+batch); i++ {
					t, err := sp.getRef(i)
					if err != nil {
						b.err = fmt.Errorf("samples of %s: %w", r.dir, err)
						break
					}
					row = append(answers.Row(i, row), extra(t)...)
					cells := b.cells[b.n*width : (b.n+1)*width]
					clear(cells)
					copy(cells, row)
					b.n++
				}
				select {
				case made <- b:
				case <-stop:
					return
				}
				if b.err != nil {
					return
				}
			}
		}()
		defer func() {
			close(stop)
			wg.Wait()
		}()
		for b := range made {
			if err := ctx.Err(); err != nil {
				return err
			}
			for k := range b.n {
				if err := fn(b.cells[k*width : (k+1)*width]); err != nil {
					return err
				}
			}
			if b.err != nil {
				return b.err
			}
			free <- b
		}
		return nil
	}}
}

// textSpill holds every answer's record text on disk, in an unlinked
// temporary file, so that the samples sheet can stream them in table
// order while the records are read in file order: each distinct prompt
// once (the models of a run share them), its length (a uvarint) then its
// bytes, and per answer an entry, three uvarints (where its prompt lies
// in the spill, its response's and its error's lengths) followed by the
// response and the error; in memory, per answer, only where its entry
// lies (eight bytes: 39 MB at 4.9 million answers, where three spans a
// text took 235 MB), and per prompt where it lies.
type textSpill struct {
	f    *os.File
	w    *bufio.Writer
	size int64
	at   []int64                         // answer i's entry at at[i]-1; 0: none
	seen *promptSet                      // where each prompt is, by key
	hdr  [4 * binary.MaxVarintLen64]byte // put's
	// Each reader's buffers (getRef's, getAt's, promptAt's): a reader may
	// run beside the others, each on its own goroutine.
	refs, ats spillScratch
	refBuf    []byte
	blocks    []spillCached // the blocks last read back (getRef's)
	clock     uint64
}

// spillScratch is one reader's buffers.
type spillScratch struct {
	hdr [4 * binary.MaxVarintLen64]byte
	buf []byte
}

type span struct {
	off int64
	n   int32
}

func newTextSpill(n int) (*textSpill, error) {
	f, err := os.CreateTemp("", "bhasha-samples-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // unlinked: gone with the process, whatever happens
	return &textSpill{f: f, w: bufio.NewWriterSize(f, 1<<20), at: make([]int64, n), seen: newPromptSet()}, nil
}

func (s *textSpill) write(v string) error {
	_, err := s.w.WriteString(v)
	s.size += int64(len(v))
	return err
}

// put spills answer i's text (replacing what an earlier put gave it), its
// prompt under t.key, or, when t.known, the prompt already spilled under
// t.key.
func (s *textSpill) put(i int, t sampleText) error {
	p, ok := s.seen.get(t.key)
	if !ok {
		if t.known {
			return fmt.Errorf("the samples' spill: a prompt said to be held is not")
		}
		p = s.size
		n, err := s.w.Write(binary.AppendUvarint(s.hdr[:0], uint64(len(t.prompt))))
		s.size += int64(n)
		if err != nil {
			return err
		}
		if err := s.write(t.prompt); err != nil {
			return err
		}
		s.seen.add(t.key, p)
	}
	at := s.size
	hdr := binary.AppendUvarint(s.hdr[:0], uint64(p))
	hdr = binary.AppendUvarint(hdr, uint64(len(t.response)))
	hdr = binary.AppendUvarint(hdr, uint64(len(t.err)))
	n, err := s.w.Write(hdr)
	s.size += int64(n)
	if err != nil {
		return err
	}
	if err := s.write(t.response); err != nil {
		return err
	}
	if err := s.write(t.err); err != nil {
		return err
	}
	s.at[i] = at + 1
	return nil
}

func (s *textSpill) flush() error {
	s.seen = nil // no more puts
	return s.w.Flush()
}

// getRef reads answer i's text back (empty when it had none) but its
// prompt, left where it is: its place in t.promptRef, for promptAt (the
// samples sheet reads each distinct prompt once, not once an answer).
// It reads through the cache of recent blocks: for reading the answers
// nearly in the order they were spilled.
func (s *textSpill) getRef(i int) (sampleText, error) {
	return s.entry(i, s.bytes, true, &s.refs)
}

// getAt reads answer i's text back, its prompt too, from anywhere in the
// spill: the bytes themselves are read, not the blocks around them. It
// may run beside getRef and promptAt (the HTML explorer's samples are
// read beside the workbook's), never beside itself.
func (s *textSpill) getAt(i int) (sampleText, error) { return s.entry(i, s.direct, false, &s.ats) }

// promptAt reads back the prompt a getRef found at ref, from the file
// itself: it may be called beside getRef and getAt (on another
// goroutine), never beside itself. The text is valid until the next
// call: it is the spill's buffer (report.Rows.Text's contract), not a
// copy (a copy a prompt was a tenth of a report's allocations).
func (s *textSpill) promptAt(ref int64) (string, error) {
	b, buf, err := s.prompt(ref-1, s.refBuf)
	s.refBuf = buf
	return unsafe.String(unsafe.SliceData(b), len(b)), err
}

// promptRead is how many bytes prompt reads first: the length and the
// text of most prompts.
const promptRead = 8 << 10

// prompt reads the prompt at off (its length, then its bytes) from the
// file through buf (returned, grown): one read of its length and, most
// often, all of it. The text is b, within buf.
func (s *textSpill) prompt(off int64, buf []byte) (b, _ []byte, err error) {
	if off < 0 || off >= s.size {
		return nil, buf, fmt.Errorf("the samples' spill: no prompt at byte %d", off)
	}
	if buf, err = s.direct(buf[:0], span{off: off, n: int32(min(promptRead, s.size-off))}); err != nil {
		return nil, buf, err
	}
	n, k := binary.Uvarint(buf)
	if k <= 0 || n > uint64(s.size-off-int64(k)) {
		return nil, buf, fmt.Errorf("the samples' spill: a damaged prompt at byte %d", off)
	}
	if end := uint64(k) + n; end <= uint64(len(buf)) {
		return buf[k:end], buf, nil
	}
	buf, err = s.direct(buf[:0], span{off: off + int64(k), n: int32(n)})
	return buf, buf, err
}

// direct appends the spill's bytes at sp to dst, read from the file.
func (s *textSpill) direct(dst []byte, sp span) ([]byte, error) {
	n := len(dst)
	dst = slices.Grow(dst, int(sp.n))[:n+int(sp.n)]
	_, err := s.f.ReadAt(dst[n:], sp.off)
	return dst, err
}

// entry reads answer i's entry with read (which appends the bytes at sp
// to dst) through the buffers sc; its prompt too, unless ref (then only
// where it lies: t.promptRef).
func (s *textSpill) entry(i int, read func(dst []byte, sp span) ([]byte, error), ref bool, sc *spillScratch) (sampleText, error) {
	var t sampleText
	if s.at[i] == 0 {
		return t, nil
	}
	off := s.at[i] - 1
	hdr, err := read(sc.hdr[:0], span{off: off, n: int32(min(int64(len(sc.hdr)), s.size-off))})
	if err != nil {
		return t, err
	}
	var v [3]uint64
	k := 0
	for j := range v {
		x, m := binary.Uvarint(hdr[k:])
		if m <= 0 {
			return t, fmt.Errorf("the samples' spill: a damaged entry at byte %d", off)
		}
		v[j], k = x, k+m
	}
	off += int64(k)
	text := func(sp span) (string, error) {
		if sp.n == 0 {
			return "", nil
		}
		b, err := read(sc.buf[:0], sp)
		sc.buf = b
		return string(b), err
	}
	if ref {
		t.promptRef = int64(v[0]) + 1
	} else {
		var b []byte
		if b, sc.buf, err = s.prompt(int64(v[0]), sc.buf); err != nil {
			return t, err
		}
		t.prompt = string(b)
	}
	if t.response, err = text(span{off: off, n: int32(v[1])}); err != nil {
		return t, err
	}
	t.err, err = text(span{off: off + int64(v[1]), n: int32(v[2])})
	return t, err
}

// spillBlock is the unit the spill is read back in, and spillBlocks how
// many of the last read it keeps: the answers are read back nearly in the
// order they were spilled (a prompt shared by the models of a run lies a
// little behind), so most texts come from a block already read, not from
// a read(2) each.
const (
	spillBlock  = 1 << 20
	spillBlocks = 16
)

// bytes appends the spill's bytes at sp to dst, through the cache of
// recent blocks.
func (s *textSpill) bytes(dst []byte, sp span) ([]byte, error) {
	if int(sp.n) > spillBlock { // a long text: read on its own
		return s.direct(dst, sp)
	}
	for off, end := sp.off, sp.off+int64(sp.n); off < end; {
		blk, err := s.block(off / spillBlock)
		if err != nil {
			return dst, err
		}
		from := int(off % spillBlock)
		k := min(len(blk)-from, int(end-off))
		if k <= 0 {
			return dst, io.ErrUnexpectedEOF
		}
		dst = append(dst, blk[from:from+k]...)
		off += int64(k)
	}
	return dst, nil
}

// block returns block n of the spill, read once while it is among the
// last spillBlocks used.
func (s *textSpill) block(n int64) ([]byte, error) {
	for i := range s.blocks {
		if b := &s.blocks[i]; b.data != nil && b.n == n {
			b.used = s.tick()
			return b.data, nil
		}
	}
	if len(s.blocks) == 0 {
		s.blocks = make([]spillCached, spillBlocks)
	}
	victim := &s.blocks[0]
	for i := range s.blocks {
		if s.blocks[i].used < victim.used {
			victim = &s.blocks[i]
		}
	}
	if victim.data == nil {
		victim.data = make([]byte, spillBlock)
	}
	k, err := s.f.ReadAt(victim.data[:spillBlock], n*spillBlock)
	if err != nil && err != io.EOF {
		victim.data = nil
		return nil, err
	}
	victim.data, victim.n, victim.used = victim.data[:k], n, s.tick()
	return victim.data, nil
}

func (s *textSpill) tick() uint64 { s.clock++; return s.clock }

// spillCached is one block of the spill held in memory.
type spillCached struct {
	n    int64
	data []byte
	used uint64
}

func (s *textSpill) Close() error { return s.f.Close() }
