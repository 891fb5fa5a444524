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
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bhashalab/bhasha/internal/lines"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// FileName is the records file inside a run directory.
const FileName = "records.jsonl"

// KeySet is a set of record keys, each with the digest of the request it
// answered, held as 128-bit key hashes and 64-bit digest prefixes so that
// a million-key run costs tens of megabytes, not hundreds.
type KeySet struct {
	seed1, seed2 maphash.Seed
	m            map[[2]uint64]uint64 // key hash -> request digest prefix (0: not recorded)
}

// NewKeySet returns an empty set.
func NewKeySet() *KeySet {
	return &KeySet{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), m: make(map[[2]uint64]uint64)}
}

func (s *KeySet) h(k string) [2]uint64 {
	return [2]uint64{maphash.String(s.seed1, k), maphash.String(s.seed2, k)}
}

// Add inserts k and reports whether it was new.
func (s *KeySet) Add(k string) bool { return s.AddRequest(k, "") }

// AddRequest inserts k answered by the request whose digest (hex SHA-256,
// engine.RequestDigest) is given ("" when the record does not say), and
// reports whether k was new.
func (s *KeySet) AddRequest(k, digest string) bool {
	h := s.h(k)
	if _, ok := s.m[h]; ok {
		return false
	}
	s.m[h] = digestPrefix(digest)
	return true
}

// Has reports whether k is in the set.
func (s *KeySet) Has(k string) bool { _, ok := s.m[s.h(k)]; return ok }

// Changed reports whether k is in the set with a recorded request digest
// that differs from digest (a record without a digest never differs).
func (s *KeySet) Changed(k, digest string) bool {
	d, ok := s.m[s.h(k)]
	return ok && d != 0 && d != digestPrefix(digest)
}

// Remove deletes k.
func (s *KeySet) Remove(k string) { delete(s.m, s.h(k)) }

// Len is the number of keys.
func (s *KeySet) Len() int { return len(s.m) }

// digestPrefix is the first 8 bytes of a hex digest, never 0 for a digest.
func digestPrefix(digest string) uint64 {
	if len(digest) < 16 {
		return 0
	}
	v, err := strconv.ParseUint(digest[:16], 16, 64)
	if err != nil {
		return 0
	}
	return v | 1
}

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
// already answered. A malformed line that is not the last is an error naming
// the file, line and field: the file is not ours to guess about.
func Prepare(dir string) (*KeySet, PrepareReport, error) {
	path := filepath.Join(dir, FileName)
	rep := PrepareReport{Path: path}
	done := NewKeySet()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return done, rep, nil
	}
	if err != nil {
		return nil, rep, fmt.Errorf("opening records: %w", err)
	}
	defer f.Close()
	var keep []int64 // byte ranges to keep: pairs of start,end
	var off int64
	br := bufio.NewReaderSize(f, 1<<20)
	lineNo := 0
	needRewrite := false
	for {
		line, rerr := br.ReadBytes('\n')
		if len(line) == 0 && rerr == io.EOF {
			break
		}
		if rerr != nil && rerr != io.EOF {
			return nil, rep, fmt.Errorf("reading %s: %w", path, rerr)
		}
		lineNo++
		start := off
		off += int64(len(line))
		complete := rerr == nil
		var rec struct {
			Key     *string `json:"key"`
			Status  *string `json:"status"`
			Request string  `json:"request_sha256"`
		}
		perr := json.Unmarshal(line, &rec)
		if perr == nil {
			switch {
			case rec.Key == nil:
				perr = errors.New(`field "key" is missing`)
			case rec.Status == nil:
				perr = errors.New(`field "status" is missing`)
			case *rec.Status != engine.StatusOK && *rec.Status != engine.StatusFailed:
				perr = fmt.Errorf(`field "status": %q is neither "ok" nor "failed"`, *rec.Status)
			}
		}
		if !complete || perr != nil {
			if rerr == io.EOF { // the last line: a torn tail from a killed run
				rep.TornTail = true
				rep.TornTailBytes = int64(len(line))
				needRewrite = true
				break
			}
			return nil, rep, fmt.Errorf("%s line %d: %v", path, lineNo, perr)
		}
		switch {
		case *rec.Status != engine.StatusOK:
			rep.DroppedFailed++
			needRewrite = true
		case !done.AddRequest(*rec.Key, rec.Request):
			rep.DroppedDup++
			needRewrite = true
		default:
			rep.Kept++
			keep = append(keep, start, off)
		}
		if rerr == io.EOF {
			break
		}
	}
	if needRewrite {
		if err := rewrite(f, path, keep); err != nil {
			return nil, rep, err
		}
		rep.RewroteFile = true
	}
	return done, rep, nil
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

