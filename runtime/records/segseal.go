package records

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
)

// Segment seals.
//
// A segment whose every line carried a valid record_sha256 when it was
// compressed ends in a zstd skippable frame (RFC 8878 §3.1.2, which every
// zstd decoder skips: zstdcat, DuckDB, Python's zstandard) holding the
// SHA-256 of the file's bytes before it:
//
//	magic 0x184D2A5B (4 bytes, little-endian)  length 91 (4 bytes, little-endian)
//	"bhasha segment seal v1 sha256:" 64 hex digits "\n"   (91 bytes)
//
// A reader that finds the frame and the digest of the bytes before it
// equal knows every line of the segment is as sealed, and reads them
// without checking each line's seal (hashing the compressed file once
// costs a tenth of hashing every line). A segment without the frame, or
// whose digest differs (edited, recompressed, damaged), has each line's
// seal checked, as records.jsonl has: an edited line is named as before.
const (
	segSealMagic  = 0x184D2A5B
	segSealPrefix = "bhasha segment seal v1 sha256:"
	segSealBody   = len(segSealPrefix) + 64 + 1
	segSealFrame  = 8 + segSealBody
)

// segSealOf is the skippable frame sealing a segment whose bytes before it
// have digest sum.
func segSealOf(sum []byte) []byte {
	b := make([]byte, 8, segSealFrame)
	binary.LittleEndian.PutUint32(b[0:4], segSealMagic)
	binary.LittleEndian.PutUint32(b[4:8], uint32(segSealBody))
	b = append(b, segSealPrefix...)
	b = hex.AppendEncode(b, sum)
	return append(b, '\n')
}

// segmentSealed reports whether the segment fh (size bytes) ends in a
// segment seal whose digest is that of the bytes before it.
func segmentSealed(fh *os.File, size int64) (bool, error) {
	if size < int64(segSealFrame) {
		return false, nil
	}
	tail := make([]byte, segSealFrame)
	if _, err := fh.ReadAt(tail, size-int64(segSealFrame)); err != nil {
		return false, err
	}
	want, ok := sealDigest(tail)
	if !ok {
		return false, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(fh, 0, size-int64(segSealFrame))); err != nil {
		return false, err
	}
	return string(hex.AppendEncode(nil, h.Sum(nil))) == string(want), nil
}

// sealedBytes is segmentSealed of a segment read whole into seg.
func sealedBytes(seg []byte) bool {
	if len(seg) < segSealFrame {
		return false
	}
	body := len(seg) - segSealFrame
	want, ok := sealDigest(seg[body:])
	if !ok {
		return false
	}
	sum := sha256.Sum256(seg[:body])
	return string(hex.AppendEncode(nil, sum[:])) == string(want)
}

// sealDigest is the hex digest a segment seal frame holds; false when
// tail is no seal.
func sealDigest(tail []byte) ([]byte, bool) {
	if binary.LittleEndian.Uint32(tail[0:4]) != segSealMagic || binary.LittleEndian.Uint32(tail[4:8]) != uint32(segSealBody) ||
		!bytes.HasPrefix(tail[8:], []byte(segSealPrefix)) || tail[len(tail)-1] != '\n' {
		return nil, false
	}
	return tail[8+len(segSealPrefix) : len(tail)-1], true
}

// lineSeals checks the seal of each line written through it (the
// uncompressed bytes of a segment being made): allSealed is whether every
// line so far ended in a valid record_sha256.
type lineSeals struct {
	cut       lineCutter
	lines     int
	allSealed bool
}

func newLineSeals() *lineSeals { return &lineSeals{allSealed: true} }

func (s *lineSeals) Write(p []byte) (int, error) {
	s.cut.each(p, func(line []byte) {
		s.lines++
		if s.allSealed && checkSeal(line) != sealOK {
			s.allSealed = false
		}
	})
	return len(p), nil
}

// sealed is whether the segment may carry a seal: every line sealed, the
// last one whole.
func (s *lineSeals) sealed() bool { return s.allSealed && s.cut.whole() }

// lineCutter cuts the bytes written through a writer into lines (without
// their '\n'), holding a line cut across two writes until its end.
type lineCutter struct{ partial []byte }

// each calls fn with every line p ends, in order (the line is valid only
// until fn returns).
func (c *lineCutter) each(p []byte, fn func(line []byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.partial = append(c.partial, p...)
			return
		}
		line := p[:i]
		if len(c.partial) > 0 {
			c.partial = append(c.partial, line...)
			line = c.partial
		}
		fn(line)
		c.partial = c.partial[:0]
		p = p[i+1:]
	}
}

// whole is whether the last line written through it was ended.
func (c *lineCutter) whole() bool { return len(c.partial) == 0 }

// sealOf is the seal state of a line: sealOK in a verified segment, else
// its own seal's.
func sealOf(verified bool, line []byte) sealState {
	if verified {
		return sealOK
	}
	return checkSeal(line)
}
