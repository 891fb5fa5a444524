package records

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// StreamOptions adjust Unique and Each.
type StreamOptions struct {
	// Experiment: records of another experiment are left out (Findings.Foreign); "" keeps all.
	Experiment string
	// WithRequests keeps the request bodies (Record.Request).
	WithRequests bool
	// SkipExtracted leaves Record.Extracted nil.
	SkipExtracted bool
	// SkipDigests leaves Record.CacheKey and Record.RequestSHA256 empty.
	SkipDigests bool
	// TextsOnly leaves empty all but the key, status, error, response and request.
	TextsOnly bool
	// Want, when set, is asked of each key of a sealed segment, from
	// several goroutines: a record whose key it refuses reaches work with
	// only its key and the fields read from it. The live file's lines are
	// decoded whole.
	Want func(key string) bool
	// Records, when known, sizes what Unique holds up front.
	Records int
	// Workers decode and process records concurrently (0: GOMAXPROCS).
	Workers int
	// Progress, when set, is called after each batch with the bytes read and the total.
	Progress func(read, total int64)

	// strict is ScanDir's reading: a row group holds only when all its
	// columns do, a line without a key or a known status is an error, and
	// a directory without records is not.
	strict bool
}

// Unique reads every record of dir and keeps one per key: the first ok
// record of the key, else its first. Records whose seal is broken or
// missing (see Line seals), of another experiment than o.Experiment, and
// of a key whose ok records disagree are left out; Findings names them.
//
// work runs on each record as it is decoded, concurrently; the record is
// valid only until work returns. Unique returns what work made of each
// kept record, in the order of the keys' first lines, with kept[i] the
// line of out[i], and nlines, the lines read. A torn tail is not read
// (Findings.Torn); a damaged segment gives what can be read of it
// (Findings.Damaged). A cancelled ctx stops it with ctx's error; a
// malformed line is an error naming the file and line. It never writes.
func Unique[T any](ctx context.Context, dir string, o StreamOptions, work func(line int, r *engine.Record) (T, error)) (out []T, kept []int32, d Findings, nlines int, err error) {
	u := &uniq[T]{experiment: o.Experiment, at: map[[2]uint64]int32{}}
	if u.sealedRun, err = runSealed(dir); err != nil {
		return nil, nil, d, 0, err
	}
	if o.Records > 0 && o.Records < 1<<28 {
		u.vals = make([]T, 0, o.Records)
		u.slots = make([]uniqSlot, 0, o.Records)
		u.at = make(map[[2]uint64]int32, o.Records)
	}
	st, err := stream(ctx, dir, o, unlessBroken(work), func(r *lineResult[T]) error {
		u.add(r)
		return nil
	})
	if err != nil {
		return nil, nil, d, st.lines, err
	}
	out, kept, d, err = u.finish(st)
	d.Torn, d.Damaged = st.torn, st.damaged()
	return out, kept, d, st.lines, err
}

// Each runs work on every record of dir as Unique does, and calls each
// from one goroutine in logical order with the line, key, whether its
// status is ok, and what work made of it. Only lines whose seal does not
// match are left out. An error from work, each or ctx stops it; a
// malformed line is an error naming the file and line. It never writes.
func Each[T any](ctx context.Context, dir string, o StreamOptions, work func(line int, r *engine.Record) (T, error), each func(line int, key string, ok bool, v T) error) (nlines int, err error) {
	st, err := stream(ctx, dir, o, unlessBroken(work), func(r *lineResult[T]) error {
		if r.seal == sealBroken {
			return nil
		}
		return each(r.line, r.key, r.ok, r.v)
	})
	return st.lines, err
}

// unlessBroken is work run only on records whose seal is not broken.
func unlessBroken[T any](work func(int, *engine.Record) (T, error)) func(int, sealState, *engine.Record) (T, error) {
	return func(n int, st sealState, r *engine.Record) (v T, err error) {
		if st == sealBroken {
			return v, nil
		}
		return work(n, r)
	}
}

// streamed is what stream read: the files, the logical line before each
// one's first, the torn tail (nil: none) and the lines read.
type streamed struct {
	files  []recordFile
	starts []int
	torn   *TornTail
	lines  int
}