// Write appends one record (one line).
func (w *Writer) Write(r *engine.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	// The request body is JSON the engine marshalled itself (Request.Body):
	// it is spliced in as the last field rather than re-validated and
	// compacted by the encoder (it is the largest field of most records).
	req := r.Request
	r.Request = nil
	err := w.enc.Encode(r) // Encode writes nothing on error
	r.Request = req
	if err != nil {
		return fmt.Errorf("writing record %s: %w", r.Key, err)
	}
	if len(req) > 0 {
		w.buf.Truncate(w.buf.Len() - 2) // "}\n"
		w.buf.WriteString(`,"request":`)
		w.buf.Write(req)
		w.buf.WriteString("}\n")
	}
	w.ends = append(w.ends, w.buf.Len())
	w.oks = append(w.oks, r.Status == engine.StatusOK)
	if now := time.Now(); now.Sub(w.last) >= w.FlushEvery || w.buf.Len() >= flushBytes {
		w.last = now
		return w.flush()
	}
	return nil
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

// Duplicates describes the keys that occur more than once in a records
// file (a directory written by two runs at once, before run directories
// were locked).
type Duplicates struct {
	Records int      // records dropped
	Keys    []string // the first few keys concerned
}

func (d Duplicates) String() string {
	if d.Records == 0 {
		return ""
	}
	return fmt.Sprintf("%d duplicate record(s) ignored, one record kept per key (an ok record before a failed one, else the first); keys include %s",
		d.Records, strings.Join(d.Keys, ", "))
}

// ReadUnique reads every record of dir and keeps one per key: the first ok
// record of the key, or its first record when none is ok. What it dropped
// is reported, never silently ignored. The request bodies are kept only
// when withRequests (they are most of a record's size, and scoring does not
// read them).
func ReadUnique(dir string, withRequests bool) ([]*engine.Record, Duplicates, error) {
	var out []*engine.Record
	var d Duplicates
	at := map[string]int{}
	err := Read(dir, func(r *engine.Record) error {
		if !withRequests {
			r.Request = nil
		}
		i, seen := at[r.Key]
		if !seen {
			at[r.Key] = len(out)
			out = append(out, r)
			return nil
		}
		d.Records++
		if len(d.Keys) < 5 && !slices.Contains(d.Keys, r.Key) {
			d.Keys = append(d.Keys, r.Key)
		}
		if out[i].Status != engine.StatusOK && r.Status == engine.StatusOK {
			out[i] = r
		}
		return nil
	})
	return out, d, err
}

// ArchiveDir is where Archive moves records, inside a run directory.
const ArchiveDir = "archive"

// Archive moves the records of keys out of dir/records.jsonl into
// dir/archive/<name>.jsonl (appended), rewriting records.jsonl atomically
// without them. It returns the archive's path and how many records moved.
// The caller holds the directory's exclusive lock.
func Archive(dir string, keys map[string]bool, name string) (string, int, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("archiving records: %w", err)
	}
	defer f.Close()
	if err := os.MkdirAll(filepath.Join(dir, ArchiveDir), 0o755); err != nil {
		return "", 0, fmt.Errorf("archiving records: %w", err)
	}
	apath := filepath.Join(dir, ArchiveDir, name+".jsonl")
	af, err := os.OpenFile(apath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return "", 0, fmt.Errorf("archiving records: %w", err)
	}
	aw := bufio.NewWriterSize(af, 1<<20)
	var keep []int64
	var off int64
	moved := 0
	sc := lines.New(f, path, 0)
	for sc.Scan() {
		line := sc.Bytes()
		start := off
		off += int64(len(line)) + 1
		var rec struct {
			Key string `json:"key"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			af.Close()
			return "", 0, fmt.Errorf("%s line %d: %w", path, sc.Line(), err)
		}
		if !keys[rec.Key] {
			keep = append(keep, start, off)
			continue
		}
		moved++
		aw.Write(line)
		aw.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		af.Close()
		return "", 0, err
	}
	if err := aw.Flush(); err != nil {
		af.Close()
		return "", 0, fmt.Errorf("writing %s: %w", apath, err)
	}
	if err := af.Close(); err != nil {
		return "", 0, fmt.Errorf("writing %s: %w", apath, err)
	}
	// The archive holds the records before records.jsonl loses them: a
	// crash in between leaves them in both, never in neither.
	if err := rewrite(f, path, keep); err != nil {
		return "", 0, err
	}
	return apath, moved, nil
}
