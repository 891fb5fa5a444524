package report

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/flate"
)

// What pflate writes inflates to what was written to it, whatever the
// chunk size and the sizes of the writes: nothing, one byte, text that
// repeats across chunks (so that the dictionaries matter) and random
// bytes.
func TestPflateRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var text bytes.Buffer
	for text.Len() < 3<<20 {
		text.WriteString(`<row r="12"><c t="inlineStr"><is><t>नमस्ते, which country is Bourvil a citizen of?</t></is></c></row>`)
		text.WriteByte(byte('a' + rng.IntN(26)))
	}
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	for _, in := range [][]byte{nil, []byte("x"), text.Bytes(), random} {
		for _, size := range []int{1 << 10, 40 << 10, 1 << 20} {
			var out bytes.Buffer
			p := newPflate(&out, zipLevel, size)
			if _, err := io.Copy(p, iotest.HalfReader(bytes.NewReader(in))); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(flate.NewReader(&out))
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("%d bytes in chunks of %d: inflated %d bytes (%v)", len(in), size, len(got), err)
			}
		}
	}
}

// A write error stops the stream and is returned, from Write or Close.
func TestPflateWriteError(t *testing.T) {
	p := newPflate(failing{}, zipLevel, 1<<10)
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = p.Write(bytes.Repeat([]byte("abc"), 1000))
	}
	if cerr := p.Close(); err == nil && cerr == nil {
		t.Error("no error from a writer that fails")
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, io.ErrShortWrite }
