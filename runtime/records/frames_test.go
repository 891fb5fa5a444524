package records

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/klauspost/compress/zstd"
)

// linesOf is n lines of about size bytes each, numbered.
func linesOf(n, size int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "%d %s\n", i, strings.Repeat("भ", size/3))
	}
	return b.Bytes()
}

// The frame writer ends each frame at the first line end at or past
// frameBytes, gives each its content size, and loses no byte: a long
// line makes a long frame, a last line without a newline ends the last
// frame, nothing written makes no frame.
func TestFrameWriterFrames(t *testing.T) {
	long := append(append(linesOf(3, 100), bytes.Repeat([]byte("x"), frameBytes*5/2)...), '\n')
	long = append(long, linesOf(10, 100)...)
	cases := []struct {
		name   string
		in     []byte
		frames int
	}{
		{"short lines", linesOf(4000, 900), 4},
		{"one line longer than a frame", long, 2},
		{"no newline at the end", append(linesOf(2000, 900), "last"...), 2},
		{"one line", []byte("only\n"), 1},
		{"nothing", nil, 0},
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			fw, err := newFrameWriter(&out)
			if err != nil {
				t.Fatal(err)
			}
			for p := c.in; len(p) > 0; { // in uneven writes
				k := min(len(p), 70001)
				if _, err := fw.Write(p[:k]); err != nil {
					t.Fatal(err)
				}
				p = p[k:]
			}
			if err := fw.Close(); err != nil {
				t.Fatal(err)
			}
			fs, _, err := framesOf(out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != c.frames {
				t.Fatalf("%d frames, want %d", len(fs), c.frames)
			}
			var all []byte
			for i, f := range fs {
				plain, err := dec.DecodeAll(f.data, nil)
				if err != nil {
					t.Fatal(err)
				}
				if f.size != len(plain) {
					t.Errorf("frame %d says %d bytes, holds %d", i, f.size, len(plain))
				}
				if i < len(fs)-1 && (len(plain) < frameBytes || plain[len(plain)-1] != '\n' || bytes.IndexByte(plain[frameBytes-1:], '\n') != len(plain)-frameBytes) {
					t.Errorf("frame %d (%d bytes) does not end at the first line end past %d", i, len(plain), frameBytes)
				}
				all = append(all, plain...)
			}
			if !bytes.Equal(all, c.in) {
				t.Errorf("the frames hold %d bytes, not the %d written", len(all), len(c.in))
			}
			if whole, err := dec.DecodeAll(out.Bytes(), nil); err != nil || !bytes.Equal(whole, c.in) {
				t.Errorf("read as one stream: %d bytes, %v", len(whole), err)
			}
		})
	}
}

// framesOf reads frame by frame only a segment of several frames that
// all give their content size, passes over skippable frames, and calls
// what is not zstd an error.
func TestFramesOf(t *testing.T) {
	enc, _ := zstd.NewWriter(nil, zstd.WithSingleSegment(true))
	a, b := enc.EncodeAll([]byte("a\n"), nil), enc.EncodeAll([]byte("bb\n"), nil)
	var streamed bytes.Buffer
	sw, _ := zstd.NewWriter(&streamed)
	sw.Write([]byte("a\nbb\n"))
	sw.Close()
	seal := segSealOf(make([]byte, 32))
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	cases := []struct {
		name   string
		seg    []byte
		frames int
		ok     bool
		err    bool
	}{
		{"two frames and a seal", cat(a, seal, b, seal), 2, true, false},
		{"one frame", cat(a, seal), 1, false, false},
		{"a streamed frame", cat(streamed.Bytes(), seal), 1, false, false},
		{"a streamed frame among sized ones", cat(a, streamed.Bytes(), b), 3, false, false},
		{"cut short", cat(a, b[:len(b)-2]), 0, false, true},
		{"not zstd", []byte("{\"key\":\"k\"}\n"), 0, false, true},
		{"a skippable frame past the end", cat(a, seal[:20]), 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, ok, err := framesOf(c.seg)
			if (err != nil) != c.err {
				t.Fatalf("error %v, want one: %v", err, c.err)
			}
			if err == nil && (len(fs) != c.frames || ok != c.ok) {
				t.Errorf("%d frames, ok %v; want %d, %v", len(fs), ok, c.frames, c.ok)
			}
		})
	}
}

