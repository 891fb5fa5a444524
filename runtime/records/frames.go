package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/bhashalab/bhasha/internal/lines"
	"github.com/klauspost/compress/zstd"
)

// Segment frames.
//
// A segment is a sequence of zstd frames (RFC 8878 §3.1), concatenated as
// the format allows, then its seal (segseal.go). The writer ends a frame
// at the first line end at or past frameBytes of lines, so each frame
// holds whole lines, and gives each frame its content size: a reader can
// then decompress every frame on its own, on as many cores as it has,
// each straight into its batch's buffer, instead of one stream through a
// window it copies. Segments written before this are one frame; every
// zstd tool reads both kinds as one stream (zstdcat, DuckDB, Python's
// zstandard), and so does open without walk's decoder.
//
// framesOf reads the frames of a whole segment from their headers alone
// (§3.1.1: magic, frame header, blocks each with a 3-byte header, an
// optional checksum; skippable frames §3.1.2 are passed over). A segment
// is read frame by frame only when it has more than one frame and every
// frame says its content size, at most maxFrameBytes; any other segment is
// streamed, as before.
const (
	frameBytes    = 1 << 20
	maxFrameBytes = 16 << 20
	// wholeMaxCompressed is the largest segment read whole into memory
	// to be read frame by frame (the writer's are about a tenth of
	// SealBytes).
	wholeMaxCompressed = 64 << 20
	zstdMagic          = 0xFD2FB528
)

// frameWriter compresses the lines written to it into w, a frame for each
// frameBytes or so of whole lines (a frame holds at least one line; a
// last line without a newline ends the last frame).
type frameWriter struct {
	w   io.Writer
	enc *zstd.Encoder
	buf []byte
	out []byte
}

func newFrameWriter(w io.Writer) (*frameWriter, error) {
	// A single-segment frame always says its content size (RFC 8878
	// §3.1.1.1.1); its window is its size, at most a frame and a line
	// (64 MiB, lines.DefaultMax): within what zstd tools accept by default.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(true))
	if err != nil {
		return nil, err
	}
	return &frameWriter{w: w, enc: enc, buf: make([]byte, 0, frameBytes+64<<10)}, nil
}

func (f *frameWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := frameBytes - len(f.buf)
		if room > 0 {
			k := min(room, len(p))
			f.buf, p = append(f.buf, p[:k]...), p[k:]
			if len(f.buf) < frameBytes {
				break
			}
		}
		// The frame is full: it ends at the next line end.
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.buf, p = append(f.buf, p...), nil
			break
		}
		f.buf, p = append(f.buf, p[:i+1]...), p[i+1:]
		if err := f.flush(); err != nil {
			return n - len(p), err
		}
	}
	return n, nil
}

// flush writes what is buffered as one frame.
func (f *frameWriter) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	f.out = f.enc.EncodeAll(f.buf, f.out[:0])
	f.buf = f.buf[:0]
	_, err := f.w.Write(f.out)
	return err
}

// Close writes the last frame; it does not close w.
func (f *frameWriter) Close() error {
	err := f.flush()
	f.enc.Close()
	return err
}

// frame is one zstd frame of a segment: its bytes and content size.
type frame struct {
	data []byte
	size int
}

var errFrame = errors.New("not a zstd frame")

