package records

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/bhashalab/bhasha/internal/jsonscan"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// StreamOptions adjust Unique.
type StreamOptions struct {
	// Experiment: records of another experiment are left out (Findings.Foreign); "" keeps all.
	Experiment string
	// WithRequests keeps the request bodies (Record.Request); without it
	// they are not decoded at all (they are most of a record's bytes).
	WithRequests bool
	// RequestView, with WithRequests, makes Record.Request the line's own
	// bytes instead of a copy: valid only until work returns (work reads
	// it there, as a prompt's text is made from it, and keeps no part of
	// it).
	RequestView bool
	// SkipExtracted leaves Record.Extracted nil, undecoded (a caller
	// that extracts every record again).
	SkipExtracted bool
	// SkipDigests leaves Record.CacheKey and Record.RequestSHA256 empty
	// (a caller that reads neither: each is 64 bytes a record).
	SkipDigests bool
	// Records, when known (the manifest's count), sizes what is held for
	// one value per key at once, instead of growing it as keys come.
	Records int
	// Workers decode and process records concurrently (0: GOMAXPROCS).
	Workers int
	// Progress, when set, is called from one goroutine after each batch of
	// lines with the bytes read so far and the records files' total size.
	Progress func(read, total int64)
}

// Unique reads every record of dir, as ReadUnique does, and hands each one
// to work as soon as it is decoded (from several goroutines at once: work
// must be safe for concurrent use), instead of holding the records: it
// returns what work made of the record ReadUnique would keep for each key,
// in the order ReadUnique returns its records (a key's first line; a
// failed record later replaced by an ok one keeps its place), and the
// same Findings. work may run on records that are not kept (a failed one
// a later ok record replaces, a key that turns out to have disagreeing
// records); their results are dropped. work is given the record's line
// number, and kept[i] is the line out[i] was made from. The record
// passed to work is valid only until work returns (the next line is
// decoded into it): work copies what it keeps. nlines is the number of
// lines read. A cancelled ctx stops it with ctx's error; a malformed line
// is an error naming the file and line. It never writes.
func Unique[T any](ctx context.Context, dir string, o StreamOptions, work func(line int, r *engine.Record) (T, error)) (out []T, kept []int32, d Findings, nlines int, err error) {
	u := newUniq[T](o.Experiment)
	if o.Records > 0 && o.Records < 1<<28 {
		u.vals = make([]T, 0, o.Records)
		u.slots = make([]slot, 0, o.Records)
		u.at = make(map[uint64]int32, o.Records)
	}
	files, starts, nlines, err := stream(ctx, dir, o, work, func(r *lineResult[T]) error {
		u.add(r)
		return nil
	})
	if err != nil {
		return nil, nil, d, nlines, err
	}
	out, kept, d, err = u.finish(files, starts, nlines)
	return out, kept, d, nlines, err
}

// Each reads every line of dir's records files in order, as Unique does
// (decoded on several goroutines at once, with work run on each record
// as it is decoded: work must be safe for concurrent use), and calls each
// from one goroutine, in the lines' logical order, with the line number,
// the record's key, whether its status is ok, and what work made of it.
// Unlike Unique it applies none of ReadUnique's rules but one: a line
// edited after it was written (its record_sha256 does not match) gets no
// work and no call, as Unique leaves it out. An error from work or each
// stops it with that error; a cancelled ctx with ctx's error; a malformed
// line is an error naming the file and line. nlines is the number of
// lines read. It never writes, and holds only the batches in flight.
func Each[T any](ctx context.Context, dir string, o StreamOptions, work func(line int, r *engine.Record) (T, error), each func(line int, key string, ok bool, v T) error) (nlines int, err error) {
	_, _, nlines, err = stream(ctx, dir, o, work, func(r *lineResult[T]) error {
		if r.seal == sealBroken {
			return nil
		}
		return each(r.line, r.key, r.ok, r.v)
	})
	return nlines, err
}

