package run

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"sync"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// buildPrior indexes the responses of dir's ok records that stage looks up
// (the last of a key wins); nil (finding nothing) when it looks nothing up.
func buildPrior(dir string, j *Job, stage int) (*scratch, error) {
	if stage < 2 {
		return nil, nil
	}
	seed := maphash.MakeSeed()
	var asked []uint64
	note := func(k engine.Key) (*engine.Record, bool) {
		asked = append(asked, maphash.String(seed, k.String()))
		return nil, false
	}
	for _, err := range j.Requests(stage, note, nil) {
		if err != nil {
			return nil, err
		}
	}
	if len(asked) == 0 {
		return nil, nil
	}
	slices.Sort(asked)
	asked = slices.Compact(asked)
	return fillScratch(dir, "indexing the records of earlier stages", func(r *engine.Record) (string, string, bool) {
		if r.Status != engine.StatusOK {
			return "", "", false
		}
		_, found := slices.BinarySearch(asked, maphash.String(seed, r.Key))
		return r.Key, r.Response, found
	})
}

// Lookup finds the last ok record of k (p nil: none), holding Key,
// Fields, Status and Response.
func (p *scratch) Lookup(k engine.Key) (*engine.Record, bool) {
	key := k.String()
	resp, ok := p.get(key)
	if !ok {
		return nil, false
	}
	return &engine.Record{Key: key, Fields: k, Status: engine.StatusOK, Response: resp}, true
}

// scratch is a write-once store of values by key in an unlinked file
// (uvarint(len(key)) uvarint(len(value)) key value), with each key's hash
// and offset in memory (16 bytes); get returns a key's last value.
type scratch struct {
	what    string // what it is for, in errors
	seed    maphash.Seed
	f       *os.File
	path    string // "" once unlinked
	w       *bufio.Writer
	off     int64
	entries []scratchEntry // sorted by hash, then offset, once sealed

	mu  sync.Mutex
	buf []byte
	err error // the first read error; gets after it find nothing
}

type scratchEntry struct {
	h   uint64
	off int64
}

// fillScratch stores the key and value pick takes from each of dir's
// records in a scratch file in dir (in the temporary directory when dir
// cannot take one). A dir without records gives an empty store.
func fillScratch(dir, what string, pick func(*engine.Record) (key, value string, ok bool)) (*scratch, error) {
	f, err := os.CreateTemp(dir, ".scratch-*.tmp")
	if err != nil {
		if f, err = os.CreateTemp("", "bhasha-scratch-*.tmp"); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	s := &scratch{what: what, seed: maphash.MakeSeed(), f: f, path: f.Name(), w: bufio.NewWriterSize(f, 1<<20)}
	if os.Remove(f.Name()) == nil {
		s.path = ""
	}
	err = records.Read(dir, func(r *engine.Record) error {
		if k, v, ok := pick(r); ok {
			return s.add(k, v)
		}
		return nil
	})
	if err == nil || errors.Is(err, os.ErrNotExist) {
		if err = s.seal(); err == nil {
			return s, nil
		}
	}
	s.Close()
	return nil, err
}

// add appends value under key (before seal).
func (s *scratch) add(key, value string) error {
	var hdr [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(len(key)))
	n += binary.PutUvarint(hdr[n:], uint64(len(value)))
	s.w.Write(hdr[:n])
	s.w.WriteString(key)
	if _, err := s.w.WriteString(value); err != nil {
		return fmt.Errorf("%s: %w", s.what, err)
	}
	s.entries = append(s.entries, scratchEntry{maphash.String(s.seed, key), s.off})
	s.off += int64(n + len(key) + len(value))
	return nil
}

// seal writes what add buffered and readies the store for get.
func (s *scratch) seal() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", s.what, err)
	}
	slices.SortFunc(s.entries, func(a, b scratchEntry) int {
		return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.off, b.off))
	})
	s.entries = slices.Clip(s.entries)
	return nil
}

// get returns the value last added under key.
func (s *scratch) get(key string) (string, bool) {
	if s == nil || len(s.entries) == 0 {
		return "", false
	}
	h := maphash.String(s.seed, key)
	i, found := slices.BinarySearchFunc(s.entries, h, func(e scratchEntry, h uint64) int { return cmp.Compare(e.h, h) })
	if !found {
		return "", false
	}
	last := i
	for last+1 < len(s.entries) && s.entries[last+1].h == h {
		last++
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for e := last; e >= i; e-- {
		gotKey, value, err := s.read(s.entries[e].off)
		if err != nil {
			if s.err == nil {
				s.err = fmt.Errorf("%s: reading back %s: %w", s.what, key, err)
			}
			return "", false
		}
		if string(gotKey) == key {
			return string(value), true
		}
	}
	return "", false
}

// read returns the key and value stored at off (valid until the next read).
func (s *scratch) read(off int64) ([]byte, []byte, error) {
	if cap(s.buf) < 4096 {
		s.buf = make([]byte, 4096)
	}
	b := s.buf[:cap(s.buf)]
	n, err := s.f.ReadAt(b, off)
	if n == 0 && err != nil {
		return nil, nil, err
	}
	b = b[:n]
	kl, a := binary.Uvarint(b)
	vl, c := binary.Uvarint(b[max(a, 0):])
	if a <= 0 || c <= 0 {
		return nil, nil, fmt.Errorf("entry at %d: bad header", off)
	}
	hl := a + c
	total := hl + int(kl) + int(vl)
	if total > len(b) {
		s.buf = make([]byte, total)
		if _, err := s.f.ReadAt(s.buf, off); err != nil {
			return nil, nil, err
		}
		b = s.buf
	}
	return b[hl : hl+int(kl)], b[hl+int(kl) : total], nil
}

// Err is the first error a get met.
func (s *scratch) Err() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close releases the scratch file.
func (s *scratch) Close() {
	if s == nil || s.f == nil {
		return
	}
	s.f.Close()
	if s.path != "" {
		os.Remove(s.path)
	}
	s.f = nil
}
