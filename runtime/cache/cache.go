// Package cache is a content-addressed, append-only, crash-safe store of
// response bodies on disk, whose memory does not grow with it.
//
// Layout: DIR/responses.log holds the answers, one entry a line
//
//	<64 hex digits of the key> SP <8 hex digits of CRC-32 (IEEE) of VALUE> SP VALUE LF
//
// where VALUE is a JSON document without raw newlines. An entry is written
// with a single write(2) on a file opened O_APPEND, so a process killed at
// any point leaves at most one incomplete line, at the end. Open detects
// such a torn tail (no LF, bad CRC or bad key) and truncates it, reporting
// how many entries were dropped. The last entry for a key wins.
//
// DIR/responses.idx indexes the log up to an offset it records (its
// grammar: disk.go), a sorted table of 24 bytes a key read one 1.5 KB
// block a lookup; memory holds 16 bytes every 64 keys of it, and the
// entries of the lines past that offset (memIndex, 29 to 35 bytes each),
// at most 2²⁰ of them (32 MiB: 24 of entries, 8 of slots) before they
// are merged into a new table. Open reads the log from the recorded offset only. The index is
// derived: killed at any point, a process leaves the previous index or the
// new one, and one that does not check out against the log is rebuilt from
// it (OpenReport.Index says so). A line is re-validated (key and CRC) on
// every read, so neither a stale index nor a line damaged after it was
// indexed can serve a wrong answer: they answer as misses.
//
// Several processes may share a directory: each holds a shared flock while
// open, and the torn-tail repair happens only under an exclusive one (when
// no other process has the store open). Each sees the log as it was when
// it opened plus its own entries; the last to merge writes the index.
package cache

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/bhashalab/bhasha/internal/atomicfile"
)

// FileName is the name of the log inside the cache directory.
const FileName = "responses.log"

// DefaultDir is $BHASHA_CACHE_DIR, else the user cache directory + /bhasha.
func DefaultDir() string {
	if d := os.Getenv("BHASHA_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "bhasha")
	}
	return filepath.Join(os.TempDir(), "bhasha-cache")
}

type loc struct {
	off int64 // offset of the line
	n   int32 // length of the line, LF included (longLine: that long or longer)
}

// defaultMemMax is how many entries the memory index takes before they are
// merged into the table on disk.
const defaultMemMax = 1 << 20

// Store is an open cache. Its methods are safe for concurrent use.
type Store struct {
	path, idxPath string
	f             *os.File
	memMax        int

	mu   sync.RWMutex
	mem  memIndex   // entries of the lines past disk's cover, read first
	disk *diskIndex // the table on disk
	size int64
	// The log is indexed (disk and mem) without a gap up to cover: the
	// header of the next table.
	cover    idxHeader
	mergeErr error // the merge that failed; the memory index then grows
}

// OpenReport says what Open found.
type OpenReport struct {
	Path         string
	Entries      int    // distinct keys indexed
	DroppedTail  int    // incomplete entries cut from the end
	DroppedBytes int64  // bytes cut from the end
	Corrupt      int    // unreadable lines in the middle, skipped (left in place)
	Index        string // why the index on disk was rebuilt from the log, or ""
}

// String describes the repair, or "" when nothing was repaired.
func (r OpenReport) String() string {
	var parts []string
	if r.DroppedTail != 0 || r.Corrupt != 0 {
		parts = append(parts, fmt.Sprintf("cache %s: repaired torn tail: dropped %d incomplete entr%s (%d bytes); skipped %d corrupt line(s); %d entries kept",
			r.Path, r.DroppedTail, plural(r.DroppedTail), r.DroppedBytes, r.Corrupt, r.Entries))
	}
	if r.Index != "" {
		parts = append(parts, r.Index)
	}
	return strings.Join(parts, "; ")
}

func plural(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}

// Open opens (creating if needed) the store in dir ("" for DefaultDir):
// it checks the index on disk against the log and indexes the log's lines
// past it.
func Open(dir string) (*Store, OpenReport, error) { return openWith(dir, defaultMemMax) }

