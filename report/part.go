package report

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/klauspost/compress/flate"
)

// A long sheet's rows are made once, before the workbook is written:
// fitted, written as SpreadsheetML and deflated as they are made (on
// every core, pflate), into an unlinked temporary file. When the workbook
// writes the sheet's part, the part's head (what excelize puts before
// <sheetData>) and tail are each deflated on their own and the three are
// joined into the part's one deflate stream (RFC 1951 §3.2.3: a block
// may follow another's sync flush; no block refers back into the piece
// before it), its CRC-32 the combination of the three pieces'.

// deflatedRows are a sheet's rows, deflated, waiting for the workbook.
type deflatedRows struct {
	f    *os.File // unlinked; holds size bytes of deflate stream
	raw  int64    // the rows' bytes before compression
	size int64
	crc  uint32 // CRC-32 (IEEE) of the raw bytes
}

// rowsDeflater is where a sheet's rows are written: it counts and
// checksums them on their way into the compressor.
type rowsDeflater struct {
	d    *deflatedRows
	z    *pflate
	file *bufio.Writer
	out  counter
}

// counter counts the bytes written through it into w.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// newRowsDeflater opens the temporary file a sheet's rows are deflated
// into.
func newRowsDeflater() (*rowsDeflater, error) {
	f, err := os.CreateTemp("", "bhasha-sheet-*")
	if err != nil {
		return nil, fmt.Errorf("writing a sheet's rows: %w", err)
	}
	os.Remove(f.Name()) // unlinked: gone with the process, whatever happens
	w := &rowsDeflater{d: &deflatedRows{f: f}, file: bufio.NewWriterSize(f, 1<<20)}
	w.out.w = w.file
	w.z = newPflate(&w.out, zipLevel, 0)
	return w, nil
}

func (w *rowsDeflater) Write(b []byte) (int, error) {
	w.d.crc = crc32.Update(w.d.crc, crc32.IEEETable, b)
	w.d.raw += int64(len(b))
	return w.z.Write(b)
}

// finish ends the deflate stream in a sync flush and returns the rows;
// on an error the file is closed.
func (w *rowsDeflater) finish() (*deflatedRows, error) {
	err := w.z.Flush()
	if err == nil {
		err = w.file.Flush()
	}
	if err != nil {
		w.d.close()
		return nil, fmt.Errorf("writing a sheet's rows: %w", err)
	}
	w.d.size = w.out.n
	return w.d, nil
}

// close lets the file go (safe to call again, or on nil).
func (d *deflatedRows) close() {
	if d != nil && d.f != nil {
		d.f.Close()
		d.f = nil
	}
}

// writePart writes the zip entry name holding head, the rows and tail,
// as one deflate stream, into zw; the rows' file is closed.
func (d *deflatedRows) writePart(zw *zip.Writer, name string, head, tail []byte) error {
	defer d.close()
	if d.f == nil {
		return errors.New("the rows were already written")
	}
	deflate := func(b []byte, final bool) ([]byte, error) {
		var out bytes.Buffer
		fw, err := flate.NewWriter(&out, zipLevel)
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(b); err != nil {
			return nil, err
		}
		if final {
			err = fw.Close()
		} else {
			err = fw.Flush()
		}
		return out.Bytes(), err
	}
	zh, err := deflate(head, false)
	if err != nil {
		return err
	}
	zt, err := deflate(tail, true)
	if err != nil {
		return err
	}
	crc := crc32Combine(crc32Combine(crc32.ChecksumIEEE(head), d.crc, d.raw), crc32.ChecksumIEEE(tail), int64(len(tail)))
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64:   uint64(len(zh)) + uint64(d.size) + uint64(len(zt)),
		UncompressedSize64: uint64(len(head)) + uint64(d.raw) + uint64(len(tail))})
	if err != nil {
		return err
	}
	if _, err := w.Write(zh); err != nil {
		return err
	}
	if _, err := io.Copy(w, io.NewSectionReader(d.f, 0, d.size)); err != nil {
		return fmt.Errorf("copying a sheet's rows: %w", err)
	}
	_, err = w.Write(zt)
	return err
}

// crc32Combine is the CRC-32 (IEEE) of A followed by B, given crc1 =
// CRC-32(A), crc2 = CRC-32(B) and len2 = len(B): crc1 advanced over len2
// zero bytes (multiplication by x^(8·len2) in GF(2)[x] modulo the
// polynomial, by repeated squaring of the one-zero-bit operator), then
// xored with crc2. This is zlib's crc32_combine.
func crc32Combine(crc1, crc2 uint32, len2 int64) uint32 {
	if len2 <= 0 {
		return crc1
	}
	var even, odd [32]uint32 // operators for 2^k zero bits
	odd[0] = 0xedb88320      // the reflected polynomial: one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {                  // eight, then doubling, applied where len2 has a bit
		gf2Square(&even, &odd)
		if len2&1 != 0 {
			crc1 = gf2Times(&even, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
		gf2Square(&odd, &even)
		if len2&1 != 0 {
			crc1 = gf2Times(&odd, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

// gf2Times is the 32×32 GF(2) matrix mat times vec.
func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2Square sets square to mat².
func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}
