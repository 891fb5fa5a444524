package records

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/bhashalab/bhasha/internal/lines"
)

// TestCutLinesAgreesWithScanLines cuts texts into lines through readers
// that return a byte, half a buffer or everything at a time, moving to a
// new buffer after every read, and checks the lines are bufio.ScanLines'.
func TestCutLinesAgreesWithScanLines(t *testing.T) {
	texts := map[string]string{
		"empty":          "",
		"one":            "a\n",
		"no newline":     "a\nbc",
		"crlf":           "a\r\nb\r\nc\r",
		"empty lines":    "\n\n\nx\n\n",
		"long lines":     strings.Repeat("x", 700<<10) + "\n" + strings.Repeat("y", 300<<10) + "\nz",
		"many short":     strings.Repeat("0123456789\n", 50000),
		"lone cr inside": "a\rb\nc\r\r\n",
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r },
		"byte":  iotest.OneByteReader,
		"half":  iotest.HalfReader,
	}
	for name, text := range texts {
		var want []string
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			want = append(want, sc.Text())
		}
		for rname, wrap := range readers {
			if rname == "byte" && len(text) > 100000 {
				continue
			}
			for _, move := range []bool{false, true} {
				var got []string
				var cur []byte
				pending := []span{}
				last, err := cutLines(wrap(strings.NewReader(text)), "f.jsonl", make([]byte, 0, 16), func(from, to int) {
					pending = append(pending, span{int32(from), int32(to)})
				}, func(data []byte, next int) ([]byte, bool) {
					cur = data
					if !move {
						return nil, false
					}
					for _, s := range pending {
						got = append(got, string(data[s.from:s.to]))
					}
					pending = pending[:0]
					return append([]byte(nil), data[next:]...), false
				})
				if err != nil {
					t.Fatalf("%s/%s: %v", name, rname, err)
				}
				cur = last
				for _, s := range pending {
					got = append(got, string(cur[s.from:s.to]))
				}
				if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
					t.Errorf("%s/%s/move=%v: %d lines, want %d (%.60q vs %.60q)", name, rname, move, len(got), len(want), got, want)
				}
			}
		}
	}
}

// TestCutLinesErrors: a read error names the file and the lines read
// before it; a stop ends without an error.
func TestCutLinesErrors(t *testing.T) {
	r := io.MultiReader(strings.NewReader("a\nb\n"), iotest.ErrReader(io.ErrUnexpectedEOF))
	_, err := cutLines(r, "seg.zst", nil, func(int, int) {}, func([]byte, int) ([]byte, bool) { return nil, false })
	if err == nil || err.Error() != "reading seg.zst after line 2: unexpected EOF" {
		t.Errorf("read error: %v", err)
	}
	long := io.MultiReader(io.LimitReader(repeatReader('x'), lines.DefaultMax+1), strings.NewReader("\n"))
	_, err = cutLines(io.MultiReader(strings.NewReader("a\n"), long), "big.jsonl", nil, func(int, int) {}, func([]byte, int) ([]byte, bool) { return nil, false })
	if err == nil || err.Error() != "big.jsonl line 2: longer than the limit of 64 MiB" {
		t.Errorf("long line: %v", err)
	}
	n := 0
	_, err = cutLines(iotest.OneByteReader(bytes.NewReader([]byte("a\nb\nc\n"))), "f", nil, func(int, int) { n++ }, func([]byte, int) ([]byte, bool) { return nil, n >= 1 })
	if err != nil || n != 1 {
		t.Errorf("stop: %v after %d lines", err, n)
	}
}

// repeatReader reads c forever.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
