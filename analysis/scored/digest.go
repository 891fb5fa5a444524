package scored

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"
)

// The store's digests, two values of its key-value metadata, each an
// XXH64 in 16 hex digits: fileSumKey's, of the whole file taken with both
// values written as sumZero, which the readers of rows (Read, Open) check
// before decoding any; footerSumKey's, of the footer (the Thrift
// FileMetaData: the schema, the row groups' places and counts, the
// key-value metadata, the file's digest among them) taken with its own
// value written as sumZero, which every reader checks. A byte changed
// anywhere in the file makes one or both fail.
const (
	footerSumKey = "bhasha.footer.xxh64"
	fileSumKey   = "bhasha.xxh64"
	sumZero      = "0000000000000000"
)

// tailLen is the length of a Parquet file's tail: its footer's length (4
// bytes, little-endian) and the magic "PAR1".
const tailLen = 8

// footer is a store's footer as its file holds it.
type footer struct {
	start            int64 // the file offset of its first byte
	b                []byte
	tail             [tailLen]byte
	atFooter, atFile int // the offsets in b of the two digests' values
}

// readFooter reads the footer of file f, of size n, and finds its
// digests' values. It reads only the footer and the tail.
func readFooter(f io.ReaderAt, n int64) (*footer, error) {
	if n < 4+tailLen {
		return nil, fmt.Errorf("%d bytes: shorter than a Parquet file", n)
	}
	ft := &footer{}
	if _, err := f.ReadAt(ft.tail[:], n-tailLen); err != nil {
		return nil, fmt.Errorf("reading its tail: %w", err)
	}
	if string(ft.tail[4:]) != "PAR1" {
		return nil, errors.New("no Parquet magic at its end")
	}
	l := int64(binary.LittleEndian.Uint32(ft.tail[:4]))
	if l > n-4-tailLen {
		return nil, fmt.Errorf("its footer's length %d is more than the file holds", l)
	}
	ft.start, ft.b = n-tailLen-l, make([]byte, l)
	if _, err := f.ReadAt(ft.b, ft.start); err != nil {
		return nil, fmt.Errorf("reading its footer: %w", err)
	}
	var err error
	if ft.atFooter, err = sumAt(ft.b, footerSumKey); err != nil {
		return nil, err
	}
	if ft.atFile, err = sumAt(ft.b, fileSumKey); err != nil {
		return nil, err
	}
	return ft, nil
}

// sumAt is the offset in footer b of the value of metadata key: the 16
// bytes after the key's last occurrence followed by the Thrift compact
// header of a KeyValue's value (0x18: field 2, binary) and its length.
func sumAt(b []byte, key string) (int, error) {
	i := bytes.LastIndex(b, append([]byte(key), 0x18, byte(len(sumZero))))
	if i < 0 || i+len(key)+2+len(sumZero) > len(b) {
		return 0, fmt.Errorf("no metadata %s of %d bytes in its footer (damaged, or written by an older Bhasha)", key, len(sumZero))
	}
	return i + len(key) + 2, nil
}

// value is the value of the digest at offset at of the footer.
func (ft *footer) value(at int) string { return string(ft.b[at : at+len(sumZero)]) }

// zeroed is the footer with its own digest's value written as sumZero,
// and the file's too when file is true.
func (ft *footer) zeroed(file bool) []byte {
	z := bytes.Clone(ft.b)
	copy(z[ft.atFooter:], sumZero)
	if file {
		copy(z[ft.atFile:], sumZero)
	}
	return z
}

func sumText(x uint64) string { return fmt.Sprintf("%016x", x) }

// check checks the footer's digest: one XXH64 pass over the footer.
func (ft *footer) check() error {
	if got, want := sumText(xxhash.Sum64(ft.zeroed(false))), ft.value(ft.atFooter); got != want {
		return fmt.Errorf("damaged: its footer hashes to xxh64:%s, its %s says %q", got, footerSumKey, want)
	}
	return nil
}

// checkFile checks the whole file's digest: one XXH64 pass over file f,
// read from its start, a MiB at a time.
func (ft *footer) checkFile(f io.ReaderAt) error {
	h := xxhash.New()
	if _, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, ft.start), make([]byte, 1<<20)); err != nil {
		return fmt.Errorf("reading it: %w", err)
	}
	h.Write(ft.zeroed(true))
	h.Write(ft.tail[:])
	if got, want := sumText(h.Sum64()), ft.value(ft.atFile); got != want {
		return fmt.Errorf("damaged: its bytes hash to xxh64:%s, its %s says %q", got, fileSumKey, want)
	}
	return nil
}

// sumWriter passes what is written to w and hashes it.
type sumWriter struct {
	w io.Writer
	h *xxhash.Digest
	n int64
}

func (s *sumWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

// seal writes the digests into the store just written to f through s,
// whose footer holds both digests' values as sumZero: the file's (s has
// hashed every byte), then the footer's, over the footer that holds it.
// It reads the footer back and writes 32 bytes.
func seal(f *os.File, s *sumWriter) error {
	ft, err := readFooter(f, s.n)
	if err != nil {
		return err
	}
	if ft.value(ft.atFooter) != sumZero || ft.value(ft.atFile) != sumZero {
		return errors.New("its digests' places do not hold their placeholders")
	}
	copy(ft.b[ft.atFile:], sumText(s.h.Sum64()))
	copy(ft.b[ft.atFooter:], sumText(xxhash.Sum64(ft.b)))
	for _, at := range []int{ft.atFile, ft.atFooter} {
		if _, err := f.WriteAt([]byte(ft.value(at)), ft.start+int64(at)); err != nil {
			return err
		}
	}
	return nil
}