// framesOf splits seg (a whole segment, its seal included) into its zstd
// frames, skippable frames left out; ok false when the segment is not to
// be read frame by frame (one frame, a frame without its content size or
// with more than maxFrameBytes); an error when its bytes are no zstd
// frames at all.
func framesOf(seg []byte) (fs []frame, ok bool, err error) {
	for at := 0; at < len(seg); {
		if len(seg)-at < 8 {
			return nil, false, fmt.Errorf("at byte %d: %w", at, errFrame)
		}
		magic := binary.LittleEndian.Uint32(seg[at:])
		if magic&0xFFFFFFF0 == 0x184D2A50 { // skippable
			n := int(binary.LittleEndian.Uint32(seg[at+4:]))
			if n > len(seg)-at-8 {
				return nil, false, fmt.Errorf("at byte %d: skippable frame of %d bytes past the end: %w", at, n, errFrame)
			}
			at += 8 + n
			continue
		}
		if magic != zstdMagic {
			return nil, false, fmt.Errorf("at byte %d: %w", at, errFrame)
		}
		n, size, err := frameExtent(seg[at:])
		if err != nil {
			return nil, false, fmt.Errorf("at byte %d: %w", at, err)
		}
		if size > maxFrameBytes {
			size = -1
		}
		fs = append(fs, frame{data: seg[at : at+n], size: size})
		at += n
	}
	if len(fs) < 2 {
		return fs, false, nil
	}
	for _, f := range fs {
		if f.size < 0 {
			return fs, false, nil
		}
	}
	return fs, true, nil
}

// frameExtent reads the zstd frame at the start of b: its length in
// bytes and its content size (-1 when the header does not give it).
func frameExtent(b []byte) (n, size int, err error) {
	if len(b) < 5 {
		return 0, 0, errFrame
	}
	fhd := b[4]
	if fhd&0x08 != 0 { // reserved bit
		return 0, 0, errFrame
	}
	single := fhd&0x20 != 0
	at := 5
	if !single {
		at++ // window descriptor
	}
	at += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
	fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcsLen == 0 && single {
		fcsLen = 1
	}
	if len(b) < at+fcsLen {
		return 0, 0, errFrame
	}
	size = -1
	switch fcsLen {
	case 1:
		size = int(b[at])
	case 2:
		size = int(binary.LittleEndian.Uint16(b[at:])) + 256
	case 4:
		size = int(binary.LittleEndian.Uint32(b[at:]))
	case 8:
		if v := binary.LittleEndian.Uint64(b[at:]); v <= 1<<40 {
			size = int(v)
		}
	}
	at += fcsLen
	for {
		if len(b) < at+3 {
			return 0, 0, errFrame
		}
		h := uint32(b[at]) | uint32(b[at+1])<<8 | uint32(b[at+2])<<16
		at += 3
		last, typ, bsize := h&1 != 0, (h>>1)&3, int(h>>3)
		switch typ {
		case 0, 2: // raw, compressed
			at += bsize
		case 1: // RLE
			at++
		default:
			return 0, 0, errFrame
		}
		if at > len(b) {
			return 0, 0, errFrame
		}
		if last {
			break
		}
	}
	if fhd&0x04 != 0 { // content checksum
		at += 4
	}
	if at > len(b) {
		return 0, 0, errFrame
	}
	return at, size, nil
}

// segDecoder is what walk keeps from segment to segment: a streaming
// decoder and the buffer a segment is read whole into.
type segDecoder struct {
	stream *zstd.Decoder
	comp   []byte
}

func (d *segDecoder) close() {
	if d.stream != nil {
		d.stream.Close()
	}
}

// streamer is d's streaming decoder reset to read r.
func (d *segDecoder) streamer(r io.Reader) (*zstd.Decoder, error) {
	if d.stream == nil {
		var err error
		if d.stream, err = newDecoder(nil); err != nil {
			return nil, err
		}
	}
	return d.stream, d.stream.Reset(r)
}

// framedSegment is a segment read whole, to be read frame by frame
// (stream) or, through Read, as one stream. Its frames are d.comp's until
// the next open with d.
type framedSegment struct {
	frames []frame
	lean   []leanFrame // its lean copy's frames, read instead (walkLean)
	path   string
	size   int64 // bytes on disk
	d      *segDecoder
	comp   []byte
	zr     *zstd.Decoder // Read's, made at the first Read
	br     *bytes.Reader // what zr reads
}

// position is how far Read has read the segment's bytes.
func (s *framedSegment) position() int64 {
	if s.br == nil {
		return 0
	}
	return s.size - int64(s.br.Len())
}

