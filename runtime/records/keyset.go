package records

import (
	"hash/maphash"
	"slices"
	"strconv"
)

// KeySet is a set of record keys, each with the digest of the request it
// answered, held as 128-bit key hashes with a 64-bit digest prefix, a
// 64-bit response hash and the line of its record. It is used instead of
// a Go map because it holds a key in less than half the heap a map of the
// same entries does (BenchmarkKeySet), which keeps a resume of the
// papers' grid within a run's memory bound.
//
// Layout: the entries sit in insertion order in fixed chunks of
// chunkSize, as columns (hash, digest, response hash, line and flags: 36
// bytes an entry), found through an open-addressed table of uint32 entry
// numbers (linear probing on the key hash, at most 3/4 full): 36 bytes
// plus 5.3 to 10.7 bytes of table a key. Growing copies only the
// table, never the entries. A removed key stays in its chunk, marked
// removed (Add brings it back in place), so Len counts the live keys.
// The response hashes serve only ScanDir, which tells identical duplicate
// records from conflicting ones with them: it drops them once the file is
// read (8 bytes a key less; a key added later has none).
//
// The line is 30 bits wide (a record past line 2³⁰, a file of terabytes,
// would be listed under a wrong line by Unvisited and Commit).
//
// Two distinct keys share both 64-bit hashes (two independent maphash
// seeds) with probability about n²/2¹²⁹: 6·10⁻²⁶ at 6.4 million keys.
type KeySet struct {
	seed1, seed2 maphash.Seed
	chunks       []*keyChunk
	resps        []*[chunkSize]uint64 // the response hashes, by chunk (nil once dropped)
	noResps      bool                 // dropResponses was called
	n            int                  // entries, removed ones included
	live         int                  // entries not removed
	slots        []uint32             // entry number + 1, 0 when empty; len a power of 2
}

// keyEntry is what a KeySet holds of one key.
type keyEntry struct {
	digest  uint64 // request digest prefix (0: not recorded)
	resp    uint64 // hash of the response (seed1)
	line    uint32 // 1-based line of the record in the scanned file (0: not from a file)
	visited bool   // Visit was called: the experiment asks this key
}

const (
	chunkBits = 13
	chunkSize = 1 << chunkBits

	// flags in the top bits of a meta word; the line is the rest
	flagVisited = 1 << 31
	flagRemoved = 1 << 30
	lineMask    = flagRemoved - 1
)

// keyChunk holds chunkSize entries as columns.
type keyChunk struct {
	h      [chunkSize][2]uint64
	digest [chunkSize]uint64
	meta   [chunkSize]uint32 // line | flags
}

// resp is entry i's response hash (0 once dropped).
func (s *KeySet) resp(i int) uint64 {
	if s.resps == nil {
		return 0
	}
	return s.resps[i>>chunkBits][i&(chunkSize-1)]
}

func (s *KeySet) setResp(i int, r uint64) {
	if s.resps != nil {
		s.resps[i>>chunkBits][i&(chunkSize-1)] = r
	}
}

// dropResponses frees the response hashes (ScanDir, once the file is read).
func (s *KeySet) dropResponses() { s.resps, s.noResps = nil, true }

// NewKeySet returns an empty set.
func NewKeySet() *KeySet {
	return &KeySet{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed()}
}

func (s *KeySet) h(k string) [2]uint64 {
	return [2]uint64{maphash.String(s.seed1, k), maphash.String(s.seed2, k)}
}

// at returns the chunk and position of entry i.
func (s *KeySet) at(i int) (*keyChunk, int) { return s.chunks[i>>chunkBits], i & (chunkSize - 1) }

// find returns the entry number of hash h (removed or not) and true, or
// the empty slot where it would go and false.
func (s *KeySet) find(h [2]uint64) (int, bool) {
	if len(s.slots) == 0 {
		return -1, false
	}
	mask := len(s.slots) - 1
	for p := int(h[0]) & mask; ; p = (p + 1) & mask {
		v := s.slots[p]
		if v == 0 {
			return p, false
		}
		c, j := s.at(int(v - 1))
		if c.h[j] == h {
			return int(v - 1), true
		}
	}
}