// At names where logical line n is, as Flag.At does.
func (st *streamed) At(n int) string {
	for i := len(st.files) - 1; i >= 0; i-- {
		if n > st.starts[i] {
			return lineAt(&st.files[i], n-st.starts[i])
		}
	}
	return fmt.Sprintf("line %d", n)
}

// end is the logical line of file i's last line.
func (st *streamed) end(i int) int {
	if i+1 < len(st.starts) {
		return st.starts[i+1]
	}
	return st.lines
}

// damaged lists what could not be read of the damaged segments.
func (st *streamed) damaged() (out []Damage) {
	for _, f := range st.files {
		if f.damage != nil {
			out = append(out, *f.damage)
		}
	}
	return out
}

// readBack sets each conflict's At and Responses from its lines.
func (st *streamed) readBack(cs []Conflict) error {
	want := map[int]string{}
	for _, c := range cs {
		for _, l := range c.Lines {
			want[l] = ""
		}
	}
	for i, f := range st.files {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(want)), func(n int) bool { return n > st.starts[i] && n <= st.end(i) }) {
			continue
		}
		err := f.eachLine(func(line []byte, local int) error {
			n := st.starts[i] + local
			if _, ok := want[n]; !ok {
				return nil
			}
			var rec struct {
				Response string `json:"response"`
			}
			if err := json.Unmarshal(line, &rec); err != nil {
				return fmt.Errorf("%s line %d: %w", f.path, local, err)
			}
			want[n] = rec.Response
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i := range cs {
		c := &cs[i]
		for _, l := range c.Lines {
			c.Responses = append(c.Responses, want[l])
			c.At = append(c.At, st.At(l))
		}
	}
	return nil
}

// stream runs work on every line of dir's records, with its seal state,
// on o.Workers goroutines, then consume on the caller's in logical order.
// A directory without records is an error (noRecords), but with o.strict.
func stream[T any](ctx context.Context, dir string, o StreamOptions, work func(line int, st sealState, r *engine.Record) (T, error), consume func(*lineResult[T]) error) (_ streamed, err error) {
	listed, err := listFiles(dir)
	if err != nil {
		return streamed{}, err
	}
	var total int64 // bytes on disk of the records files, for Progress
	for _, f := range listed.files {
		if st, err := os.Stat(f.path); err == nil {
			total += st.Size()
		}
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// A reader cuts the files into batches, workers decode them, and this
	// goroutine consumes them in order.
	type batch struct {
		first, local int // logical and in-file line of the first line
		file         *recordFile
		data         []byte
		spans        []span     // each line's bytes in data, without its newline
		pq           *pqSegment // or row group group of a Parquet segment, of count records
		group, count int
		read         int64
		res          []lineResult[T]
		err          error
		done         chan struct{}
	}
	const batchBytes = 1 << 20
	batches := make(chan *batch, workers*2)
	todo := make(chan *batch, workers*2)
	// The reader's own, read here once batches is closed.
	var readErr error
	var got streamed
	var opened []*pqSegment // closed at the end
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(batches)
		defer close(todo)
		var done int64                 // bytes on disk of the files read to their end
		n := 0                         // logical lines read
		send := func(b *batch) error { // in order to the consumer, then to a worker
			for _, ch := range []chan *batch{batches, todo} {
				select {
				case ch <- b:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		}
		readErr = walk(dir, func(f recordFile, r io.Reader, seg *pqSegment) error {
			fp := &f
			got.files = append(got.files, f)
			got.starts = append(got.starts, n)
			at := len(got.files) - 1
			local := 0 // lines of this file cut so far
			newBatch := func(size int) *batch {
				return &batch{first: n + 1, file: fp, local: local + 1, data: make([]byte, 0, size), done: make(chan struct{})}
			}
			if seg != nil {
				opened = append(opened, seg)
				check := seg.columns(o)
				if o.strict {
					check = nil
				}
				total := seg.starts[len(seg.starts)-1]
				dm, err := seg.eachGroup(check, false, func(g int, holds bool, data []byte) error {
					b := newBatch(0)
					b.read = done + seg.starts[g+1]*seg.size/max(total, 1)
					if holds {
						b.pq, b.group, b.count = seg, g, int(seg.md.RowGroups[g].NumRows)
					} else {
						b.data = data
						for from := 0; from < len(data); {
							i := bytes.IndexByte(data[from:], '\n')
							b.spans = append(b.spans, span{int32(from), int32(from + i)})
							from += i + 1
						}
					}
					n += b.count + len(b.spans)
					local += b.count + len(b.spans)
					return send(b)
				})
				if err != nil {
					return err
				}
				if f.damage = dm; dm != nil {
					got.files[at] = f
				}
				done += seg.size
				return nil
			}
			b := newBatch(batchBytes + batchBytes/16)
			var read, size int64 // bytes of the file's lines read, and its size on disk
			if st, err := os.Stat(f.path); err == nil {
				size = st.Size()
			}
			t, err := eachLine(f, r, func(line []byte, _ int) error {
				if len(b.data) >= batchBytes {
					b.read = done + min(read, size)
					if err := send(b); err != nil {
						return err
					}
					b = newBatch(batchBytes + batchBytes/16)
				}
				from := len(b.data)
				b.data = append(b.data, line...)
				read += int64(len(line) + 1)
				b.spans = append(b.spans, span{int32(from), int32(len(b.data))})
				n++
				local++
				return nil
			})
			if err != nil {
				return err
			}
			got.torn = t
			if err := ctx.Err(); err != nil {
				return err
			}
			done += size
			if len(b.spans) > 0 {
				b.read = done
				return send(b)
			}
			return nil
		})
	}()
	// Hash the responses (to tell disagreeing duplicates) and, twice, the keys.
	seeds := [3]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed(), maphash.MakeSeed()}
	// processed fills res for r, logical line n (local in f), and runs work on it.
	processed := func(res *lineResult[T], f *recordFile, n, local int, st sealState, r *engine.Record) (err error) {
		res.line, res.key, res.ok, res.seal = n, r.Key, r.Status == engine.StatusOK, st
		res.file, res.local = f, local
		res.exp = keyField(r.Key, 0)
		res.response = maphash.String(seeds[0], r.Response)
		res.h = [2]uint64{maphash.String(seeds[1], r.Key), maphash.String(seeds[2], r.Key)}
		res.v, err = work(n, st, r)
		return err
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var dc decoder
			var rows []segRow
			var recs []engine.Record
			var r engine.Record // a batch's lines are decoded into it in turn
			for b := range todo {
				if b.pq != nil {
					b.res = make([]lineResult[T], b.count)
					rows, recs, b.err = b.pq.decodeGroup(b.group, o, &dc, rows, recs, func(i int, r *engine.Record) error {
						return processed(&b.res[i], b.file, b.first+i, b.local+i, sealOK, r)
					})
					clear(rows)
					clear(recs)
				} else {
					b.res = make([]lineResult[T], len(b.spans))
					for i, sp := range b.spans {
						raw := b.data[sp.from:sp.to]
						if err := decodeLine(raw, o, &r); err != nil {
							b.err = fmt.Errorf("%s line %d: %w", b.file.path, b.local+i, err)
							break
						}
						if b.err = processed(&b.res[i], b.file, b.first+i, b.local+i, checkSeal(raw), &r); b.err != nil {
							break
						}
					}
				}
				b.pq, b.data = nil, nil
				close(b.done)
			}
		})
	}
	defer func() { // on an early return: stop the reader and the workers first
		cancel()
		wg.Wait()
		<-readDone
		for _, seg := range opened {
			seg.close()
		}
	}()

	nlines := 0
	for b := range batches {
		select {
		case <-b.done:
		case <-ctx.Done():
			return streamed{lines: nlines}, ctx.Err()
		}
		if b.err != nil {
			return streamed{lines: nlines}, b.err
		}
		for i := range b.res {
			if err := consume(&b.res[i]); err != nil {
				return streamed{lines: nlines}, err
			}
		}
		b.res = nil
		nlines = b.first + len(b.spans) + b.count - 1 // a batch has lines or a row group's records
		if o.Progress != nil {
			o.Progress(b.read, total)
		}
		if err := ctx.Err(); err != nil {
			return streamed{lines: nlines}, err
		}
	}
	err = cmp.Or(ctx.Err(), readErr)
	if err == nil && len(got.files) == 0 && !o.strict {
		err = noRecords(dir)
	}
	if err != nil {
		return streamed{lines: nlines}, err
	}
	got.lines = nlines
	return got, nil
}