func openWith(dir string, memMax int) (*Store, OpenReport, error) {
	if dir == "" {
		dir = DefaultDir()
	}
	rep := OpenReport{Path: filepath.Join(dir, FileName)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, rep, fmt.Errorf("opening cache: %w", err)
	}
	f, err := os.OpenFile(rep.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, rep, fmt.Errorf("opening cache: %w", err)
	}
	exclusive := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	if !exclusive {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, rep, fmt.Errorf("locking cache %s: %w", rep.Path, err)
		}
	}
	s := &Store{path: rep.Path, idxPath: filepath.Join(dir, IndexName), f: f, memMax: memMax}
	fail := func(err error) (*Store, OpenReport, error) {
		if s.disk != nil {
			s.disk.close()
		}
		f.Close()
		return nil, rep, err
	}
	if exclusive { // no other process can be merging
		atomicfile.RemoveStray(s.idxPath)
	}
	st, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("reading cache %s: %w", rep.Path, err))
	}
	if s.disk, rep.Index, err = openDisk(s.idxPath, st.Size(), s.readLine); err != nil {
		return fail(err)
	}
	s.cover = s.disk.h
	goodEnd, err := s.scan(&rep)
	if err != nil {
		return fail(err)
	}
	if goodEnd < s.size && exclusive {
		rep.DroppedBytes = s.size - goodEnd
		if err := f.Truncate(goodEnd); err != nil {
			return fail(fmt.Errorf("repairing cache %s: %w", rep.Path, err))
		}
		s.size = goodEnd
	}
	if exclusive {
		// Downgrade so that other processes can share the store.
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
			return fail(fmt.Errorf("locking cache %s: %w", rep.Path, err))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	if rep.Entries, err = s.lenLocked(); err != nil {
		return fail(err)
	}
	return s, rep, nil
}

// scan indexes the log from the index's cover and returns the offset just
// past the last good line.
func (s *Store) scan(rep *OpenReport) (int64, error) {
	start := s.cover.covered
	if _, err := s.f.Seek(start, io.SeekStart); err != nil {
		return 0, fmt.Errorf("reading cache %s: %w", s.path, err)
	}
	rep.Corrupt = int(s.cover.corrupt)
	br := bufio.NewReaderSize(s.f, 1<<20)
	off, goodEnd := start, start
	badRun := 0 // bad lines since the last good one
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: gather it.
			buf := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return 0, fmt.Errorf("reading cache %s: %w", s.path, err)
		}
		complete := err == nil
		if key, _, _, ok := parseLine(line); ok && complete {
			rep.Corrupt += badRun
			s.cover.corrupt += int64(badRun)
			badRun = 0
			if err := s.indexLine(key, loc{off: off, n: int32(min(len(line), longLine))}, true); err != nil {
				return 0, err
			}
			goodEnd = off + int64(len(line))
		} else {
			badRun++
		}
		off += int64(len(line))
		if err == io.EOF {
			break
		}
	}
	rep.DroppedTail = badRun
	s.size = off
	return goodEnd, nil
}

// parseLine validates one line and returns the key and the VALUE's position.
func parseLine(line []byte) (key [32]byte, valOff, valLen int, ok bool) {
	const hdr = 64 + 1 + 8 + 1
	if len(line) < hdr+1 || line[len(line)-1] != '\n' || line[64] != ' ' || line[73] != ' ' {
		return key, 0, 0, false
	}
	if _, err := hex.Decode(key[:], line[:64]); err != nil {
		return key, 0, 0, false
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[65:73]); err != nil {
		return key, 0, 0, false
	}
	val := line[hdr : len(line)-1]
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	if crc32.ChecksumIEEE(val) != want {
		return key, 0, 0, false
	}
	return key, hdr, len(val), true
}

// indexLine points key's entry at l (the last entry of a key wins),
// with s.mu held or before s is shared; l extends the cover when it
// starts where the cover ends (always so in scan). A memory index at
// memMax is merged into the table on disk.
func (s *Store) indexLine(key [32]byte, l loc, extends bool) error {
	p, err := pack(l)
	if err != nil {
		return err
	}
	s.mem.put(fragOf(key), p)
	if extends {
		s.cover.covered, s.cover.last, s.cover.lastKey = l.off+int64(l.n), l, key
		if l.n == longLine { // the length field saturates: measure the line
			line, err := s.readLine(l)
			if err != nil {
				return err
			}
			s.cover.covered, s.cover.last.n = l.off+int64(len(line)), int32(min(len(line), 1<<31-1))
		}
	}
	if s.mem.n >= s.memMax && s.mergeErr == nil {
		s.merge()
	}
	return nil
}

// merge writes the memory index into a new table on disk and empties it,
// with s.mu held or before s is shared. When that fails the store goes on
// with the memory index alone growing (Close reports the error).
func (s *Store) merge() {
	nd, err := s.disk.merge(s.idxPath, &s.mem, s.cover)
	if err != nil {
		s.mergeErr = err
		return
	}
	s.disk = nd
	s.cover = nd.h
	s.mem.reset()
}

// settle merges a memory index of at least 1/32 of the table's entries,
// so that the next Open reads little of the log, with s.mu held.
func (s *Store) settle() {
	if s.mergeErr == nil && s.mem.n > 0 && int64(s.mem.n)*32 >= s.disk.h.n {
		s.merge()
	}
}

