package records

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/klauspost/compress/zstd"
)

// Damaged segments.
//
// A segment whose segment seal does not hold and some of whose zstd
// frames do not decode (a flipped byte on disk, a bad sector) is damaged.
// It is not refused: open gives what can be read of it, and what was lost
// is named (Damage), so that a report scores the rest and a run asks
// again only the lost requests.
//
// What can be read: every frame that decodes whole (its content checksum
// holds) gives its lines; a frame that does not gives the whole lines its
// blocks decode to before the damage, each kept only when its
// record_sha256 holds (a line that does not verify is dropped and counted
// lost, never read as an answer); bytes that are no frame (a damaged
// frame header) are passed over to the next frame. A line that does not
// parse as JSON is dropped and counted lost as well.
//
// When the segment's lean copy (lean.go) is whole by its own digest and
// names the digest the segment's seal holds (or the seal itself is what
// was damaged), it is the record of what the segment held: the lost
// records are named exactly (their lines and keys), and a reader that
// does not want the request bodies (the scoring) reads every record from
// it instead, losing none.
//
// A run (Scan.Commit, under the exclusive lock) keeps the damaged file
// and its lean copy in DIR/archive/ and replaces the segment by one of the
// records that could be read: the lost ones are then asked again.

// Damage is what could not be read of a damaged segment.
type Damage struct {
	File      string // the segment's name (records-000001.jsonl.zst)
	Kept      int    // records read from the segment itself
	Lost      int    // records lost from the segment, when LostKnown (its lean copy counts them)
	LostKnown bool
	Dropped   int      // lines of damaged frames left out because their seal or JSON does not hold (counted in Lost when known)
	Gaps      []string // the regions of the file that could not be read, each with the records around it
	LostAt    []string // when LostKnown, the first few lost records: "line N (key K)"
	Lean      string   // the lean copy every record was read from ("" when the segment's own lines were read)
	LeanN     int      // records the lean copy holds
	path      string
	leanData  []leanFrame
}

// String says which file is damaged and what was lost.
func (d Damage) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is damaged (its seal does not hold and part of it does not decompress)", d.File)
	if d.Lean != "" {
		fmt.Fprintf(&b, ": its %d records were read from its intact lean copy %s, which holds every answer (not the request bodies); of the segment itself %d record(s) can be read", d.LeanN, d.Lean, d.Kept)
	} else {
		fmt.Fprintf(&b, ": %d record(s) were read from it", d.Kept)
	}
	switch {
	case d.LostKnown && d.Lost == 0:
	case d.LostKnown:
		fmt.Fprintf(&b, ", %d record(s) are lost: %s", d.Lost, strings.Join(d.LostAt, ", "))
		if d.Lost > len(d.LostAt) {
			fmt.Fprintf(&b, " and %d more", d.Lost-len(d.LostAt))
		}
	default:
		fmt.Fprintf(&b, ", an unknown number of records are lost (%d line(s) that did not verify, and %s)", d.Dropped, strings.Join(d.Gaps, "; "))
	}
	if d.Lean == "" && !(d.LostKnown && d.Lost == 0) {
		b.WriteString("; the lost records are left out of every table")
	}
	b.WriteString("; running the experiment into the directory again keeps the records that can be read, asks again only the lost ones, and keeps the damaged file in " + ArchiveDir + "/")
	return b.String()
}

// maxLostNamed is how many lost records a Damage names.
const maxLostNamed = 5

