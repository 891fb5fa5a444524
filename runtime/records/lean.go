package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// Lean copies.
//
// A sealed segment (one whose segment seal holds, segseal.go) may have
// beside it its lean copy, records-N.lean: every record of the segment,
// in line order, without its request body, in a binary encoding read
// without parsing JSON. Unique and Each (the scoring pass), when not
// asked for the request bodies, read a segment's lean copy instead of
// decompressing and parsing its lines: the request bodies are half to two
// thirds of a record's bytes, and every one of them would be decompressed
// to reach the answer beside it. Every other reader, and every tool of
// the field, reads the segment; the lean copy is derived, never the
// record of what was sent.
//
// File grammar (integers are unsigned LEB128 varints unless said):
//
//	"bhasha lean v1\n"
//	64 hex digits "\n"     the segment's digest, as its segment seal holds it
//	16 hex digits "\n"     the XXH64 of the segment's bytes before its seal
//	frames, each:          records (the frame's record count, at least 1),
//	                       length (its compressed bytes), then a zstd frame
//	                       whose content is that many records (leanRecord)
//	0                      the end of the frames
//	records                the total, the sum of the frames'
//	8 bytes                XXH64 of every byte before them, little-endian
//
// A lean copy is read only when its own digest holds and it names the
// segment beside it: the digest its seal holds, and the XXH64 of its bytes
// before the seal, which the reader computes (10–14 GB/s here, where
// SHA-256 hashes 1.8: the lean copy stands for the segment's seal, made
// when the seal was checked). A lean copy that is damaged, stale (its segment rewritten
// or edited since) or alone is passed over, and the segment read, with
// the same result.
//
// Made by whoever compresses a segment (every sealed segment is made by
// replaceFile): the lines are decoded on their way into the encoder, as
// the reader would decode them, and the lean copy is written, through a
// synced temporary file and a rename, after the segment has its name; a
// segment rewritten has its old lean copy removed first. A segment any of
// whose lines does not decode, or that is not sealed, gets none; nor does
// one whose lean copy cannot be written (a full disk: the segment stays
// as it is, and is read the slow way). MakeLean makes the lean copies an
// older run's segments lack.
const (
	leanSuffix     = ".lean"
	leanMagic      = "bhasha lean v1\n"
	leanFrameBytes = 512 << 10 // encoded records per frame, about
	leanHead       = len(leanMagic) + 65 + 17
)

// leanName is the lean copy's path of the segment at segPath
// (records-000001.jsonl.zst: records-000001.lean).
func leanName(segPath string) string {
	return strings.TrimSuffix(segPath, segZst) + leanSuffix
}

// leanFlag bits of a record's flags byte.
const (
	leanCached = 1 << iota
	leanEmptyResponse
	leanSimulated
	leanIdentity
	leanExtracted
)

// appendLean appends r (its request body left out) in the lean encoding:
//
//	key, then fields: experiment, model, item, language, form, strategy,
//	condition, role (its text form)           strings
//	kind, served_model, status, error, response, reasoning, finish_reason
//	prompt_tokens, completion_tokens          signed varints
//	latency_ms                                8 bytes, IEEE 754, little-endian
//	attempts                                  signed varint
//	endpoint, cache_key                       strings
//	logprobs, prompt_logprobs                 raw JSON
//	refusal                                   string
//	tool_calls                                raw JSON
//	request_sha256                            string
//	flags                                     1 byte (leanCached ...)
//	identity: id, root, revision              strings, when leanIdentity
//	extracted                                 raw JSON, when leanExtracted
//
// A string is its length and bytes; raw JSON is its length plus one and
// bytes, 0 standing for none (nil).
func appendLean(b []byte, r *engine.Record) ([]byte, error) {
	s := func(v string) {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	rawj := func(v []byte) {
		if v == nil {
			b = append(b, 0)
			return
		}
		b = binary.AppendUvarint(b, uint64(len(v))+1)
		b = append(b, v...)
	}
	k := &r.Fields
	for _, v := range [...]string{r.Key, k.Experiment, k.Model, k.Item, k.Language, k.Form, k.Strategy, k.Condition, k.Role.String(),
		string(r.Kind), r.ServedModel, r.Status, r.Error, r.Response, r.Reasoning, r.FinishReason} {
		s(v)
	}
	b = binary.AppendVarint(b, int64(r.PromptTokens))
	b = binary.AppendVarint(b, int64(r.CompletionTokens))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.LatencyMS))
	b = binary.AppendVarint(b, int64(r.Attempts))
	s(r.Endpoint)
	s(r.CacheKey)
	rawj(r.Logprobs)
	rawj(r.PromptLogprobs)
	s(r.Refusal)
	rawj(r.ToolCalls)
	s(r.RequestSHA256)
	var flags byte
	if r.Cached {
		flags |= leanCached
	}
	if r.EmptyResponse {
		flags |= leanEmptyResponse
	}
	if r.Simulated {
		flags |= leanSimulated
	}
	if r.Identity != nil {
		flags |= leanIdentity
	}
	var ex []byte
	if r.Extracted != nil {
		flags |= leanExtracted
		var err error
		if ex, err = json.Marshal(r.Extracted); err != nil {
			return b, err
		}
	}
	b = append(b, flags)
	if r.Identity != nil {
		s(r.Identity.ID)
		s(r.Identity.Root)
		s(r.Identity.Revision)
	}
	if ex != nil {
		rawj(ex)
	}
	return b, nil
}

