// Package records reads and writes a run's records: one JSON object per
// request (engine.Record), appended whole by one writer at a time
// (LockDir). docs/run-directory.md describes the files.
//
// A run's records are, in logical order, its sealed segments
// records-000001.parquet, records-000002.parquet, ... (one row per
// record, one column per member, never appended to) and then the live
// file records.jsonl (JSON Lines). Every line ends in its seal, the
// member record_sha256 (see Line seals); every row of a segment gives
// back its line byte for byte. Every reader reads the files in that order
// and names a record by file and line, a segment's line being its row
// ("records-000002.parquet line 7"; "line 7" for records.jsonl).
//
// A segment's footer holds a digest of each column chunk: a reader that
// finds the chunks it reads intact trusts their lines' seals, and checks
// each line by its own seal otherwise. An older Bhasha's segment,
// records-N.jsonl.zst, is read as it is and converted to Parquet by the
// next writer under the lock (CreateWith, Seal).
//
// A process killed at any point loses at most the records it had not
// flushed (the response cache serves them again on resume): a torn last
// line of records.jsonl (TornTail) is left out by every reader and cut by
// Commit; an interrupted seal leaves files every reader reads as the same
// records, finished by the next writer under the lock; a segment damaged
// on disk gives the records that can still be read and names what was
// lost (Damage).
package records

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/internal/lines"
	"github.com/bhashalab/bhasha/internal/shortlist"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// FileName is the records file inside a run directory.
const FileName = "records.jsonl"

// PrepareReport says what Prepare found in an existing file.
type PrepareReport struct {
	Path          string
	Kept          int // ok records kept
	DroppedFailed int // failed records removed so they are retried
	DroppedDup    int // duplicate keys removed
	TornTail      bool
	TornTailBytes int64
	RewroteFile   bool
	// Damaged lists the damaged segments and what could not be read of
	// them (their lost records have no key in the scan's Done: a run asks
	// them again); KeptDamaged, once Commit replaced them, where each
	// damaged file is kept.
	Damaged     []Damage
	KeptDamaged []string
}

// Messages returns human-readable lines about repairs, if any.
func (r PrepareReport) Messages() []string {
	var out []string
	if r.TornTail {
		out = append(out, fmt.Sprintf("%s: dropped 1 incomplete record at the end (%d bytes, the run was interrupted mid-write)", r.Path, r.TornTailBytes))
	}
	if r.DroppedFailed > 0 {
		out = append(out, fmt.Sprintf("%s: %d failed record(s) will be retried", r.Path, r.DroppedFailed))
	}
	if r.DroppedDup > 0 {
		out = append(out, fmt.Sprintf("%s: removed %d duplicate record(s)", r.Path, r.DroppedDup))
	}
	for i, d := range r.Damaged {
		s := fmt.Sprintf("%s: %s", filepath.Dir(r.Path), d.String())
		if i < len(r.KeptDamaged) {
			s += fmt.Sprintf(" (kept at %s; the segment now holds the %d record(s) read from it)", r.KeptDamaged[i], d.Kept)
		}
		out = append(out, s)
	}
	return out
}

// Prepare makes dir/records.jsonl ready for appending and returns the keys
// already answered: ScanDir, then Commit without archiving (a torn last
// line cut, failed records and duplicate keys dropped). A run that then
// writes only keys outside that set ends with one record per key. A
// malformed line that is not the last is an error naming the file, line
// and field; so are disagreeing ok records of one key (Conflict), which
// are left as they are.
func Prepare(dir string) (*KeySet, PrepareReport, error) {
	s, err := ScanDir(dir, "")
	if err != nil {
		return nil, PrepareReport{Path: filepath.Join(dir, FileName)}, err
	}
	if err := s.ConflictError(); err != nil {
		return nil, s.Report, err
	}
	if _, _, err := s.Commit(nil, ""); err != nil {
		return nil, s.Report, err
	}
	return s.Done, s.Report, nil
}

