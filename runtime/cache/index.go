package cache

import (
	"encoding/binary"
	"fmt"
)

// index finds the line of a key in the log without holding the keys.
//
// Each entry is 16 bytes: the key's first 8 bytes and the line's place,
// packed (offset: 40 bits, up to 1 TiB of log; length: 24 bits, or
// longLine for a line of 16 MiB or more, read up to its LF). The entries
// sit in insertion order in fixed chunks, found through an open-addressed
// table of uint32 entry numbers (linear probing on the prefix, a uniform
// hash since keys are SHA-256 digests, at most 3/4 full): 21 to 27 bytes
// a key in all, where a Go map of the whole keys took 55 to 110. Growing
// copies only the table.
//
// Two distinct keys share an 8-byte prefix with probability about
// n²/2⁶⁵ (10⁻⁶ at 6.4 million keys); they get one entry each, and the
// Store tells them apart by reading the whole key from the line (verify):
// a shared prefix costs a read, never a wrong answer.
type index struct {
	chunks []*indexChunk
	n      int
	slots  []uint32 // entry number + 1, 0 when empty; len a power of 2
}

const (
	idxChunkBits = 13
	idxChunkSize = 1 << idxChunkBits

	lenBits  = 24
	longLine = 1<<lenBits - 1 // the length field of a line of longLine bytes or more
	maxOff   = 1<<(64-lenBits) - 1
)

type indexChunk struct {
	prefix [idxChunkSize]uint64
	place  [idxChunkSize]uint64 // off<<lenBits | length
}

func prefixOf(key [32]byte) uint64 { return binary.BigEndian.Uint64(key[:8]) }

func pack(l loc) (uint64, error) {
	if l.off < 0 || l.off > maxOff {
		return 0, fmt.Errorf("cache: offset %d is past the index's 1 TiB", l.off)
	}
	n := uint64(min(int64(l.n), longLine))
	return uint64(l.off)<<lenBits | n, nil
}

func unpack(p uint64) loc { return loc{off: int64(p >> lenBits), n: int32(p & longLine)} }

func (x *index) at(i int) (*indexChunk, int) {
	return x.chunks[i>>idxChunkBits], i & (idxChunkSize - 1)
}

// candidates calls fn with the entry number and place of every entry of
// prefix p, in insertion order of the table's probe chain, until fn
// returns false.
func (x *index) candidates(p uint64, fn func(i int, l loc) bool) {
	if len(x.slots) == 0 {
		return
	}
	mask := len(x.slots) - 1
	for s := int(p) & mask; ; s = (s + 1) & mask {
		v := x.slots[s]
		if v == 0 {
			return
		}
		c, j := x.at(int(v - 1))
		if c.prefix[j] == p && !fn(int(v-1), unpack(c.place[j])) {
			return
		}
	}
}

// set moves entry i to l.
func (x *index) set(i int, l loc) error {
	pl, err := pack(l)
	if err != nil {
		return err
	}
	c, j := x.at(i)
	c.place[j] = pl
	return nil
}

// add appends an entry for p at l.
func (x *index) add(p uint64, l loc) error {
	pl, err := pack(l)
	if err != nil {
		return err
	}
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	if x.n>>idxChunkBits == len(x.chunks) {
		x.chunks = append(x.chunks, new(indexChunk))
	}
	c, j := x.at(x.n)
	c.prefix[j], c.place[j] = p, pl
	x.place(x.n)
	x.n++
	return nil
}

// place puts entry i in the table.
func (x *index) place(i int) {
	mask := len(x.slots) - 1
	c, j := x.at(i)
	s := int(c.prefix[j]) & mask
	for x.slots[s] != 0 {
		s = (s + 1) & mask
	}
	x.slots[s] = uint32(i + 1)
}

func (x *index) grow() {
	x.slots = make([]uint32, max(1024, 2*len(x.slots)))
	for i := range x.n {
		x.place(i)
	}
}

// each calls fn with every entry's place.
func (x *index) each(fn func(l loc)) {
	for i := range x.n {
		c, j := x.at(i)
		fn(unpack(c.place[j]))
	}
}