func (s *framedSegment) Read(p []byte) (int, error) {
	if s.zr == nil {
		s.br = bytes.NewReader(s.comp)
		zr, err := s.d.streamer(s.br)
		if err != nil {
			return 0, fmt.Errorf("decompressing %s: %w", s.path, err)
		}
		s.zr = zr
	}
	n, err := s.zr.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("decompressing %s: %w (the segment is damaged)", s.path, err)
	}
	return n, err
}

func (*framedSegment) Close() error { return nil }

// inflater decompresses frames on several goroutines, each into a buffer
// from free (the batches' buffers, given back there once decoded).
type inflater struct {
	jobs chan *inflateJob
	dec  *zstd.Decoder
}

type inflateJob struct {
	f    frame
	data []byte
	err  error
	done chan struct{}
}

func newInflater(workers int, free chan []byte) (*inflater, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(workers), zstd.WithDecoderMaxMemory(maxFrameBytes))
	if err != nil {
		return nil, err
	}
	in := &inflater{jobs: make(chan *inflateJob), dec: dec}
	for range workers {
		go func() {
			for j := range in.jobs {
				var buf []byte
				select {
				case buf = <-free:
				default:
				}
				if cap(buf) < j.f.size {
					buf = make([]byte, 0, max(j.f.size, frameBytes+64<<10))
				}
				j.data, j.err = dec.DecodeAll(j.f.data, buf[:0])
				close(j.done)
			}
		}()
	}
	return in, nil
}

func (in *inflater) close() {
	close(in.jobs)
	in.dec.Close()
}

// lines decompresses seg's frames, window of them at a time, and calls
// fn in order with each frame's whole lines: data (the buffer is fn's
// from then on), each line's span in it (as cutLines cuts them: a '\r'
// before the newline dropped, a last line without a newline a line) and
// the offset in the segment's bytes reached. A line that runs past its
// frame (a segment another tool framed) is joined to the next frame's
// bytes; one longer than lines.DefaultMax is an error naming seg and the
// line.
func (in *inflater) lines(ctx context.Context, seg *framedSegment, window int, fn func(data []byte, spans []span, at int64) error) error {
	var pending []*inflateJob
	var carry []byte // a line begun in an earlier frame
	next, n := 0, 0  // the next frame to send; the lines cut
	at := int64(0)   // the end of the frames sent, in the segment's bytes
	ends := make([]int64, 0, window)
	for next < len(seg.frames) || len(pending) > 0 {
		for next < len(seg.frames) && len(pending) < window {
			j := &inflateJob{f: seg.frames[next], done: make(chan struct{})}
			select {
			case in.jobs <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
			at += int64(len(j.f.data))
			pending, ends = append(pending, j), append(ends, at)
			next++
		}
		j, end := pending[0], ends[0]
		pending, ends = pending[1:], ends[1:]
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if j.err != nil {
			return fmt.Errorf("decompressing %s: %w (the segment is damaged)", seg.path, j.err)
		}
		data := j.data
		if len(carry) > 0 {
			data, carry = append(carry, data...), nil
		}
		var spans []span
		start := 0
		for {
			i := bytes.IndexByte(data[start:], '\n')
			if i < 0 {
				break
			}
			to := start + i
			if to > start && data[to-1] == '\r' {
				to--
			}
			spans = append(spans, span{int32(start), int32(to)})
			start += i + 1
		}
		n += len(spans)
		if start < len(data) {
			if len(data)-start > lines.DefaultMax {
				return fmt.Errorf("%s line %d: longer than the limit of %d MiB", seg.path, n+1, lines.DefaultMax>>20)
			}
			carry = bytes.Clone(data[start:])
		}
		if len(spans) == 0 {
			continue
		}
		if err := fn(data[:start], spans, end); err != nil {
			return err
		}
	}
	if len(carry) > 0 {
		to := len(carry)
		if carry[to-1] == '\r' {
			to--
		}
		return fn(carry, []span{{0, int32(to)}}, seg.size)
	}
	return nil
}