// Writer appends records to dir/records.jsonl. It buffers whole records
// and writes them with one write(2) per flush, at least every FlushEvery
// and whenever 256 KiB are waiting, so no record is ever split across two
// writes (the file is also locked, see LockDir). A record lost to a crash
// before its flush is re-served from the response cache on resume, never
// re-sent.
//
// A Writer made with the directory's exclusive lock (CreateWith) seals the
// live file into the next segment once a flush leaves it at SealBytes or
// more, and at Close when it holds more than CloseSealBytes.
//
// After a write error (a full disk, say) the Writer counts exactly the
// records that reached the file (Written); every later call returns the
// same error.
type Writer struct {
	*lineEncoder // buf: whole records waiting for the next write(2)

	mu   sync.Mutex
	f    io.WriteCloser // the records file
	path string
	ends []int // end offset in buf of each buffered record
	oks  []bool
	last time.Time
	err  error
	w    Written
	// FlushEvery bounds how long a record may sit in the buffer.
	FlushEvery time.Duration

	dir     string
	lock    *Lock // the directory's exclusive lock: sealing needs it
	size    int64 // bytes in the live file
	sealErr error // the first failed seal (the records stay in the live file or a plain segment)
	sealed  []string
	// converting is closed when the last seal's plain segment is
	// converted (nil: none pending); convErr is its error.
	converting chan struct{}
	convErr    error
	pending    string
	// sh builds the live file's segment as it is written (nil: none).
	sh *shadow
	// SealBytes seals the live file once a flush leaves it this large (≤ 0: never).
	SealBytes int64
	// CloseSealBytes seals the live file at Close when it is larger (< 0: never).
	CloseSealBytes int64
}

// Written counts the records that reached the file.
type Written struct {
	Records, OK, Failed int
}

const flushBytes = 256 << 10

// A Writer's default SealBytes and CloseSealBytes.
const (
	DefaultSealBytes      = 64 << 20
	DefaultCloseSealBytes = 4 << 20
)

// Options configure CreateWith.
type Options struct {
	// Lock is dir's exclusive lock, held by the caller. Without it the
	// Writer only appends, and never seals.
	Lock *Lock
	// SealBytes and CloseSealBytes set the Writer's fields of those
	// names; 0 is DefaultSealBytes and DefaultCloseSealBytes.
	SealBytes, CloseSealBytes int64
	// Log, when set, is told of each older segment converted to Parquet
	// (or left as it was, its conversion having failed).
	Log func(string)
}

// Create opens dir/records.jsonl for appending. The Writer never seals
// (see CreateWith).
func Create(dir string) (*Writer, error) { return CreateWith(dir, Options{}) }