var errLean = errors.New("malformed lean record")

// leanReader reads lean records from b.
type leanReader struct {
	b   []byte
	err error
	in  *interner
	// skipDigests leaves cache_key and request_sha256 empty
	// (StreamOptions.SkipDigests).
	skipDigests bool
}

func (l *leanReader) uvarint() uint64 {
	v, n := binary.Uvarint(l.b)
	if n <= 0 {
		l.fail()
		return 0
	}
	l.b = l.b[n:]
	return v
}

func (l *leanReader) varint() int {
	v, n := binary.Varint(l.b)
	if n <= 0 {
		l.fail()
		return 0
	}
	l.b = l.b[n:]
	return int(v)
}

func (l *leanReader) fail() {
	if l.err == nil {
		l.err = errLean
	}
	l.b = nil
}

func (l *leanReader) bytes(n uint64) []byte {
	if n > uint64(len(l.b)) {
		l.fail()
		return nil
	}
	v := l.b[:n]
	l.b = l.b[n:]
	return v
}

// str is a string; shared (interned) when share.
func (l *leanReader) str(share bool) string {
	v := l.bytes(l.uvarint())
	if len(v) == 0 {
		return ""
	}
	if share {
		return l.in.of(v)
	}
	return string(v)
}

// digest is a string, or "" read past with skipDigests.
func (l *leanReader) digest() string {
	if l.skipDigests {
		l.bytes(l.uvarint())
		return ""
	}
	return l.str(false)
}

func (l *leanReader) raw() json.RawMessage {
	n := l.uvarint()
	if n == 0 {
		return nil
	}
	return raw(l.bytes(n - 1))
}

// record decodes the next record into r (reset first); the extracted
// result only when withExtracted.
func (l *leanReader) record(withExtracted bool, r *engine.Record) error {
	*r = engine.Record{}
	r.Key = l.str(false)
	k := &r.Fields
	k.Experiment, k.Model, k.Item = l.str(true), l.str(true), l.str(false)
	k.Language, k.Form, k.Strategy, k.Condition = l.str(true), l.str(true), l.str(true), l.str(true)
	if role := l.str(true); role != "" {
		if err := k.Role.UnmarshalText([]byte(role)); err != nil {
			l.fail()
		}
	}
	r.Kind = engine.Kind(l.str(true))
	r.ServedModel, r.Status, r.Error = l.str(true), l.str(true), l.str(false)
	r.Response, r.Reasoning, r.FinishReason = l.str(false), l.str(false), l.str(true)
	r.PromptTokens, r.CompletionTokens = l.varint(), l.varint()
	if lat := l.bytes(8); lat != nil {
		r.LatencyMS = math.Float64frombits(binary.LittleEndian.Uint64(lat))
	}
	r.Attempts = l.varint()
	r.Endpoint, r.CacheKey = l.str(true), l.digest()
	r.Logprobs, r.PromptLogprobs = l.raw(), l.raw()
	r.Refusal = l.str(false)
	r.ToolCalls = l.raw()
	r.RequestSHA256 = l.digest()
	var flags byte
	if f := l.bytes(1); f != nil {
		flags = f[0]
	}
	r.Cached, r.EmptyResponse, r.Simulated = flags&leanCached != 0, flags&leanEmptyResponse != 0, flags&leanSimulated != 0
	if flags&leanIdentity != 0 {
		r.Identity = &engine.Identity{ID: l.str(true), Root: l.str(true), Revision: l.str(true)}
	}
	if flags&leanExtracted != 0 {
		n := l.uvarint()
		if n == 0 {
			l.fail()
		}
		ex := l.bytes(n - 1)
		if withExtracted && l.err == nil {
			if err := json.Unmarshal(ex, &r.Extracted); err != nil {
				l.fail()
			}
		}
	}
	return l.err
}

