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
	w := &rowsDeflater{d: &deflatedRows{f: f}, file: bufio.NewWriterSize(f, 64<<10)}
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
	return writeJoined(zw, name, []piece{{raw: head}, {rows: d}, {raw: tail}})
}

// piece is a piece of a zip entry: bytes (raw), or bytes deflated ahead
// (rows).
type piece struct {
	raw  []byte
	rows *deflatedRows
}

// writeJoined writes the zip entry name holding its pieces in order, as
// one deflate stream, into zw: each raw piece deflated on its own (in a
// sync flush; the last in the final block), each deflated piece copied
// from its file, which is closed.
func writeJoined(zw *zip.Writer, name string, pieces []piece) error {
	defer func() {
		for _, p := range pieces {
			p.rows.close()
		}
	}()
	if len(pieces) == 0 || pieces[len(pieces)-1].rows != nil {
		pieces = append(pieces, piece{}) // the final block
	}
	var crc uint32
	var size, raw uint64
	zs := make([][]byte, len(pieces))
	for i, p := range pieces {
		if p.rows != nil {
			if p.rows.f == nil {
				return errors.New("the rows were already written")
			}
			crc = crc32Combine(crc, p.rows.crc, p.rows.raw)
			size, raw = size+uint64(p.rows.size), raw+uint64(p.rows.raw)
			continue
		}
		var out bytes.Buffer
		fw, err := flate.NewWriter(&out, zipLevel)
		if err != nil {
			return err
		}
		if _, err := fw.Write(p.raw); err != nil {
			return err
		}
		if i == len(pieces)-1 {
			err = fw.Close()
		} else {
			err = fw.Flush()
		}
		if err != nil {
			return err
		}
		zs[i] = out.Bytes()
		crc = crc32Combine(crc, crc32.ChecksumIEEE(p.raw), int64(len(p.raw)))
		size, raw = size+uint64(len(zs[i])), raw+uint64(len(p.raw))
	}
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64: size, UncompressedSize64: raw})
	if err != nil {
		return err
	}
	for i, p := range pieces {
		if p.rows == nil {
			if _, err := w.Write(zs[i]); err != nil {
				return err
			}
			continue
		}
		if _, err := io.Copy(w, io.NewSectionReader(p.rows.f, 0, p.rows.size)); err != nil {
			return fmt.Errorf("copying a sheet's rows: %w", err)
		}
	}
	return nil
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