// CreateWith opens dir/records.jsonl for appending; with o.Lock it first
// finishes what an interrupted seal left (see the package doc) and seals
// as the live file grows.
func CreateWith(dir string, o Options) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	if o.Lock != nil {
		if err := o.Lock.holds(dir); err != nil {
			return nil, err
		}
		if err := finishSeals(dir, o.Log); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dir, FileName)
	f, size, err := openLive(path)
	if err != nil {
		return nil, err
	}
	w := newWriter(f, path)
	w.dir, w.lock, w.size = dir, o.Lock, size
	w.SealBytes, w.CloseSealBytes = cmp.Or(o.SealBytes, DefaultSealBytes), cmp.Or(o.CloseSealBytes, DefaultCloseSealBytes)
	if o.Lock != nil && size == 0 {
		d, err := listFiles(dir)
		if err == nil {
			w.sh, err = newShadow(dir, d.maxSeg+1)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return w, nil
}

// openLive opens the live records file for appending, and its size.
func openLive(path string) (*os.File, int64, error) {
	if err := noLink(path); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, fmt.Errorf("opening records: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("opening records: %w", err)
	}
	return f, fi.Size(), nil
}

// sealNow seals the flushed live file: it becomes the next plain segment,
// converted to Parquet in the background (the next seal and Close wait for
// it), and unless closing a new live file is opened.
func (w *Writer) sealNow(closing bool) {
	if w.lock == nil || w.sealErr != nil {
		return
	}
	if w.waitConvert(); w.sealErr != nil {
		return
	}
	if !closing {
		if err := w.f.Close(); err != nil {
			w.err = fmt.Errorf("closing %s: %w", w.path, err)
			return
		}
	}
	plain, err := sealLive(w.dir)
	w.sealErr = err
	sh := w.sh
	w.sh = nil
	if err == nil && plain.path != "" {
		done := make(chan struct{})
		w.converting, w.pending = done, SegmentName(plain.seg)
		go func() {
			defer close(done)
			w.convErr = toParquet(plain, sh)
		}()
	} else if sh != nil {
		sh.finish(false)
	}
	if closing {
		w.waitConvert()
		return
	}
	if w.sealErr == nil {
		if w.sh, err = newShadow(w.dir, plain.seg+1); err != nil {
			w.sh = nil // the next seal converts the file
		}
	}
	f, size, err := openLive(w.path)
	if err != nil {
		w.err = err
		w.f = nopCloser{}
		return
	}
	w.f, w.size = f, size
}

// waitConvert waits for the pending conversion, if any, and notes its
// segment as sealed or its error as the seal's.
func (w *Writer) waitConvert() {
	if w.converting == nil {
		return
	}
	<-w.converting
	w.converting = nil
	if w.convErr != nil {
		w.sealErr = cmp.Or(w.sealErr, w.convErr)
		return
	}
	w.sealed = append(w.sealed, w.pending)
}

// nopCloser stands for a records file that could not be opened again.
type nopCloser struct{}

func (nopCloser) Write(b []byte) (int, error) { return 0, os.ErrClosed }
func (nopCloser) Close() error                { return nil }

func newWriter(f io.WriteCloser, path string) *Writer {
	w := &Writer{lineEncoder: newLineEncoder(), f: f, path: path, last: time.Now(), FlushEvery: 200 * time.Millisecond}
	w.buf.Grow(flushBytes + 4096)
	return w
}

// MaxRecordBytes is the longest record line, its newline included, that
// the readers accept. Writer.Write never writes a longer one.
const MaxRecordBytes = lines.DefaultMax

// Write appends one record (one line).
//
// A record whose line would be longer than MaxRecordBytes is written as a
// failed record instead, without its answer (response, reasoning,
// logprobs, tool calls, extraction) and, if the request alone is over half
// the limit, without its request body (request_sha256 stays), its error
// naming the size; r itself is left as it was. Only a record whose failed
// form is still over the limit is refused with an error.
func (w *Writer) Write(r *engine.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	start := w.buf.Len()
	n, err := w.encode(r)
	if err != nil {
		return err
	}
	if n > MaxRecordBytes {
		w.buf.Truncate(start)
		f := oversized(r, n)
		if n2, err := w.encode(f); err != nil || n2 > MaxRecordBytes {
			w.buf.Truncate(start)
			if err == nil {
				err = fmt.Errorf("writing record %s: its line is %d bytes (%d as a failed record without its answer), over the %d bytes the records reader accepts", r.Key, n, n2, MaxRecordBytes)
			}
			return err
		}
		r = f
	}
	w.ends = append(w.ends, w.buf.Len())
	w.oks = append(w.oks, r.Status == engine.StatusOK)
	if w.sh != nil {
		b := w.buf.Bytes()
		w.sh.recs = append(w.sh.recs, shadowRec{rec: *r, seal: string(b[len(b)-3-64 : len(b)-3])})
	}
	if now := time.Now(); now.Sub(w.last) >= w.FlushEvery || w.buf.Len() >= flushBytes {
		w.last = now
		if err := w.flush(); err != nil {
			return err
		}
		if w.SealBytes > 0 && w.size >= w.SealBytes {
			w.sealNow(false)
		}
		return w.err
	}
	return nil
}

// encode appends r's line (sealed) to the buffer and returns its length.
func (w *Writer) encode(r *engine.Record) (int, error) {
	start := w.buf.Len()
	if err := w.appendRecord(r); err != nil {
		return 0, fmt.Errorf("writing record %s: %w", r.Key, err)
	}
	seal(&w.buf, start)
	return w.buf.Len() - start, nil
}

// oversized is the failed record Write writes for r, whose line of n
// bytes is over MaxRecordBytes.
func oversized(r *engine.Record, n int) *engine.Record {
	f := *r
	f.Status = engine.StatusFailed
	f.Error = fmt.Sprintf("the record was %d bytes, over the %d bytes (%d MiB) a records.jsonl line may have; its answer is left out", n, MaxRecordBytes, MaxRecordBytes>>20)
	if r.Error != "" {
		f.Error += " (its error was: " + prefixString(r.Error, 2000) + ")"
	}
	f.Response, f.Reasoning, f.Refusal = "", "", ""
	f.Logprobs, f.PromptLogprobs, f.ToolCalls = nil, nil, nil
	f.EmptyResponse, f.Extracted = false, nil
	if len(f.Request) > MaxRecordBytes/2 {
		f.Request = nil
	}
	return &f
}

// prefixString is s cut to at most n bytes, on a UTF-8 boundary.
func prefixString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// flush writes the buffered records with one write(2) and counts those
// that reached the file.
func (w *Writer) flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	n, err := w.f.Write(w.buf.Bytes())
	w.size += int64(n)
	for i, end := range w.ends {
		if end > n {
			break
		}
		w.w.Records++
		if w.oks[i] {
			w.w.OK++
		} else {
			w.w.Failed++
		}
	}
	if w.sh != nil {
		w.sh.broken = w.sh.broken || n < w.buf.Len()
		w.sh.handOver()
	}
	w.buf.Reset()
	w.ends, w.oks = w.ends[:0], w.oks[:0]
	if err != nil {
		w.err = fmt.Errorf("writing %s: %w", w.path, err)
		return w.err
	}
	return nil
}