// salvage reads what can be read of the segment at path, whose bytes
// (read whole) are seg and whose seal does not hold: the whole lines that
// can be read, each ending in a newline, and what was lost; a nil Damage
// when every frame decodes (the segment is whole: unsealed, or edited,
// and read as it is).
func salvage(path string, seg []byte) ([]byte, *Damage, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<34))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer dec.Close()
	type piece struct {
		from, to int
		data     []byte // what it decodes to (a damaged one: the part before the damage)
		bad      bool
	}
	var pieces []piece
	damaged := false
	for _, p := range splitFrames(seg) {
		if p.bad && p.to == len(seg) && p.to-p.from == segSealFrame && len(pieces) > 0 {
			continue // the segment seal, damaged: it holds no record
		}
		pc := piece{from: p.from, to: p.to, bad: p.bad}
		if !p.bad {
			if pc.data, err = dec.DecodeAll(seg[p.from:p.to], nil); err != nil {
				pc.bad = true
			}
		}
		if pc.bad {
			damaged = true
			pc.data = decodePrefix(seg[p.from:p.to])
		}
		pieces = append(pieces, pc)
	}
	if !damaged {
		return nil, nil, nil
	}
	dm := &Damage{File: filepath.Base(path), path: path}
	var out []byte
	var keys []string // of the lines kept, in order
	keep := func(line []byte) {
		var k struct{ Key string }
		if json.Unmarshal(line, &k) != nil {
			dm.Dropped++
			return
		}
		out = append(append(out, line...), '\n')
		keys = append(keys, k.Key)
	}
	type gap struct{ from, to, after int }
	var gaps []gap
	var carry []byte // a line begun in a whole frame, ended in the next
	for _, pc := range pieces {
		data := pc.data
		if pc.bad {
			if len(carry) > 0 {
				dm.Dropped++
			}
			carry = nil
			gaps = append(gaps, gap{pc.from, pc.to, len(keys)})
		} else if len(carry) > 0 {
			data = append(carry, data...)
			carry = nil
		}
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := bytes.TrimSuffix(data[:i], []byte("\r"))
			data = data[i+1:]
			if pc.bad && checkSeal(line) != sealOK {
				dm.Dropped++
				continue
			}
			keep(line)
		}
		if len(data) > 0 && !pc.bad {
			carry = bytes.Clone(data)
		}
	}
	if len(carry) > 0 { // the segment's last line, without its newline
		keep(carry)
	}
	dm.Kept = len(keys)
	for _, g := range gaps {
		s := fmt.Sprintf("bytes %d–%d of the file", g.from, g.to)
		if g.after > 0 {
			s += fmt.Sprintf(", after its line %d (key %s)", g.after, keys[g.after-1])
		}
		if g.after < len(keys) {
			s += fmt.Sprintf(", before key %s", keys[g.after])
		}
		dm.Gaps = append(dm.Gaps, s)
	}
	if frames := damagedLean(path, seg); frames != nil {
		dm.leanKeys(frames, keys)
	}
	return out, dm, nil
}

// leanKeys names, from the lean copy's frames (every record the segment
// held, in order), the records not among kept (the keys read from the
// segment, in order).
func (dm *Damage) leanKeys(frames []leanFrame, kept []string) {
	var li leanInflater
	defer li.close()
	have := map[string]int{}
	for _, k := range kept {
		have[k]++
	}
	var r engine.Record
	line := 0
	for _, fr := range frames {
		content, err := li.inflate(fr.data)
		if err != nil {
			return
		}
		l := leanReader{b: content, in: &li.in}
		for range fr.records {
			if l.record(false, &r) != nil {
				return
			}
			line++
			if have[r.Key] > 0 {
				have[r.Key]--
				continue
			}
			dm.Lost++
			if len(dm.LostAt) < maxLostNamed {
				dm.LostAt = append(dm.LostAt, fmt.Sprintf("line %d (key %s)", line, r.Key))
			}
		}
	}
	dm.LostKnown = true
	dm.LeanN = line
	dm.leanData = frames
}