// A segment is read frame by frame as it reads as one stream, however
// its frames cut its lines: at line ends (as the writer makes them),
// inside lines, a line across three frames, "\r\n" ends split between
// frames, a last line without a newline; sealed or not, and with a frame
// that does not give its size (read as one stream).
func TestFramedSegmentsRead(t *testing.T) {
	plain := t.TempDir()
	var want []string
	var recs []*engine.Record
	for i := range 3000 {
		r := segRec(i, engine.StatusOK)
		if i == 1500 { // a line longer than three frames
			r.Response = strings.Repeat("लंबा ", frameBytes*3/len("लंबा "))
		}
		recs = append(recs, r)
		want = append(want, r.Key+"="+r.Response)
	}
	writeRecs(t, plain, 0, 0, recs)
	lines, err := os.ReadFile(filepath.Join(plain, FileName))
	if err != nil {
		t.Fatal(err)
	}
	crlf := bytes.ReplaceAll(lines, []byte("\n"), []byte("\r\n"))
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	// cut frames data at the given offsets, each frame encoded alone.
	cut := func(data []byte, at ...int) []byte {
		var out []byte
		from := 0
		for _, to := range append(at, len(data)) {
			out = enc.EncodeAll(data[from:to], out)
			from = to
		}
		return out
	}
	var writer bytes.Buffer
	fw, _ := newFrameWriter(&writer)
	fw.Write(lines)
	fw.Close()
	var streamed bytes.Buffer
	sw, _ := zstd.NewWriter(&streamed)
	sw.Write(lines[frameBytes:])
	sw.Close()
	n := len(lines)
	cases := []struct {
		name string
		seg  []byte
	}{
		{"the writer's frames", writer.Bytes()},
		{"frames inside lines", cut(lines, 1000, 70001, n/3, n/2, n-7)},
		{"crlf split between frames", cut(crlf, bytes.IndexByte(crlf, '\n'), bytes.IndexByte(crlf, '\r')+1, len(crlf)/2)},
		{"no last newline", cut(lines[:n-1], frameBytes, 2*frameBytes)},
		{"a frame without its size", append(cut(lines[:frameBytes]), streamed.Bytes()...)},
	}
	for _, c := range cases {
		for _, sealed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sealed=%v", c.name, sealed), func(t *testing.T) {
				dir := t.TempDir()
				seg := c.seg
				if sealed {
					sum := sha256Sum(seg)
					seg = append(bytes.Clone(seg), segSealOf(sum)...)
				}
				if err := os.WriteFile(filepath.Join(dir, SegmentName(1)), seg, 0o644); err != nil {
					t.Fatal(err)
				}
				var got []string
				nl, err := Each(context.Background(), dir, StreamOptions{}, func(_ int, r *engine.Record) (string, error) {
					return r.Key + "=" + r.Response, nil
				}, func(line int, _ string, _ bool, v string) error {
					if line != len(got)+1 {
						return fmt.Errorf("line %d after %d lines", line, len(got))
					}
					got = append(got, v)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if nl != len(want) || strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("%d lines read (%d given), want %d", nl, len(got), len(want))
				}
			})
		}
	}
}

// A damaged frame of a segment whose lines are not sealed loses the
// frame's lines (none can be verified), and the findings name the
// segment; the other frames are read.
func TestDamagedFrame(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	for i := range 3000 {
		line, _ := json.Marshal(segRec(i, engine.StatusOK))
		b.Write(append(line, '\n'))
	}
	var seg bytes.Buffer
	fw, _ := newFrameWriter(&seg)
	fw.Write(b.Bytes())
	fw.Close()
	fs, ok, err := framesOf(seg.Bytes())
	if err != nil || !ok {
		t.Fatalf("%d frames, %v, %v", len(fs), ok, err)
	}
	bad := seg.Bytes()
	at := len(fs[0].data) + len(fs[1].data)/2 // inside the second frame
	bad[at] ^= 0xff
	path := filepath.Join(dir, SegmentName(1))
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	read := 0
	_, err = Each(context.Background(), dir, StreamOptions{}, func(_ int, r *engine.Record) (string, error) { return r.Key, nil },
		func(int, string, bool, string) error { read++; return nil })
	if err != nil || read == 0 || read >= 3000 {
		t.Fatalf("reading a damaged frame: %d records: %v", read, err)
	}
	_, _, d, _, err := Unique(context.Background(), dir, StreamOptions{}, func(_ int, r *engine.Record) (string, error) { return r.Key, nil })
	if err != nil || len(d.Damaged) != 1 || !strings.Contains(strings.Join(d.Notes(), " "), SegmentName(1)+" is damaged") {
		t.Fatalf("findings: %v %q", err, d.Notes())
	}
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// The inflater cuts a segment's frames into the lines bufio.ScanLines
// reads from the same bytes, however the frames cut them, and says how
// far into the segment each batch reaches.
func TestInflaterCutsAsScanLines(t *testing.T) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(true))
	text := []byte("one\r\ntwo\n\nthree\r\n" + strings.Repeat("four", 1000) + "\r\nfive\nsix")
	cases := []struct {
		name string
		data []byte
		at   []int // where frames end
	}{
		{"at line ends", text, []int{5, 9, 10}},
		{"between \\r and \\n", text, []int{4, 16}},
		{"inside a line, a line across frames", text, []int{2, 20, 900, 2000, 4000}},
		{"a newline last", append(bytes.Clone(text), '\n'), []int{3}},
		{"a \\r last", append(bytes.Clone(text), '\r'), []int{3}},
		{"one newline", []byte("\n"), []int{0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			sc := bufio.NewScanner(bytes.NewReader(c.data))
			for sc.Scan() {
				want = append(want, sc.Text())
			}
			seg := &framedSegment{path: "seg"}
			from := 0
			for _, to := range append(c.at, len(c.data)) {
				f := enc.EncodeAll(c.data[from:to], nil)
				seg.frames = append(seg.frames, frame{data: f, size: to - from})
				seg.size += int64(len(f))
				from = to
			}
			in, err := newInflater(2, make(chan []byte, 4))
			if err != nil {
				t.Fatal(err)
			}
			defer in.close()
			var got []string
			last := int64(0)
			err = in.lines(context.Background(), seg, 2, func(data []byte, spans []span, at int64) error {
				for _, s := range spans {
					got = append(got, string(data[s.from:s.to]))
				}
				if at < last || at > seg.size {
					t.Errorf("a batch reaching byte %d after %d, of %d", at, last, seg.size)
				}
				last = at
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
				t.Errorf("lines %q, want %q", got, want)
			}
		})
	}
}