// Written returns the counts of records that reached the file so far.
func (w *Writer) Written() Written {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w
}

// Close flushes and closes the file, and seals it when it is over
// CloseSealBytes (with a lock, see CreateWith). A seal that failed (the
// records then stay in the live file or a plain segment, and are read as
// they are) is Close's error when nothing else went wrong.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	if err == nil {
		err = w.flush()
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing %s: %w", w.path, cerr)
	}
	if err == nil && w.CloseSealBytes >= 0 && w.size > w.CloseSealBytes {
		w.sealNow(true)
	}
	if w.sh != nil {
		w.sh.finish(false)
		w.sh = nil
	}
	w.waitConvert()
	return cmp.Or(err, w.sealErr)
}

// Read streams every record of dir (Files) to fn, in order on the
// caller's goroutine, stopping at the first error; a malformed line is
// reported with its file and line number. A torn last line of
// records.jsonl (TornTail) is left out; a damaged segment gives the
// records that can still be read (Damage). A directory without records is
// an error that errors.Is(err, os.ErrNotExist).
func Read(dir string, fn func(*engine.Record) error) error {
	copied := func(_ int, _ sealState, r *engine.Record) (*engine.Record, error) {
		c := *r
		return &c, nil
	}
	_, err := stream(context.Background(), dir, StreamOptions{WithRequests: true}, copied, func(r *lineResult[*engine.Record]) error { return fn(r.v) })
	return err
}

// noRecords is the error of a directory without records.
func noRecords(dir string) error {
	return fmt.Errorf("reading records: %w", &fs.PathError{Op: "open", Path: filepath.Join(dir, FileName), Err: fs.ErrNotExist})
}

// OK holds the ok records of a run directory by key: the earlier stages a
// later stage's prompts are built from.
type OK map[string]*engine.Record

// LoadOK reads dir's ok records; a run without records gives an empty set.
func LoadOK(dir string) (OK, error) {
	ok := OK{}
	err := Read(dir, func(r *engine.Record) error {
		if r.Status == engine.StatusOK {
			r.Request = nil
			ok[r.Key] = r
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return ok, nil
}

// Lookup finds the record of a key.
func (o OK) Lookup(k engine.Key) (*engine.Record, bool) {
	r, found := o[k.String()]
	return r, found
}

// Findings says what Unique left out of what it returned, and why:
// nothing is dropped without a word.
type Findings struct {
	Records   int        // duplicate records dropped (an ok record kept over a failed one, or an identical one)
	Keys      []string   // the first few keys concerned
	Conflicts []Conflict // keys whose ok records disagree: none of their records is returned
	Edited    []Flag     // records not as they were written (seal broken or removed): not returned
	Foreign   []Flag     // records of another experiment: not returned
	Torn      *TornTail  // a torn last line of records.jsonl: not read
	Damaged   []Damage   // damaged segments: what of them could not be read
}

// String is the duplicates' line ("" when there were none).
func (d Findings) String() string {
	if d.Records == 0 {
		return ""
	}
	return fmt.Sprintf("%d duplicate record(s) ignored, one record kept per key (an ok record before a failed one, else the first); keys include %s",
		d.Records, strings.Join(d.Keys, ", "))
}

// Notes are the lines a report prints about the findings, each naming the
// lines concerned.
func (d Findings) Notes() []string {
	var out []string
	if s := d.String(); s != "" {
		out = append(out, s)
	}
	if n := len(d.Conflicts); n > 0 {
		out = append(out, fmt.Sprintf("%d key(s) have ok records that disagree and are left out of every table (neither is trusted): %s", n, shortlist.Join(d.Conflicts, 5, "; ", "and %d more", Conflict.String)))
	}
	if n := len(d.Edited); n > 0 {
		out = append(out, fmt.Sprintf("%d record(s) are not as Bhasha wrote them and are left out of every table: %s", n, shortlist.Join(d.Edited, 5, "; ", "and %d more", Flag.String)))
	}
	if n := len(d.Foreign); n > 0 {
		out = append(out, fmt.Sprintf("%d record(s) belong to another experiment and are left out of every table: %s", n, shortlist.Join(d.Foreign, 5, "; ", "and %d more", Flag.String)))
	}
	for _, dm := range d.Damaged {
		out = append(out, dm.String())
	}
	if d.Torn != nil {
		out = append(out, d.Torn.String())
	}
	return out
}

// ArchiveDir is where Scan.Commit moves records, inside a run directory.
const ArchiveDir = "archive"
