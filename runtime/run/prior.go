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

// priorIndex is what a later stage's requests read of the earlier stages:
// the ok records of the keys that stage looks up, found by key without
// holding them.
//
// It is built in two passes (buildPrior): the stage's requests are
// generated once with a Lookup that finds nothing and notes every key it
// is asked (which keys a stage looks up does not depend on what it finds:
// the studies build the earlier stage's key from the item), then the
// records are streamed (records.Read) and, of each ok record of such a
// key, the key and response are appended to a scratch file in the run
// directory, unlinked as soon as it is made, so that nothing is left
// behind by a crash. In memory stay a 64-bit hash and the offset of each
// (16 bytes a record looked up), sorted; a lookup reads the entry back
// and compares the whole key, so a hash collision costs a read, never a
// wrong answer. Of several ok records of one key the last wins, as it
// did when the records were held in a map.
//
// The record a lookup returns holds what the studies' request builders
// read: Key, Fields, Status (ok) and Response.
type priorIndex struct {
	seed    maphash.Seed
	f       *os.File
	path    string
	entries []priorEntry // sorted by hash, then offset

	mu  sync.Mutex
	buf []byte
	err error // the first read error; lookups after it find nothing
}

type priorEntry struct {
	h   uint64
	off int64
}

// buildPrior indexes, from dir's records, the ok records stage's requests
// look up. It returns nil (a Lookup that finds nothing) for stage 1, when
// the stage looks nothing up or dir has no records.
func buildPrior(dir string, j *Job, stage int) (*priorIndex, error) {
	if stage < 2 {
		return nil, nil
	}
	p := &priorIndex{seed: maphash.MakeSeed()}
	var asked []uint64
	note := func(k engine.Key) (*engine.Record, bool) {
		asked = append(asked, maphash.String(p.seed, k.String()))
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
	f, err := os.CreateTemp(dir, ".prior-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("indexing the records of earlier stages: %w", err)
	}
	p.f, p.path = f, f.Name()
	if os.Remove(f.Name()) == nil {
		p.path = ""
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var off int64
	var hdr [2 * binary.MaxVarintLen64]byte
	err = records.Read(dir, func(r *engine.Record) error {
		if r.Status != engine.StatusOK {
			return nil
		}
		h := maphash.String(p.seed, r.Key)
		if _, found := slices.BinarySearch(asked, h); !found {
			return nil
		}
		n := binary.PutUvarint(hdr[:], uint64(len(r.Key)))
		n += binary.PutUvarint(hdr[n:], uint64(len(r.Response)))
		w.Write(hdr[:n])
		w.WriteString(r.Key)
		if _, err := w.WriteString(r.Response); err != nil {
			return fmt.Errorf("indexing the records of earlier stages: %w", err)
		}
		p.entries = append(p.entries, priorEntry{h, off})
		off += int64(n + len(r.Key) + len(r.Response))
		return nil
	})
	if err == nil {
		err = w.Flush()
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		p.Close()
		return nil, err
	}
	slices.SortFunc(p.entries, func(a, b priorEntry) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
	p.entries = slices.Clip(p.entries)
	return p, nil
}

// Lookup finds the last ok record of k.
func (p *priorIndex) Lookup(k engine.Key) (*engine.Record, bool) {
	if p == nil || len(p.entries) == 0 {
		return nil, false
	}
	key := k.String()
	h := maphash.String(p.seed, key)
	i, found := slices.BinarySearchFunc(p.entries, h, func(e priorEntry, h uint64) int { return cmp.Compare(e.h, h) })
	if !found {
		return nil, false
	}
	last := i
	for last+1 < len(p.entries) && p.entries[last+1].h == h {
		last++
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for e := last; e >= i; e-- {
		gotKey, resp, err := p.read(p.entries[e].off)
		if err != nil {
			if p.err == nil {
				p.err = fmt.Errorf("reading back the records of earlier stages: %w", err)
			}
			return nil, false
		}
		if string(gotKey) == key {
			return &engine.Record{Key: key, Fields: k, Status: engine.StatusOK, Response: string(resp)}, true
		}
	}
	return nil, false
}

// read returns the key and response stored at off (valid until the next read).
func (p *priorIndex) read(off int64) ([]byte, []byte, error) {
	if cap(p.buf) < 4096 {
		p.buf = make([]byte, 4096)
	}
	b := p.buf[:cap(p.buf)]
	n, err := p.f.ReadAt(b, off)
	if n == 0 && err != nil {
		return nil, nil, err
	}
	b = b[:n]
	kl, a := binary.Uvarint(b)
	rl, c := binary.Uvarint(b[max(a, 0):])
	if a <= 0 || c <= 0 {
		return nil, nil, fmt.Errorf("entry at %d: bad header", off)
	}
	hl := a + c
	total := hl + int(kl) + int(rl)
	if total > len(b) {
		p.buf = make([]byte, total)
		if _, err := p.f.ReadAt(p.buf, off); err != nil {
			return nil, nil, err
		}
		b = p.buf
	}
	return b[hl : hl+int(kl)], b[hl+int(kl) : total], nil
}

// Err is the first error a lookup met (a lookup that failed found nothing).
func (p *priorIndex) Err() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close releases the scratch file.
func (p *priorIndex) Close() {
	if p == nil || p.f == nil {
		return
	}
	p.f.Close()
	if p.path != "" {
		os.Remove(p.path)
	}
	p.f = nil
}
