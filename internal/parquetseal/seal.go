// Package parquetseal seals a Parquet file with two digests in its
// key-value metadata, each an XXH64 in 16 hex digits: FooterKey's, of the
// footer (the Thrift FileMetaData: the schema, the row groups' places and
// counts, the key-value metadata, the file's digest among them) taken
// with its own value written as 16 zeros, which every reader checks
// (Check); FileKey's, of the whole file taken with both values written
// so, which a reader of rows checks before it decodes any (Check, whole).
// A byte changed anywhere in the file makes one or both fail. Any Parquet
// reader (DuckDB, pandas) reads a sealed file as it reads any other.
//
// A writer reserves the digests' places (Reserve), writes the file
// through a Hasher, closes its parquet.Writer, and seals it (Seal): it
// reads the footer back once and writes the 32 bytes in place.
package parquetseal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"
)

// The digests' metadata keys, and the placeholder each holds until the
// file is sealed.
const (
	FooterKey = "bhasha.footer.xxh64"
	FileKey   = "bhasha.xxh64"
	sumZero   = "0000000000000000"
)

// tailLen is the length of a Parquet file's tail: its footer's length (4
// bytes, little-endian) and the magic "PAR1".
const tailLen = 8

// footer is a sealed file's footer as the file holds it.
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
	if ft.atFooter, err = sumAt(ft.b, FooterKey); err != nil {
		return nil, err
	}
	if ft.atFile, err = sumAt(ft.b, FileKey); err != nil {
		return nil, err
	}
	return ft, nil
}

// sumAt is the offset in footer b of metadata key's 16-byte value: after
// the key's last occurrence and the Thrift header 0x18 and its length.
func sumAt(b []byte, key string) (int, error) {
	i := bytes.LastIndex(b, append([]byte(key), 0x18, byte(len(sumZero))))
	if i < 0 || i+len(key)+2+len(sumZero) > len(b) {
		return 0, fmt.Errorf("no metadata %s of %d bytes in its footer (or written by an older Bhasha)", key, len(sumZero))
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

// Check checks the digests of the sealed Parquet file f, of n bytes: its
// footer's (one XXH64 pass over the footer, read once), then, when whole
// is true, the whole file's (one XXH64 pass over the file, read from its
// start a MiB at a time). A file that is not a sealed Parquet file, or
// whose digests do not hold (a byte changed anywhere), is an error saying
// what does not hold.
func Check(f io.ReaderAt, n int64, whole bool) error {
	ft, err := readFooter(f, n)
	if err != nil {
		return fmt.Errorf("damaged: %w", err)
	}
	if got, want := sumText(xxhash.Sum64(ft.zeroed(false))), ft.value(ft.atFooter); got != want {
		return fmt.Errorf("damaged: its footer hashes to xxh64:%s, its %s says %q", got, FooterKey, want)
	}
	if !whole {
		return nil
	}
	h := xxhash.New()
	if _, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, ft.start), make([]byte, 1<<20)); err != nil {
		return fmt.Errorf("reading it: %w", err)
	}
	h.Write(ft.zeroed(true))
	h.Write(ft.tail[:])
	if got, want := sumText(h.Sum64()), ft.value(ft.atFile); got != want {
		return fmt.Errorf("damaged: its bytes hash to xxh64:%s, its %s says %q", got, FileKey, want)
	}
	return nil
}

// Reserve writes the digests' placeholders into w's key-value metadata,
// last of it; Seal fills them in once w is closed.
func Reserve(w interface{ SetKeyValueMetadata(key, value string) }) {
	w.SetKeyValueMetadata(FooterKey, sumZero)
	w.SetKeyValueMetadata(FileKey, sumZero)
}

// A Hasher passes what is written to it on to its writer and hashes it:
// the writer a parquet.Writer of a file to Seal writes to.
type Hasher struct {
	w io.Writer
	h *xxhash.Digest
	n int64
}

// NewHasher is a Hasher writing to w.
func NewHasher(w io.Writer) *Hasher { return &Hasher{w: w, h: xxhash.New()} }

func (s *Hasher) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

// Seal writes the digests into the Parquet file just written to f
// through s, from its start, whose metadata holds their placeholders
// (Reserve): the file's (s has hashed every byte), then the footer's,
// over the footer that holds it. It reads the footer back and writes 32
// bytes; a file without the placeholders is an error.
func Seal(f *os.File, s *Hasher) error {
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