// leanBuilder makes a segment's lean copy from the segment's lines as
// they are written through it (replaceFile). It gives up, making none,
// at a line that does not decode.
type leanBuilder struct {
	cut     lineCutter
	frame   []byte // encoded records of the frame being filled
	count   int    // records in frame
	total   int
	out     []byte // the frames so far, each with its count and length
	enc     *zstd.Encoder
	in      *interner
	r       engine.Record
	scratch []byte
	failed  bool
}

func newLeanBuilder() (*leanBuilder, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(true))
	if err != nil {
		return nil, err
	}
	return &leanBuilder{enc: enc, in: new(interner)}, nil
}

func (lb *leanBuilder) Write(p []byte) (int, error) {
	if !lb.failed {
		lb.cut.each(p, func(line []byte) {
			if !lb.failed {
				lb.add(bytes.TrimSuffix(line, []byte("\r")))
			}
		})
	}
	return len(p), nil
}

// add decodes one line as a reader of a sealed segment does (decodeLine)
// and appends its record.
func (lb *leanBuilder) add(line []byte) {
	var err error
	if lb.scratch, err = decodeLine(line, sealOK, StreamOptions{}, lb.in, lb.scratch, &lb.r); err != nil {
		lb.failed = true
		return
	}
	if lb.frame, err = appendLean(lb.frame, &lb.r); err != nil {
		lb.failed = true
		return
	}
	lb.count++
	if len(lb.frame) >= leanFrameBytes {
		lb.flush()
	}
}

func (lb *leanBuilder) flush() {
	if lb.count == 0 {
		return
	}
	comp := lb.enc.EncodeAll(lb.frame, nil)
	lb.out = binary.AppendUvarint(lb.out, uint64(lb.count))
	lb.out = binary.AppendUvarint(lb.out, uint64(len(comp)))
	lb.out = append(lb.out, comp...)
	lb.total += lb.count
	lb.frame, lb.count = lb.frame[:0], 0
}

// file is the lean copy of the segment whose seal holds digest (raw
// SHA-256) and whose bytes before the seal have XXH64 xx; false when it
// gave up, or the last line is not whole.
func (lb *leanBuilder) file(digest []byte, xx uint64) ([]byte, bool) {
	if lb.failed || !lb.cut.whole() {
		return nil, false
	}
	lb.flush()
	if lb.total == 0 {
		return nil, false
	}
	b := make([]byte, 0, leanHead+len(lb.out)+24+8)
	b = append(b, leanMagic...)
	b = hex.AppendEncode(b, digest)
	b = append(b, '\n')
	b = fmt.Appendf(b, "%016x\n", xx)
	b = append(b, lb.out...)
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(lb.total))
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b)), true
}

func (lb *leanBuilder) close() { lb.enc.Close() }

// MakeLean makes the lean copy of each sealed segment of dir that has no
// lean copy to read (an older run's, or one whose making was cut short),
// and returns how many it made. lk must be dir's exclusive lock. A
// segment whose seal does not hold, or any of whose lines does not
// decode, is left without one; the records are not changed.
func MakeLean(ctx context.Context, lk *Lock, dir string) (int, error) {
	if err := lk.holds(dir); err != nil {
		return 0, err
	}
	d, err := listFiles(dir)
	if err != nil {
		return 0, err
	}
	made := 0
	for _, f := range d.files {
		if !f.zst {
			continue
		}
		if err := ctx.Err(); err != nil {
			return made, err
		}
		seg, err := os.ReadFile(f.path)
		if err != nil {
			return made, fmt.Errorf("making the lean copy of %s: %w", f.path, err)
		}
		if !sealedBytes(seg) || loadLean(f.path, seg) != nil {
			continue // not sealed, or its lean copy is one to read
		}
		body := len(seg) - segSealFrame
		want, _ := sealDigest(seg[body:])
		digest, err := hex.DecodeString(string(want))
		if err != nil {
			continue
		}
		lb, err := newLeanBuilder()
		if err != nil {
			return made, err
		}
		zr, err := newDecoder(bytes.NewReader(seg))
		if err != nil {
			lb.close()
			return made, fmt.Errorf("making the lean copy of %s: %w", f.path, err)
		}
		_, err = io.Copy(lb, zr)
		zr.Close()
		data, ok := lb.file(digest, xxhash.Sum64(seg[:body]))
		lb.close()
		if err != nil {
			return made, fmt.Errorf("making the lean copy of %s: decompressing it: %w", f.path, err)
		}
		if !ok {
			continue
		}
		if err := writeLean(f.path, data); err != nil {
			return made, fmt.Errorf("making the lean copy of %s: %w", f.path, err)
		}
		made++
	}
	return made, nil
}