// damagedLean is the lean copy of the damaged segment at path (bytes
// seg) when it is whole by its own digest and names the segment's seal
// digest (any, when the seal cannot be read); nil otherwise.
func damagedLean(path string, seg []byte) []leanFrame {
	b, err := os.ReadFile(leanName(path))
	if err != nil || len(b) < leanHead {
		return nil
	}
	want := b[len(leanMagic) : len(leanMagic)+64]
	if len(seg) >= segSealFrame {
		if d, ok := sealDigest(seg[len(seg)-segSealFrame:]); ok {
			want = d
		}
	}
	if _, err := hex.DecodeString(string(want)); err != nil {
		return nil
	}
	return parseLean(b, want)
}

// framePiece is a span of a segment's bytes: a zstd frame, or bytes that
// are none (bad: a damaged frame header, or what follows it up to the
// next frame).
type framePiece struct {
	from, to int
	bad      bool
}

// splitFrames splits a segment's bytes into its zstd frames (skippable
// frames left out) and the damaged spans between them: a span that is no
// frame (its header damaged) runs to the next zstd or skippable magic
// number. A frame whose blocks were damaged is found by decoding it.
func splitFrames(seg []byte) []framePiece {
	var out []framePiece
	boundary := func(at int) bool {
		if at == len(seg) {
			return true
		}
		if len(seg)-at < 4 {
			return false
		}
		m := binary.LittleEndian.Uint32(seg[at:])
		return m == zstdMagic || m&0xFFFFFFF0 == 0x184D2A50
	}
	next := func(at int) int { // the next magic number after at
		for i := at + 1; i+4 <= len(seg); i++ {
			if boundary(i) {
				return i
			}
		}
		return len(seg)
	}
	for at := 0; at < len(seg); {
		if len(seg)-at >= 8 {
			m := binary.LittleEndian.Uint32(seg[at:])
			if m&0xFFFFFFF0 == 0x184D2A50 {
				n := int(binary.LittleEndian.Uint32(seg[at+4:]))
				if n <= len(seg)-at-8 && boundary(at+8+n) {
					at += 8 + n
					continue
				}
			} else if m == zstdMagic {
				if n, _, err := frameExtent(seg[at:]); err == nil {
					out = append(out, framePiece{at, at + n, false})
					at += n
					continue
				}
			}
		}
		end := next(at)
		out = append(out, framePiece{at, end, true})
		at = end
	}
	return out
}

// decodePrefix is what the damaged frame b decodes to before the damage.
func decodePrefix(b []byte) []byte {
	zr, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<34))
	if err != nil {
		return nil
	}
	defer zr.Close()
	var out bytes.Buffer
	io.Copy(&out, zr) // the error is the damage: what came before it is kept
	return out.Bytes()
}

// keepDamaged keeps the damaged segment f and its lean copy in dir's
// archive (a hard link, else a copy) before f is replaced, and returns
// the path it is kept at.
func keepDamaged(f recordFile) (string, error) {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(filepath.Join(dir, ArchiveDir), 0o755); err != nil {
		return "", fmt.Errorf("keeping the damaged %s: %w", f.path, err)
	}
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	var kept string
	for i, p := range []string{f.path, leanName(f.path)} {
		dst := filepath.Join(dir, ArchiveDir, "damaged-"+stamp+"-"+filepath.Base(p))
		if err := os.Link(p, dst); err != nil {
			if errors.Is(err, os.ErrNotExist) && i > 0 {
				continue // no lean copy
			}
			b, rerr := os.ReadFile(p)
			if rerr != nil {
				if errors.Is(rerr, os.ErrNotExist) && i > 0 {
					continue
				}
				return "", fmt.Errorf("keeping the damaged %s: %w", p, rerr)
			}
			if err := atomicfile.WriteFile(dst, b); err != nil {
				return "", fmt.Errorf("keeping the damaged %s: %w", p, err)
			}
		}
		if i == 0 {
			kept = dst
		}
	}
	if err := syncDir(filepath.Join(dir, ArchiveDir)); err != nil {
		return "", fmt.Errorf("keeping the damaged %s: %w", f.path, err)
	}
	return kept, nil
}