// span is one line's bytes in a batch's data, without its newline.
type span struct{ from, to int32 }

// lineResult is one line decoded and processed.
type lineResult[T any] struct {
	line     int         // logical line
	file     *recordFile // the file it is in
	local    int         // its line in that file
	key      string
	ok       bool // status ok
	seal     sealState
	exp      string    // the key's experiment
	response uint64    // hash of the response, to tell disagreeing duplicates
	h        [2]uint64 // two hashes of the key
	v        T
}

// uniq applies Unique's rules to lines in file order, telling keys apart
// by two 64-bit hashes.
type uniq[T any] struct {
	experiment string
	d          Findings
	sealed     int
	sealedRun  bool                // the manifest says every record was sealed (runSealed)
	at         map[[2]uint64]int32 // a key's place in slots and vals, by its hashes
	slots      []uniqSlot          // the record kept for each key, in the order of their first lines
	vals       []T                 // what work made of each, same order
}

// uniqSlot is the record kept for a key.
type uniqSlot struct {
	line     int32
	ok       bool
	response uint64 // a hash, to tell disagreeing records
	conflict int32  // index in Findings.Conflicts, -1: none
}

// add applies the rules to one line.
func (u *uniq[T]) add(r *lineResult[T]) {
	if why := editedWhy(r.seal, u.sealedRun, u.sealed+len(u.d.Edited)); why != "" {
		u.d.Edited = append(u.d.Edited, Flag{Line: r.line, At: lineAt(r.file, r.local), Key: r.key, Why: why})
		return
	}
	if r.seal == sealOK {
		u.sealed++
	}
	if u.experiment != "" && r.exp != u.experiment {
		u.d.Foreign = append(u.d.Foreign, Flag{Line: r.line, At: lineAt(r.file, r.local), Key: r.key, Why: fmt.Sprintf("a record of experiment %q, not %q", r.exp, u.experiment)})
		return
	}
	i, seen := u.at[r.h]
	if !seen {
		u.at[r.h] = int32(len(u.slots))
		u.slots = append(u.slots, uniqSlot{line: int32(r.line), ok: r.ok, response: r.response, conflict: -1})
		u.vals = append(u.vals, r.v)
		return
	}
	s := &u.slots[i]
	switch {
	case s.ok && r.ok && s.response != r.response:
		if s.conflict < 0 {
			s.conflict = int32(len(u.d.Conflicts))
			u.d.Conflicts = append(u.d.Conflicts, Conflict{Key: r.key, Lines: []int{int(s.line)}})
		}
		c := &u.d.Conflicts[s.conflict]
		c.Lines = append(c.Lines, r.line)
		return
	case !s.ok && r.ok:
		s.line, s.ok, s.response = int32(r.line), true, r.response
		u.vals[i] = r.v
	}
	u.d.Records++
	if len(u.d.Keys) < 5 && !slices.Contains(u.d.Keys, r.key) {
		u.d.Keys = append(u.d.Keys, r.key)
	}
}

// finish reads back the conflicts and returns the values kept, in order, with their lines.
func (u *uniq[T]) finish(st streamed) ([]T, []int32, Findings, error) {
	if err := st.readBack(u.d.Conflicts); err != nil {
		return nil, nil, u.d, err
	}
	out := u.vals[:0]
	lines := make([]int32, 0, len(u.slots)-len(u.d.Conflicts))
	for i, s := range u.slots {
		if s.conflict < 0 {
			out = append(out, u.vals[i])
			lines = append(lines, s.line)
		}
	}
	clear(u.vals[len(out):])
	u.vals, u.slots, u.at = nil, nil, nil
	return out, lines, u.d, nil
}
