package cache

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
)

// A frag is what the index holds of a key: its first 16 bytes, as two
// big-endian words, so that frags order as the keys' bytes do.
//
// Two distinct keys share a frag with probability about n²/2¹²⁹ (10⁻²³
// at 10⁸ keys); if they ever did, the later would take the earlier's
// entry, and the Store, which reads the whole key from the line
// (keyAt), would answer the earlier as a miss: a request sent again,
// never a wrong answer.
type frag struct{ hi, lo uint64 }

func fragOf(key [32]byte) frag {
	return frag{binary.BigEndian.Uint64(key[:8]), binary.BigEndian.Uint64(key[8:16])}
}

func (a frag) cmp(b frag) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

// A place is where a line sits in the log, packed: offset in the high 40
// bits (up to 1 TiB of log), length LF included in the low 24 (longLine
// for a line of 16 MiB or more, read up to its LF).
type place uint64

const (
	lenBits  = 24
	longLine = 1<<lenBits - 1
	maxOff   = 1<<(64-lenBits) - 1
)

func pack(l loc) (place, error) {
	if l.off < 0 || l.off > maxOff {
		return 0, fmt.Errorf("cache: offset %d is past the index's 1 TiB", l.off)
	}
	return place(uint64(l.off)<<lenBits | uint64(min(int64(l.n), longLine))), nil
}

func (p place) loc() loc { return loc{off: int64(p >> lenBits), n: int32(p & longLine)} }

// memIndex is the part of the index in memory: the entries of the lines
// the disk table (diskIndex) does not cover yet, at most memMax of them
// before the Store merges them into it. Each entry is 24 bytes (frag and
// place) in insertion order in fixed chunks, found through an
// open-addressed table of uint32 entry numbers (linear probing on the
// frag's high word, a uniform hash since keys are SHA-256 digests, at
// most 3/4 full, doubled when it is): 29 to 35 bytes an entry in all.
type memIndex struct {
	chunks []*memChunk
	n      int
	slots  []uint32 // entry number + 1, 0 when empty; len a power of 2
}

const (
	memChunkBits = 13
	memChunkSize = 1 << memChunkBits
)

type memChunk struct {
	frag  [memChunkSize]frag
	place [memChunkSize]place
}

func (x *memIndex) at(i int) (*memChunk, int) {
	return x.chunks[i>>memChunkBits], i & (memChunkSize - 1)
}

// find returns the entry number of f, or -1.
func (x *memIndex) find(f frag) int {
	if len(x.slots) == 0 {
		return -1
	}
	mask := len(x.slots) - 1
	for s := int(f.hi) & mask; ; s = (s + 1) & mask {
		v := x.slots[s]
		if v == 0 {
			return -1
		}
		if c, j := x.at(int(v - 1)); c.frag[j] == f {
			return int(v - 1)
		}
	}
}

// get returns f's place.
func (x *memIndex) get(f frag) (place, bool) {
	i := x.find(f)
	if i < 0 {
		return 0, false
	}
	c, j := x.at(i)
	return c.place[j], true
}

// put points f at p: the entry of f moves there, or a new one is added.
func (x *memIndex) put(f frag, p place) {
	if i := x.find(f); i >= 0 {
		c, j := x.at(i)
		c.place[j] = p
		return
	}
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	if x.n>>memChunkBits == len(x.chunks) {
		x.chunks = append(x.chunks, new(memChunk))
	}
	c, j := x.at(x.n)
	c.frag[j], c.place[j] = f, p
	x.slot(x.n)
	x.n++
}

// slot puts entry i in the table.
func (x *memIndex) slot(i int) {
	mask := len(x.slots) - 1
	c, j := x.at(i)
	s := int(c.frag[j].hi) & mask
	for x.slots[s] != 0 {
		s = (s + 1) & mask
	}
	x.slots[s] = uint32(i + 1)
}

func (x *memIndex) grow() {
	x.slots = make([]uint32, max(1024, 2*len(x.slots)))
	for i := range x.n {
		x.slot(i)
	}
}

// sorted returns the entry numbers in the order of their frags.
func (x *memIndex) sorted() []uint32 {
	order := make([]uint32, x.n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		ca, ja := x.at(int(a))
		cb, jb := x.at(int(b))
		return ca.frag[ja].cmp(cb.frag[jb])
	})
	return order
}

// entry returns entry i.
func (x *memIndex) entry(i int) (frag, place) {
	c, j := x.at(i)
	return c.frag[j], c.place[j]
}

// reset empties the index, keeping its first chunk.
func (x *memIndex) reset() {
	if len(x.chunks) > 0 {
		x.chunks = x.chunks[:1]
	}
	x.n, x.slots = 0, nil
}