// entry is the live entry of k, or -1.
func (s *KeySet) entry(k string) int {
	i, ok := s.find(s.h(k))
	if !ok {
		return -1
	}
	if c, j := s.at(i); c.meta[j]&flagRemoved != 0 {
		return -1
	}
	return i
}

// grow doubles the table (or makes the first one) and places every entry
// again.
func (s *KeySet) grow() {
	size := max(1024, 2*len(s.slots))
	s.slots = make([]uint32, size)
	mask := size - 1
	for i := range s.n {
		c, j := s.at(i)
		p := int(c.h[j][0]) & mask
		for s.slots[p] != 0 {
			p = (p + 1) & mask
		}
		s.slots[p] = uint32(i + 1)
	}
}

// Add inserts k and reports whether it was new.
func (s *KeySet) Add(k string) bool { return s.AddRequest(k, "") }

// AddRequest inserts k answered by the request whose digest (hex SHA-256,
// engine.RequestDigest) is given ("" when the record does not say), and
// reports whether k was new.
func (s *KeySet) AddRequest(k, digest string) bool {
	_, ok := s.addLine(k, digest, 0, 0)
	return ok
}

// addLine inserts k as recorded on line with the given response hash, and
// reports whether it was new; when it was not, the entry already there.
func (s *KeySet) addLine(k, digest string, resp uint64, line int) (keyEntry, bool) {
	h := s.h(k)
	i, found := s.find(h)
	if found {
		c, j := s.at(i)
		if c.meta[j]&flagRemoved == 0 {
			return keyEntry{digest: c.digest[j], resp: s.resp(i), line: c.meta[j] & lineMask, visited: c.meta[j]&flagVisited != 0}, false
		}
		c.digest[j], c.meta[j] = digestPrefix(digest), uint32(line)&lineMask
		s.setResp(i, resp)
		s.live++
		return keyEntry{}, true
	}
	if (s.n+1)*4 > len(s.slots)*3 {
		s.grow()
		i, _ = s.find(h)
	}
	n := s.n
	if n>>chunkBits == len(s.chunks) {
		s.chunks = append(s.chunks, new(keyChunk))
		if !s.noResps {
			s.resps = append(s.resps, new([chunkSize]uint64))
		}
	}
	c, j := s.at(n)
	c.h[j], c.digest[j], c.meta[j] = h, digestPrefix(digest), uint32(line)&lineMask
	s.setResp(n, resp)
	s.slots[i] = uint32(n + 1)
	s.n++
	s.live++
	return keyEntry{}, true
}

// lineOf is the line k was first recorded on (0 when unknown or absent).
func (s *KeySet) lineOf(k string) int {
	i := s.entry(k)
	if i < 0 {
		return 0
	}
	c, j := s.at(i)
	return int(c.meta[j] & lineMask)
}

// Has reports whether k is in the set.
func (s *KeySet) Has(k string) bool { return s.entry(k) >= 0 }

// Changed reports whether k is in the set with a recorded request digest
// that differs from digest (a record without a digest never differs).
func (s *KeySet) Changed(k, digest string) bool {
	i := s.entry(k)
	if i < 0 {
		return false
	}
	c, j := s.at(i)
	return c.digest[j] != 0 && c.digest[j] != digestPrefix(digest)
}

// Remove deletes k.
func (s *KeySet) Remove(k string) {
	if i := s.entry(k); i >= 0 {
		c, j := s.at(i)
		c.meta[j] = flagRemoved
		s.live--
	}
}

// Visit marks k, when present, as one the experiment asks.
func (s *KeySet) Visit(k string) {
	if i := s.entry(k); i >= 0 {
		c, j := s.at(i)
		c.meta[j] |= flagVisited
	}
}

// Unvisited lists the lines (1-based, sorted) of the keys never visited:
// records of requests the experiment does not ask.
func (s *KeySet) Unvisited() []int {
	var out []int
	for i := range s.n {
		c, j := s.at(i)
		if c.meta[j]&(flagVisited|flagRemoved) == 0 {
			out = append(out, int(c.meta[j]&lineMask))
		}
	}
	slices.Sort(out)
	return out
}

// Len is the number of keys.
func (s *KeySet) Len() int { return s.live }

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