// lookup returns the place key's entry names, with s.mu held for reading.
func (s *Store) lookup(key [32]byte) (place, bool, error) {
	f := fragOf(key)
	if p, ok := s.mem.get(f); ok {
		return p, true, nil
	}
	return s.disk.get(f)
}

// lenLocked counts the distinct keys indexed: the table's, and those of
// the memory index it does not hold.
func (s *Store) lenLocked() (int, error) {
	n := int(s.disk.h.n)
	for i := range s.mem.n {
		f, _ := s.mem.entry(i)
		_, ok, err := s.disk.get(f)
		if err != nil {
			return 0, err
		}
		if !ok {
			n++
		}
	}
	return n, nil
}

// keyAt reads the line at l and returns its key and value (ok false when
// the line does not validate).
func (s *Store) keyAt(l loc) (key [32]byte, value []byte, ok bool, err error) {
	line, err := s.readLine(l)
	if err != nil {
		return key, nil, false, err
	}
	k, vo, vn, ok := parseLine(line)
	if !ok {
		return key, nil, false, nil
	}
	return k, line[vo : vo+vn], true, nil
}

// readLine reads the line at l, LF included.
func (s *Store) readLine(l loc) ([]byte, error) {
	if l.n < longLine {
		buf := make([]byte, l.n)
		if _, err := s.f.ReadAt(buf, l.off); err != nil {
			return nil, fmt.Errorf("reading cache %s at %d: %w", s.path, l.off, err)
		}
		return buf, nil
	}
	buf := make([]byte, 0, 2*longLine)
	for off := l.off; ; {
		chunk := make([]byte, 1<<20)
		n, err := s.f.ReadAt(chunk, off)
		if i := bytes.IndexByte(chunk[:n], '\n'); i >= 0 {
			return append(buf, chunk[:i+1]...), nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading cache %s at %d: %w", s.path, l.off, err)
		}
		buf = append(buf, chunk[:n]...)
		off += int64(n)
	}
}

// Get returns the value stored under key. The line is re-validated (key and
// CRC) on every read; a line that no longer validates counts as a miss.
func (s *Store) Get(key [32]byte) ([]byte, bool, error) {
	s.mu.RLock()
	p, ok, err := s.lookup(key)
	s.mu.RUnlock()
	if err != nil || !ok {
		return nil, false, err
	}
	k, v, ok, err := s.keyAt(p.loc())
	if err != nil || !ok || k != key {
		return nil, false, err
	}
	return v, true, nil
}

// Has reports whether key is stored.
func (s *Store) Has(key [32]byte) bool {
	_, ok, err := s.Get(key)
	return ok && err == nil
}

// Put appends value under key with one write. value must not contain '\n'.
func (s *Store) Put(key [32]byte, value []byte) error {
	if bytes.IndexByte(value, '\n') >= 0 {
		return errors.New("cache: value contains a newline")
	}
	const hdr = 64 + 1 + 8 + 1
	line := make([]byte, hdr+len(value)+1)
	hex.Encode(line[:64], key[:])
	line[64] = ' '
	c := crc32.ChecksumIEEE(value)
	hex.Encode(line[65:73], []byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)})
	line[73] = ' '
	copy(line[hdr:], value)
	line[len(line)-1] = '\n'
	s.mu.Lock()
	defer s.mu.Unlock()
	// With O_APPEND the kernel places the write at the end even if another
	// process appended meanwhile; Stat tells us where it landed.
	if _, err := s.f.Write(line); err != nil {
		return fmt.Errorf("writing cache %s: %w", s.path, err)
	}
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("writing cache %s: %w", s.path, err)
	}
	end := st.Size()
	s.size = end
	off := end - int64(len(line))
	if err := s.indexLine(key, loc{off: off, n: int32(min(len(line), longLine))}, off == s.cover.covered); err != nil {
		return fmt.Errorf("writing cache %s: %w", s.path, err)
	}
	return nil
}

// Len is the number of distinct keys indexed (0 when the index cannot be
// read).
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, _ := s.lenLocked()
	return n
}

// Keys returns every indexed key whose line validates (for tests and
// tools).
func (s *Store) Keys() [][32]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out [][32]byte
	add := func(p place) {
		if k, _, ok, _ := s.keyAt(p.loc()); ok {
			out = append(out, k)
		}
	}
	for i := range s.mem.n {
		_, p := s.mem.entry(i)
		add(p)
	}
	s.disk.each(func(f frag, p place) bool {
		if _, shadowed := s.mem.get(f); !shadowed {
			add(p)
		}
		return true
	})
	return out
}

// Close writes the memory index into the table on disk when it has grown
// to 1/32 of it, and releases the files and the lock. It reports a merge
// that failed while the store was open (the answers are all in the log;
// the next Open indexes them).
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	return errors.Join(s.mergeErr, s.disk.close(), s.f.Close())
}
