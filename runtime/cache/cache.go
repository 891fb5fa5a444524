// Package cache is a content-addressed, append-only, crash-safe store of
// response bodies on disk.
//
// Layout: one file, DIR/responses.log. Each entry is one line
//
//	<64 hex digits of the key> SP <8 hex digits of CRC-32 (IEEE) of VALUE> SP VALUE LF
//
// where VALUE is a JSON document without raw newlines. An entry is written
// with a single write(2) on a file opened O_APPEND, so a process killed at
// any point leaves at most one incomplete line, at the end. Open detects
// such a torn tail (no LF, bad CRC or bad key) and truncates it, reporting
// how many entries were dropped. The last entry for a key wins.
//
// Several processes may share a directory: each holds a shared flock while
// open, and the torn-tail repair happens only under an exclusive one (when
// no other process has the store open).
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
	"sync"
	"syscall"
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

// Store is an open cache. Its methods are safe for concurrent use. Its
// index holds 16 bytes a key (see index), not the keys: a lookup reads
// the line and checks the whole key.
type Store struct {
	path  string
	f     *os.File
	mu    sync.RWMutex
	index index
	size  int64
}

// OpenReport says what Open found.
type OpenReport struct {
	Path         string
	Entries      int   // distinct keys indexed
	DroppedTail  int   // incomplete entries cut from the end
	DroppedBytes int64 // bytes cut from the end
	Corrupt      int   // unreadable lines in the middle, skipped (left in place)
}

// String describes the repair, or "" when nothing was repaired.
func (r OpenReport) String() string {
	if r.DroppedTail == 0 && r.Corrupt == 0 {
		return ""
	}
	return fmt.Sprintf("cache %s: repaired torn tail: dropped %d incomplete entr%s (%d bytes); skipped %d corrupt line(s); %d entries kept",
		r.Path, r.DroppedTail, plural(r.DroppedTail), r.DroppedBytes, r.Corrupt, r.Entries)
}

func plural(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}

// Open opens (creating if needed) the store in dir ("" for DefaultDir)
// and indexes it.
func Open(dir string) (*Store, OpenReport, error) {
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
	s := &Store{path: rep.Path, f: f}
	goodEnd, err := s.scan(&rep)
	if err != nil {
		f.Close()
		return nil, rep, err
	}
	if goodEnd < s.size && exclusive {
		rep.DroppedBytes = s.size - goodEnd
		if err := f.Truncate(goodEnd); err != nil {
			f.Close()
			return nil, rep, fmt.Errorf("repairing cache %s: %w", rep.Path, err)
		}
		s.size = goodEnd
	}
	if exclusive {
		// Downgrade so that other processes can share the store.
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
			f.Close()
			return nil, rep, fmt.Errorf("locking cache %s: %w", rep.Path, err)
		}
	}
	rep.Entries = s.index.n
	return s, rep, nil
}

// scan indexes the file and returns the offset just past the last good line.
func (s *Store) scan(rep *OpenReport) (int64, error) {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("reading cache %s: %w", s.path, err)
	}
	br := bufio.NewReaderSize(s.f, 1<<20)
	var off, goodEnd int64
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
			if err := s.indexLine(key, loc{off: off, n: int32(min(len(line), longLine))}); err != nil {
				return 0, err
			}
			rep.Corrupt += badRun
			badRun = 0
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

// indexLine points key's entry at l (a key already indexed moves: the
// last entry wins), with s.mu held or before s is shared.
func (s *Store) indexLine(key [32]byte, l loc) error {
	p := prefixOf(key)
	found := -1
	var err error
	s.index.candidates(p, func(i int, at loc) bool {
		var k [32]byte
		var ok bool
		if k, _, ok, err = s.keyAt(at); ok && k == key {
			found = i
			return false
		}
		return err == nil
	})
	switch {
	case err != nil:
		return err
	case found >= 0:
		return s.index.set(found, l)
	}
	return s.index.add(p, l)
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
	var at [2]loc
	cands := at[:0] // almost always one: prefixes rarely collide
	s.mu.RLock()
	s.index.candidates(prefixOf(key), func(_ int, l loc) bool { cands = append(cands, l); return true })
	s.mu.RUnlock()
	for _, l := range cands {
		k, v, ok, err := s.keyAt(l)
		if err != nil {
			return nil, false, err
		}
		if ok && k == key {
			return v, true, nil
		}
	}
	return nil, false, nil
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
	if err := s.indexLine(key, loc{off: end - int64(len(line)), n: int32(min(len(line), longLine))}); err != nil {
		return fmt.Errorf("writing cache %s: %w", s.path, err)
	}
	return nil
}

// Len is the number of distinct keys indexed.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.index.n
}

// Keys returns every indexed key (for tests and tools).
func (s *Store) Keys() [][32]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([][32]byte, 0, s.index.n)
	s.index.each(func(l loc) {
		if k, _, ok, _ := s.keyAt(l); ok {
			out = append(out, k)
		}
	})
	return out
}

// Close releases the file and its lock.
func (s *Store) Close() error { return s.f.Close() }
