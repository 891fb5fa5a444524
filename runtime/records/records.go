// Package records reads and writes a run's records.jsonl: one JSON object
// per request (see engine.Record for the fields), appended as answers
// come, whole records per write(2), by one process at a time (LockDir).
//
// Resume contract: Prepare reads an existing file, cuts a torn last line,
// drops "failed" records (they will be retried) and duplicate keys, rewrites
// the file when it dropped anything, and returns the set of keys already
// answered. A run that then writes only keys outside that set ends with
// exactly one record per key.
package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/internal/lines"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// FileName is the records file inside a run directory.
const FileName = "records.jsonl"

// PrepareReport says what Prepare found in an existing file.
type PrepareReport struct {
	Path           string
	Kept           int // ok records kept
	DroppedFailed  int // failed records removed so they are retried
	DroppedDup     int // duplicate keys removed
	TornTail       bool
	TornTailBytes  int64
	RewroteFile    bool
	CorruptAtLines []int
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
	return out
}

// Prepare makes dir/records.jsonl ready for appending and returns the keys
// already answered: ScanDir, then Commit without archiving. A malformed
// line that is not the last is an error naming the file, line and field;
// so are disagreeing ok records of one key (Conflict), which are left as
// they are: the file is not ours to guess about.
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

// rewrite copies the kept byte ranges of src into a new file that replaces path.
func rewrite(src *os.File, path string, keep []int64) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".records-*.tmp")
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	for i := 0; i < len(keep); i += 2 {
		if _, err := io.Copy(w, io.NewSectionReader(src, keep[i], keep[i+1]-keep[i])); err != nil {
			tmp.Close()
			return fmt.Errorf("rewriting %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	return nil
}

// Writer appends records to dir/records.jsonl. It buffers whole records
// and writes them with one write(2) per flush, at least every FlushEvery
// and whenever 256 KiB are waiting, so no record is ever split across two
// writes (the file is also locked, see LockDir). A record lost to a crash
// before its flush is re-served from the response cache on resume, never
// re-sent.
//
// After a write error (a full disk, say) the Writer counts exactly the
// records that reached the file (Written); every later call returns the
// same error.
type Writer struct {
	mu   sync.Mutex
	f    io.WriteCloser // the records file (a fault-injecting one in tests)
	path string
	buf  bytes.Buffer  // whole records waiting for the next write(2)
	enc  *json.Encoder // encodes into buf
	ends []int         // end offset in buf of each buffered record
	oks  []bool
	last time.Time
	err  error
	w    Written
	// FlushEvery bounds how long a record may sit in the buffer.
	FlushEvery time.Duration
}

// Written counts the records that reached the file.
type Written struct {
	Records, OK, Failed int
}

const flushBytes = 256 << 10

// Create opens dir/records.jsonl for appending.
func Create(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	if err := noLink(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening records: %w", err)
	}
	return newWriter(f, path), nil
}

func newWriter(f io.WriteCloser, path string) *Writer {
	w := &Writer{f: f, path: path, last: time.Now(), FlushEvery: 200 * time.Millisecond}
	w.buf.Grow(flushBytes + 4096)
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	return w
}

// MaxRecordBytes is the longest record line, its newline included, that
// the records readers accept (Read, ReadUnique: the line limit of
// internal/lines). Writer.Write never writes a longer one.
const MaxRecordBytes = lines.DefaultMax

// Write appends one record (one line).
//
// A record whose line would be longer than MaxRecordBytes (which the
// readers refuse, so that the run could not be read again) is written as
// a failed record instead, without its answer (response, reasoning,
// logprobs, tool calls, extraction) and, if the request alone is over half
// the limit, without its request body (request_sha256 stays), its error
// naming the size; r itself is left as it was. The run then carries on and
// ends incomplete, the record's key named; resuming sends it again (an
// answer served from the cache is as large again). Only a record whose
// failed form is still over the limit is refused with an error.
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
	if now := time.Now(); now.Sub(w.last) >= w.FlushEvery || w.buf.Len() >= flushBytes {
		w.last = now
		return w.flush()
	}
	return nil
}

// encode appends r's line (sealed) to the buffer and returns its length.
func (w *Writer) encode(r *engine.Record) (int, error) {
	start := w.buf.Len()
	// The request body is JSON the engine marshalled itself (Request.Body):
	// it is spliced in as the last field rather than re-validated and
	// compacted by the encoder (it is the largest field of most records).
	req := r.Request
	r.Request = nil
	err := w.enc.Encode(r) // Encode writes nothing on error
	r.Request = req
	if err != nil {
		return 0, fmt.Errorf("writing record %s: %w", r.Key, err)
	}
	if len(req) > 0 {
		w.buf.Truncate(w.buf.Len() - 2) // "}\n"
		w.buf.WriteString(`,"request":`)
		w.buf.Write(req)
		w.buf.WriteString("}\n")
	}
	w.seal()
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

// seal appends the record_sha256 member to the record just encoded.
func (w *Writer) seal() {
	start := 0
	if n := len(w.ends); n > 0 {
		start = w.ends[n-1]
	}
	seal(&w.buf, start)
}

// flush writes the buffered records with one write(2) and counts those
// that reached the file.
func (w *Writer) flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	n, err := w.f.Write(w.buf.Bytes())
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

// Close flushes and closes the file.
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
	return err
}

// Read streams every record of dir/records.jsonl to fn, stopping at the
// first error; a malformed line is reported with its line number.
func Read(dir string, fn func(*engine.Record) error) error {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading records: %w", err)
	}
	defer f.Close()
	sc := lines.New(f, path, 0)
	for sc.Scan() {
		var r engine.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%s line %d: %w", path, sc.Line(), err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return sc.Err()
}

// OK holds the ok records of a run directory by key: the earlier stages a
// later stage's prompts are built from.
type OK map[string]*engine.Record

// LoadOK reads dir's ok records; a run without records gives an empty set.
func LoadOK(dir string) (OK, error) {
	ok := OK{}
	err := Read(dir, func(r *engine.Record) error {
		if r.Status == engine.StatusOK {
			r.Request = nil // later prompts need the answer, not the request: keep memory low
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

// Findings says what ReadUnique left out of what it returned, and why:
// nothing is dropped without a word.
type Findings struct {
	Records   int        // duplicate records dropped (an ok record kept over a failed one, or an identical one)
	Keys      []string   // the first few keys concerned
	Conflicts []Conflict // keys whose ok records disagree: none of their records is returned
	Edited    []Flag     // records not as they were written (seal broken or removed): not returned
	Foreign   []Flag     // records of another experiment: not returned
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
		var parts []string
		for i, c := range d.Conflicts {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("and %d more", n-5))
				break
			}
			parts = append(parts, c.String())
		}
		out = append(out, fmt.Sprintf("%d key(s) have ok records that disagree and are left out of every table (neither is trusted): %s", n, strings.Join(parts, "; ")))
	}
	if n := len(d.Edited); n > 0 {
		out = append(out, fmt.Sprintf("%d record(s) are not as Bhasha wrote them and are left out of every table: %s", n, FlagList(d.Edited, 5)))
	}
	if n := len(d.Foreign); n > 0 {
		out = append(out, fmt.Sprintf("%d record(s) belong to another experiment and are left out of every table: %s", n, FlagList(d.Foreign, 5)))
	}
	return out
}

// ReadUnique reads every record of dir and keeps one per key: the first ok
// record of the key, or its first record when none is ok. Records whose
// seal is broken or missing (see Scan), records of an experiment other
// than experiment (when it is not ""), and every record of a key whose ok
// records disagree are not returned; Findings names them with their lines.
// The request bodies are kept only when withRequests (they are most of a
// record's size, and scoring does not read them). It never writes.
func ReadUnique(dir, experiment string, withRequests bool) ([]*engine.Record, Findings, error) {
	var out []*engine.Record
	var d Findings
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if err != nil {
		return nil, d, fmt.Errorf("reading records: %w", err)
	}
	defer f.Close()
	at := map[string]int{}
	conflict := map[string]int{} // key -> index in d.Conflicts
	lineOf := map[string]int{}
	sealed := 0
	sc := lines.New(f, path, 0)
	for sc.Scan() {
		raw := sc.Bytes()
		n := sc.Line()
		var r engine.Record
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, d, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		switch checkSeal(raw) {
		case sealOK:
			sealed++
		case sealBroken:
			d.Edited = append(d.Edited, Flag{Line: n, Key: r.Key, Why: "edited after it was written (its record_sha256 does not match the line)"})
			continue
		default:
			if sealed+len(d.Edited) > 0 {
				d.Edited = append(d.Edited, Flag{Line: n, Key: r.Key, Why: unsealedWhy})
				continue
			}
		}
		if experiment != "" && keyField(r.Key, 0) != experiment {
			d.Foreign = append(d.Foreign, Flag{Line: n, Key: r.Key, Why: fmt.Sprintf("a record of experiment %q, not %q", keyField(r.Key, 0), experiment)})
			continue
		}
		if !withRequests {
			r.Request = nil
		}
		rp := &r
		i, seen := at[r.Key]
		if !seen {
			at[r.Key] = len(out)
			lineOf[r.Key] = n
			out = append(out, rp)
			continue
		}
		first := out[i]
		switch {
		case first.Status == engine.StatusOK && r.Status == engine.StatusOK && first.Response != r.Response:
			ci, ok := conflict[r.Key]
			if !ok {
				ci = len(d.Conflicts)
				conflict[r.Key] = ci
				d.Conflicts = append(d.Conflicts, Conflict{Key: r.Key, Lines: []int{lineOf[r.Key]}, Responses: []string{first.Response}})
			}
			d.Conflicts[ci].Lines = append(d.Conflicts[ci].Lines, n)
			d.Conflicts[ci].Responses = append(d.Conflicts[ci].Responses, r.Response)
			continue
		case first.Status != engine.StatusOK && r.Status == engine.StatusOK:
			out[i] = rp
			lineOf[r.Key] = n
		}
		d.Records++
		if len(d.Keys) < 5 && !slices.Contains(d.Keys, r.Key) {
			d.Keys = append(d.Keys, r.Key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, d, err
	}
	drop := map[string]bool{}
	for _, c := range d.Conflicts {
		drop[c.Key] = true
	}
	if len(drop) > 0 {
		out = slices.DeleteFunc(out, func(r *engine.Record) bool { return drop[r.Key] })
	}
	return out, d, nil
}

// ArchiveDir is where Scan.Commit moves records, inside a run directory.
const ArchiveDir = "archive"
