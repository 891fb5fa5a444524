package report

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// crc32Combine gives the CRC-32 of the two pieces joined, wherever the
// cut falls: empty pieces, one byte, a piece longer than 2^k bytes for
// several k.
func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 200_003)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, cut := range []int{0, 1, 2, 3, 7, 8, 255, 256, 4096, 65_537, 199_999, len(data) - 1, len(data)} {
		a, b := data[:cut], data[cut:]
		got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b)))
		if want := crc32.ChecksumIEEE(data); got != want {
			t.Errorf("cut at %d: %08x, want %08x", cut, got, want)
		}
	}
}

// A part joined from its deflated head, rows deflated ahead (over many
// of pflate's chunks, or none) and tail reads back, through archive/zip
// (which checks the CRC-32 and the sizes), as the three pieces' bytes.
func TestDeflatedRowsJoin(t *testing.T) {
	var rows strings.Builder
	for i := 0; rows.Len() < 5<<20; i++ {
		rows.WriteString(`<row r="`)
		rows.WriteString(strings.Repeat("9", i%7+1))
		rows.WriteString(`"><c t="inlineStr"><is><t>নমস্কার &amp; which country?</t></is></c></row>`)
	}
	head := []byte(`<?xml version="1.0"?><worksheet><dimension ref="A1:F9"/>`)
	tail := []byte(`<pageMargins left="0.7"/></worksheet>`)
	for _, body := range []string{"", "<sheetData/>", rows.String()} {
		d, err := newRowsDeflater()
		if err != nil {
			t.Fatal(err)
		}
		for s := body; len(s) > 0; { // writes of uneven sizes
			k := min(len(s), 1+len(s)%77_777)
			if _, err := d.Write([]byte(s[:k])); err != nil {
				t.Fatal(err)
			}
			s = s[k:]
		}
		dr, err := d.finish()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		zw := zip.NewWriter(&out)
		if err := dr.writePart(zw, "xl/worksheets/sheet2.xml", head, tail); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if dr.f != nil {
			t.Error("the rows' file was not let go")
		}
		zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("%d bytes of rows: %v", len(body), err)
		}
		if want := string(head) + body + string(tail); string(got) != want {
			t.Errorf("%d bytes of rows: read back %d bytes, want %d", len(body), len(got), len(want))
		}
	}
}