// stream is Unique's and Each's reading: every line of dir's records
// files decoded and given to work on o.Workers goroutines, then to
// consume on the caller's, in logical order. It returns the files read
// and the logical line before each one's first.
func stream[T any](ctx context.Context, dir string, o StreamOptions, work func(line int, r *engine.Record) (T, error), consume func(*lineResult[T]) error) (_ []recordFile, _ []int, nlines int, err error) {
	listed, err := listFiles(dir)
	if err != nil {
		return nil, nil, 0, err
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

	// The reader cuts the file into batches of whole lines; workers decode
	// and process each batch; this goroutine applies ReadUnique's rules
	// to the batches in file order.
	type batch struct {
		first int // logical line number of the first line
		file  *recordFile
		local int // the first line's number in its file
		data  []byte
		spans []span // each line's bytes in data, without its newline
		lean  []byte // or a lean copy's frame (lean.go), of count records
		count int
		read  int64
		res   []lineResult[T]
		err   error
		done  chan struct{}
	}
	const batchBytes = 1 << 20
	batches := make(chan *batch, workers*2)
	todo := make(chan *batch, workers*2)
	// free holds the line buffers of decoded batches for the reader to
	// reuse (decoding copies what it keeps), so reading allocates a few
	// buffers, not one a megabyte.
	free := make(chan []byte, workers*2+2)
	freeRes := make(chan []lineResult[T], workers*2+2) // and of their results
	var readErr error
	// The reader's own: read here only once it is done (batches closed).
	var files []recordFile // the files read, in logical order
	var starts []int       // the logical line before each file's first
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(batches)
		defer close(todo)
		var done int64     // bytes on disk of the files read to their end
		n := 0             // logical lines read
		var infl *inflater // decompresses framed segments' frames (frames.go)
		defer func() {
			if infl != nil {
				infl.close()
			}
		}()
		send := func(b *batch) bool {
			select {
			case batches <- b:
			case <-ctx.Done():
				return false
			}
			select {
			case todo <- b:
			case <-ctx.Done():
				return false
			}
			return true
		}
		found, err := walkLean(dir, !o.WithRequests, func(f recordFile, r io.Reader) error {
			fp := &f
			files = append(files, f)
			starts = append(starts, n)
			newBatch := func(local int) *batch {
				b := &batch{first: n + 1, file: fp, local: local, done: make(chan struct{})}
				select { // a buffer a decoded batch gave back, else a new one
				case b.data = <-free:
				default:
					b.data = make([]byte, 0, batchBytes+64<<10)
				}
				return b
			}
			local := 0 // lines of this file cut so far
			if seg, ok := r.(*framedSegment); ok && seg.lean != nil {
				// Its lean copy: every record without its request body
				// (lean.go), a batch a frame.
				var all, at int64 // the frames' bytes, and those sent: Progress reads a share of the segment's
				for _, fr := range seg.lean {
					all += int64(len(fr.data))
				}
				for _, fr := range seg.lean {
					at += int64(len(fr.data))
					b := &batch{first: n + 1, file: fp, local: local + 1, lean: fr.data, count: fr.records,
						read: done + at*seg.size/all, done: make(chan struct{})}
					n += fr.records
					local += fr.records
					if !send(b) {
						return ctx.Err()
					}
				}
				done += seg.size
				return nil
			}
			if seg, ok := r.(*framedSegment); ok && seg.frames != nil {
				if infl == nil {
					in, err := newInflater(workers, free)
					if err != nil {
						return fmt.Errorf("reading %s: %w", f.path, err)
					}
					infl = in
				}
				err := infl.lines(ctx, seg, workers*2, func(data []byte, spans []span, at int64) error {
					b := &batch{first: n + 1, file: fp, local: local + 1, data: data, spans: spans, read: done + at, done: make(chan struct{})}
					n += len(spans)
					local += len(spans)
					if !send(b) {
						return ctx.Err()
					}
					return nil
				})
				done += seg.size
				return err
			}
			b := newBatch(1)
			last, err := cutLines(r, f.path, b.data, func(from, to int) {
				n++
				local++
				b.spans = append(b.spans, span{int32(from), int32(to)})
			}, func(data []byte, next int) ([]byte, bool) {
				// A full batch (or one whose buffer has too little room
				// left for another read) keeps data[:next]; the partial
				// line after it moves to the next batch.
				if len(b.spans) == 0 || (next < batchBytes && cap(data)-len(data) >= cutReadBytes) {
					return nil, false
				}
				b.read = done + position(r)
				nb := newBatch(local + 1)
				nb.data = append(nb.data, data[next:]...)
				b.data = data[:next]
				if !send(b) {
					return nil, true
				}
				b = nb
				return b.data, false
			})
			b.data = last
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if st, err := os.Stat(f.path); err == nil {
				done += st.Size()
			}
			if len(b.spans) > 0 {
				b.read = done
				if !send(b) {
					return ctx.Err()
				}
			}
			return nil
		})
		if err == nil && !found {
			err = fmt.Errorf("reading records: %w", &fs.PathError{Op: "open", Path: filepath.Join(dir, FileName), Err: fs.ErrNotExist})
		}
		readErr = err
	}()
	seed := maphash.MakeSeed() // hashes the responses, to tell disagreeing duplicates
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lean leanInflater // this worker's, for lean copies' frames
			defer lean.close()
			for b := range todo {
				var res []lineResult[T]
				select { // a result slice a consumed batch gave back
				case res = <-freeRes:
				default:
				}
				if b.lean != nil {
					var content []byte
					if content, b.err = lean.inflate(b.lean); b.err == nil {
						b.res, b.err = decodeLean(seed, b.file, b.first, b.local, content, b.count, res, o, &lean.in, work)
					} else {
						b.err = fmt.Errorf("reading %s, the lean copy of %s: %w", filepath.Base(leanName(b.file.path)), b.file.path, b.err)
					}
					b.lean = nil
					close(b.done)
					continue
				}
				b.res, b.err = decodeBatch(seed, b.file, b.first, b.local, b.data, b.spans, res, o, work)
				select {
				case free <- b.data[:0]:
				default:
				}
				b.data = nil
				close(b.done)
			}
		}()
	}
	defer func() { // on an early return: stop the reader and the workers first
		cancel()
		wg.Wait()
		<-readDone
	}()

	for b := range batches {
		select {
		case <-b.done:
		case <-ctx.Done():
			return nil, nil, nlines, ctx.Err()
		}
		if b.err != nil {
			cancel()
			return nil, nil, nlines, b.err
		}
		for i := range b.res {
			if err := consume(&b.res[i]); err != nil {
				cancel()
				return nil, nil, nlines, err
			}
		}
		clear(b.res) // what work made is the consumer's now: the slice holds no part of it
		select {
		case freeRes <- b.res[:0]:
		default:
		}
		b.res = nil
		nlines = b.first + len(b.spans) + b.count - 1 // a batch has lines or a lean frame's records
		if o.Progress != nil {
			o.Progress(b.read, total)
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, nlines, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nlines, err
	}
	if readErr != nil {
		return nil, nil, nlines, readErr
	}
	return files, starts, nlines, nil
}