// writeLean writes the lean copy data of the segment at segPath
// (atomicfile: a synced temporary file renamed), its directory synced.
func writeLean(segPath string, data []byte) error {
	path := leanName(segPath)
	if err := atomicfile.WriteFile(path, data); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// leanFrame is one frame of a lean copy: its record count and compressed
// bytes.
type leanFrame struct {
	records int
	data    []byte
}

// loadLean reads the lean copy of the segment at segPath, whose bytes
// (read whole) are seg; nil when there is none, or it is not one to read
// (see Lean copies).
func loadLean(segPath string, seg []byte) []leanFrame {
	if len(seg) < segSealFrame {
		return nil
	}
	body := len(seg) - segSealFrame
	want, ok := sealDigest(seg[body:])
	if !ok {
		return nil
	}
	b, err := os.ReadFile(leanName(segPath))
	if err != nil || len(b) < leanHead {
		return nil
	}
	// The file's own digest first (it names the segment), then the
	// segment's bytes against it.
	frames := parseLean(b, want)
	if frames == nil || string(b[len(leanMagic)+65:leanHead-1]) != fmt.Sprintf("%016x", xxhash.Sum64(seg[:body])) {
		return nil
	}
	return frames
}

// parseLean reads the frames of lean copy b, which must name the segment
// digest want (hex); nil when it is not whole or names another.
func parseLean(b, want []byte) []leanFrame {
	if len(b) < leanHead+8 || string(b[:len(leanMagic)]) != leanMagic || b[len(leanMagic)+64] != '\n' ||
		b[leanHead-1] != '\n' || !bytes.Equal(b[len(leanMagic):len(leanMagic)+64], want) {
		return nil
	}
	body := b[:len(b)-8]
	if xxhash.Sum64(body) != binary.LittleEndian.Uint64(b[len(body):]) {
		return nil
	}
	l := leanReader{b: body[leanHead:]}
	var frames []leanFrame
	total := 0
	for {
		n := l.uvarint()
		if l.err != nil {
			return nil
		}
		if n == 0 {
			break
		}
		data := l.bytes(l.uvarint())
		if l.err != nil || n > math.MaxInt32 || len(data) == 0 {
			return nil
		}
		frames = append(frames, leanFrame{records: int(n), data: data})
		total += int(n)
	}
	if l.uvarint() != uint64(total) || l.err != nil || len(l.b) != 0 || total == 0 {
		return nil
	}
	return frames
}

// decodeLean decodes a lean frame's content (count records) into out,
// running work on each record as decodeBatch does on lines.
func decodeLean[T any](seed maphash.Seed, f *recordFile, first, local int, content []byte, count int, out []lineResult[T], o StreamOptions, in *interner, work func(int, *engine.Record) (T, error)) ([]lineResult[T], error) {
	out = growResults(out, count)
	l := leanReader{b: content, in: in, skipDigests: o.SkipDigests}
	var r engine.Record
	for i := range count {
		if err := l.record(!o.SkipExtracted, &r); err != nil {
			return nil, fmt.Errorf("%s line %d: reading its lean copy %s: %w", f.path, local+i, filepath.Base(leanName(f.path)), err)
		}
		if err := processed(seed, &out[i], f, first+i, local+i, sealOK, &r, work); err != nil {
			return nil, err
		}
	}
	if len(l.b) != 0 {
		return nil, fmt.Errorf("%s: its lean copy %s has bytes after its records", f.path, filepath.Base(leanName(f.path)))
	}
	return out, nil
}

// leanInflater decompresses lean frames for one goroutine, into a buffer
// it reuses (decodeLean copies what it keeps).
type leanInflater struct {
	dec *zstd.Decoder
	buf []byte
	in  interner
}

func (li *leanInflater) inflate(frame []byte) ([]byte, error) {
	if li.dec == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return nil, err
		}
		li.dec = d
	}
	var err error
	li.buf, err = li.dec.DecodeAll(frame, li.buf[:0])
	return li.buf, err
}

func (li *leanInflater) close() {
	if li.dec != nil {
		li.dec.Close()
	}
}
