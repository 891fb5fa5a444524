package records

import (
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
)

// KeySet is a set of record keys, each with the digest of the request it
// answered and the line of its record, held by two 64-bit hashes (not its
// text): two keys are taken for one with probability about n²/2¹²⁹.
type KeySet struct {
	seed1, seed2 maphash.Seed
	m            map[[2]uint64]keyEntry
}

// keyEntry is what a KeySet holds of one key.
type keyEntry struct {
	digest  uint64 // request digest prefix (0: not recorded)
	resp    uint64 // hash of the response (seed1), for ScanDir
	line    uint32 // 1-based line of the record in the scanned files (0: not from a file)
	visited bool   // Visit was called: the experiment asks this key
}

// NewKeySet returns an empty set.
func NewKeySet() *KeySet {
	return &KeySet{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), m: map[[2]uint64]keyEntry{}}
}

func (s *KeySet) h(k string) [2]uint64 {
	return [2]uint64{maphash.String(s.seed1, k), maphash.String(s.seed2, k)}
}

// Add inserts k and reports whether it was new.
func (s *KeySet) Add(k string) bool {
	_, ok := s.addLine(k, "", 0, 0)
	return ok
}

// addLine inserts k as recorded on line with the given response hash, and
// reports whether it was new; when it was not, the entry already there.
func (s *KeySet) addLine(k, digest string, resp uint64, line int) (keyEntry, bool) {
	h := s.h(k)
	if e, ok := s.m[h]; ok {
		return e, false
	}
	s.m[h] = keyEntry{digest: digestPrefix(digest), resp: resp, line: uint32(line)}
	return keyEntry{}, true
}

// lineOf is the line k was first recorded on (0 when unknown or absent).
func (s *KeySet) lineOf(k string) int { return int(s.m[s.h(k)].line) }

// Has reports whether k is in the set.
func (s *KeySet) Has(k string) bool {
	_, ok := s.m[s.h(k)]
	return ok
}

// Changed reports whether k is in the set with a recorded request digest
// that differs from digest (a record without a digest never differs).
func (s *KeySet) Changed(k, digest string) bool {
	e := s.m[s.h(k)]
	return e.digest != 0 && e.digest != digestPrefix(digest)
}

// Remove deletes k.
func (s *KeySet) Remove(k string) { delete(s.m, s.h(k)) }

// Visit marks k, when present, as one the experiment asks.
func (s *KeySet) Visit(k string) {
	h := s.h(k)
	if e, ok := s.m[h]; ok {
		e.visited = true
		s.m[h] = e
	}
}

// Unvisited lists the lines (1-based, sorted) of the keys never visited:
// records of requests the experiment does not ask.
func (s *KeySet) Unvisited() []int {
	var out []int
	for e := range maps.Values(s.m) {
		if !e.visited {
			out = append(out, int(e.line))
		}
	}
	slices.Sort(out)
	return out
}

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