// lineResult is one line decoded and processed.
type lineResult[T any] struct {
	line     int         // logical line
	file     *recordFile // the file it is in
	local    int         // its line in that file
	key      string
	ok       bool // status ok
	seal     sealState
	exp      string // the key's experiment
	response uint64 // hash of the response, to tell disagreeing duplicates
	v        T
}

// decodeBatch decodes the lines of one batch and runs work on each, into
// out (reused, cleared). The lines are decoded into one Record, reset for
// each: work keeps no pointer to it (Unique's and Each's contract).
func decodeBatch[T any](seed maphash.Seed, f *recordFile, first, local int, data []byte, spans []span, out []lineResult[T], o StreamOptions, work func(int, *engine.Record) (T, error)) ([]lineResult[T], error) {
	out = growResults(out, len(spans))
	var buf []byte
	in := new(interner)
	var r engine.Record
	for i, sp := range spans {
		raw := data[sp.from:sp.to]
		st := sealOf(f.verified, raw)
		var err error
		if buf, err = decodeLine(raw, st, o.WithRequests, o.RequestView, !o.SkipExtracted, in, buf, &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", f.path, local+i, err)
		}
		if o.SkipDigests {
			r.CacheKey, r.RequestSHA256 = "", ""
		}
		if err := processed(seed, &out[i], f, first+i, local+i, st, &r, work); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// growResults is out (reused, cleared) with room for n results.
func growResults[T any](out []lineResult[T], n int) []lineResult[T] {
	return slices.Grow(out[:0], n)[:n]
}

// decodeLine decodes the record line raw, whose seal state is st, into r
// (reset first): a sealed line read directly (decodeSealed), falling back
// to encoding/json; the request body only when withRequests (the line's
// own bytes with view), the extracted result only when withExtracted.
// buf is scratch space, returned for reuse.
func decodeLine(raw []byte, st sealState, withRequests, view, withExtracted bool, in *interner, buf []byte, r *engine.Record) ([]byte, error) {
	*r = engine.Record{}
	var err error
	if st == sealOK {
		// A sealed line is as Bhasha wrote it (valid JSON): read its
		// members directly, without the request body unless asked.
		if err = decodeSealed(raw, withRequests, view, withExtracted, in, r); err != nil {
			*r = engine.Record{}
			if withRequests {
				err = json.Unmarshal(raw, r)
			} else {
				buf, err = decodeWithout(raw, buf, r)
			}
		}
	} else {
		err = json.Unmarshal(raw, r)
		if !withRequests {
			r.Request = nil
		}
	}
	if err == nil && !withExtracted {
		r.Extracted = nil
	}
	return buf, err
}

// processed fills res for the record r, logical line n (local in file
// f), whose seal state is st, and runs work on it unless its seal is
// broken.
func processed[T any](seed maphash.Seed, res *lineResult[T], f *recordFile, n, local int, st sealState, r *engine.Record, work func(int, *engine.Record) (T, error)) error {
	res.line, res.key, res.ok, res.seal = n, r.Key, r.Status == engine.StatusOK, st
	res.file, res.local = f, local
	res.exp = keyField(r.Key, 0)
	res.response = maphash.String(seed, r.Response)
	if st == sealBroken {
		return nil // left out: no work on it
	}
	v, err := work(n, r)
	if err != nil {
		return err
	}
	res.v = v
	return nil
}

// decodeWithout decodes the record line into r, skipping the top-level
// "request" member; buf is scratch space, returned for reuse.
func decodeWithout(line, buf []byte, r *engine.Record) ([]byte, error) {
	from, to, ok := memberSpan(line, "request")
	if !ok {
		return buf, json.Unmarshal(line, r)
	}
	buf = append(append(buf[:0], line[:from]...), line[to:]...)
	return buf, json.Unmarshal(buf, r)
}

// memberSpan finds the top-level member name of a JSON object line: the
// span [from, to) to cut so that the object stays valid (the member with
// the comma before it, or after it when it is the first). It reads only
// the structure (strings are skipped whole, escapes honoured); false when
// the member is absent or the line is not an object.
func memberSpan(line []byte, name string) (from, to int, ok bool) {
	i := jsonscan.SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return 0, 0, false
	}
	i++
	first := true
	for {
		i = jsonscan.SkipSpace(line, i)
		if i >= len(line) {
			return 0, 0, false
		}
		if line[i] == '}' {
			return 0, 0, false
		}
		memberStart := i // at the key's quote (after the comma, if any)
		if !first {
			if line[i] != ',' {
				return 0, 0, false
			}
			i = jsonscan.SkipSpace(line, i+1)
		}
		if i >= len(line) || line[i] != '"' {
			return 0, 0, false
		}
		keyEnd := jsonscan.SkipString(line, i)
		if keyEnd < 0 {
			return 0, 0, false
		}
		key := line[i+1 : keyEnd-1]
		i = jsonscan.SkipSpace(line, keyEnd)
		if i >= len(line) || line[i] != ':' {
			return 0, 0, false
		}
		valEnd := jsonscan.SkipValue(line, jsonscan.SkipSpace(line, i+1))
		if valEnd < 0 {
			return 0, 0, false
		}
		if string(key) == name {
			if first { // cut the member and the comma after it
				j := jsonscan.SkipSpace(line, valEnd)
				if j < len(line) && line[j] == ',' {
					return memberStart, j + 1, true
				}
				return memberStart, valEnd, true
			}
			return memberStart, valEnd, true
		}
		i = valEnd
		first = false
	}
}

// uniq applies ReadUnique's rules to lines in file order. vals[i] is the
// value of the key whose state is slots[i] (kept apart, so that the
// values are returned without a copy).
type uniq[T any] struct {
	experiment string
	d          Findings
	sealed     int
	seed1      maphash.Seed
	seed2      maphash.Seed
	// at finds a key's slot by the first of its two hashes, the slot
	// holding the second; a key whose first hash another key's slot
	// holds (about once in 10^12 pairs) is found in more, by both.
	at       map[uint64]int32
	more     map[[2]uint64]int32
	hash     func(string) [2]uint64 // nil: maphash with seed1 and seed2 (tests give colliding ones)
	slots    []slot
	vals     []T
	dropped  int
	conflict map[[2]uint64]int // key -> index in d.Conflicts
	pending  []pendingConflict
}

type slot struct {
	line     int32
	ok       bool
	dropped  bool // a conflict
	response uint64
	h2       uint64 // the key's second hash
}

// pendingConflict is a disagreeing line whose first line's response is
// read back at the end.
type pendingConflict struct {
	ci, first int
}

func newUniq[T any](experiment string) *uniq[T] {
	return &uniq[T]{experiment: experiment, seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(),
		at: map[uint64]int32{}, more: map[[2]uint64]int32{}, conflict: map[[2]uint64]int{}}
}

func (u *uniq[T]) h(k string) [2]uint64 {
	if u.hash != nil {
		return u.hash(k)
	}
	return [2]uint64{maphash.String(u.seed1, k), maphash.String(u.seed2, k)}
}

// add is ReadUnique's loop body for one line.
func (u *uniq[T]) add(r *lineResult[T]) {
	switch r.seal {
	case sealOK:
		u.sealed++
	case sealBroken:
		u.d.Edited = append(u.d.Edited, Flag{Line: r.line, At: lineAt(*r.file, r.local), Key: r.key, Why: "edited after it was written (its record_sha256 does not match the line)"})
		return
	default:
		if u.sealed+len(u.d.Edited) > 0 {
			u.d.Edited = append(u.d.Edited, Flag{Line: r.line, At: lineAt(*r.file, r.local), Key: r.key, Why: unsealedWhy})
			return
		}
	}
	if u.experiment != "" && r.exp != u.experiment {
		u.d.Foreign = append(u.d.Foreign, Flag{Line: r.line, At: lineAt(*r.file, r.local), Key: r.key, Why: fmt.Sprintf("a record of experiment %q, not %q", r.exp, u.experiment)})
		return
	}
	h := u.h(r.key)
	i, seen := u.at[h[0]]
	inMore := seen && u.slots[i].h2 != h[1]
	if inMore {
		i, seen = u.more[h]
	}
	if !seen {
		if inMore {
			u.more[h] = int32(len(u.slots))
		} else {
			u.at[h[0]] = int32(len(u.slots))
		}
		u.slots = append(u.slots, slot{line: int32(r.line), ok: r.ok, response: r.response, h2: h[1]})
		u.vals = append(u.vals, r.v)
		return
	}
	first := &u.slots[i]
	switch {
	case first.ok && r.ok && first.response != r.response:
		ci, ok := u.conflict[h]
		if !ok {
			ci = len(u.d.Conflicts)
			u.conflict[h] = ci
			u.d.Conflicts = append(u.d.Conflicts, Conflict{Key: r.key, Lines: []int{int(first.line)}, Responses: []string{""}})
			u.pending = append(u.pending, pendingConflict{ci: ci, first: int(first.line)})
			first.dropped = true
			u.dropped++
			var zero T
			u.vals[i] = zero
		}
		u.d.Conflicts[ci].Lines = append(u.d.Conflicts[ci].Lines, r.line)
		u.d.Conflicts[ci].Responses = append(u.d.Conflicts[ci].Responses, "")
		u.pending = append(u.pending, pendingConflict{ci: ci, first: r.line})
		return
	case !first.ok && r.ok:
		first.line, first.ok, first.response = int32(r.line), true, r.response
		if !first.dropped {
			u.vals[i] = r.v
		}
	}
	u.d.Records++
	if len(u.d.Keys) < 5 && !slices.Contains(u.d.Keys, r.key) {
		u.d.Keys = append(u.d.Keys, r.key)
	}
}

// finish reads back the responses of conflicting lines and returns the
// kept values in order (the values of dropped keys removed in place).
func (u *uniq[T]) finish(files []recordFile, starts []int, nlines int) ([]T, []int32, Findings, error) {
	if len(u.pending) > 0 {
		want := map[int]bool{}
		for _, p := range u.pending {
			want[p.first] = true
		}
		resp, err := responsesIn(files, starts, nlines, want)
		if err != nil {
			return nil, nil, u.d, err
		}
		// Fill the responses in the order the lines were added to each conflict.
		next := map[int]int{}
		for _, p := range u.pending {
			c := &u.d.Conflicts[p.ci]
			j := next[p.ci]
			next[p.ci] = j + 1
			c.Responses[j] = resp[p.first]
			c.At = append(c.At, atIn(files, starts, p.first))
		}
	}
	out := u.vals
	lines := make([]int32, 0, len(u.slots))
	n := 0
	for i := range out {
		if !u.slots[i].dropped {
			out[n] = out[i]
			lines = append(lines, u.slots[i].line)
			n++
		}
	}
	clear(out[n:])
	out = out[:n]
	u.vals, u.slots, u.at, u.more = nil, nil, nil, nil
	return out, lines, u.d, nil
}

// position is how far r has read its file on disk (0 when unknown): a
// plain file's offset, a segment's compressed offset.
func position(r io.Reader) int64 {
	var f *os.File
	switch r := r.(type) {
	case *os.File:
		f = r
	case *zstdFile:
		f = r.f
	case *framedSegment:
		return r.position()
	default:
		return 0
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0
	}
	return off
}
