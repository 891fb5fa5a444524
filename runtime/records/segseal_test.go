package records

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/klauspost/compress/zstd"
)

// Each segment the Writer seals ends in its seal, which zstd's own tool
// skips; a segment whose digest no longer holds has every line's seal
// checked, so an edited line is still named, and one whose lines all
// hold reads in full.
func TestSegmentSeal(t *testing.T) {
	dir := sealedDir(t, 150)
	ns := names(t, dir)
	want := content(t, dir)
	for _, n := range ns {
		if n == FileName {
			continue
		}
		b := must(os.ReadFile(filepath.Join(dir, n)))
		fh, _ := os.Open(filepath.Join(dir, n))
		ok, err := segmentSealed(fh, int64(len(b)))
		fh.Close()
		if err != nil || !ok || !bytes.HasPrefix(b[len(b)-segSealFrame+8:], []byte(segSealPrefix)) {
			t.Fatalf("%s: sealed %v, %v", n, ok, err)
		}
	}
	if zstdcat, err := exec.LookPath("zstd"); err == nil {
		var all strings.Builder
		for _, n := range ns {
			if n == FileName {
				all.Write(must(os.ReadFile(filepath.Join(dir, n))))
				continue
			}
			out, err := exec.Command(zstdcat, "-dc", filepath.Join(dir, n)).Output()
			if err != nil {
				t.Fatalf("zstd -dc %s: %v", n, err)
			}
			all.Write(out)
		}
		if all.String() != want {
			t.Errorf("zstd -dc gives other bytes than the reader (%d vs %d)", all.Len(), len(want))
		}
	}
	read := func(dir string) (int, []string) {
		t.Helper()
		out, _, d, _, err := Unique(context.Background(), dir, StreamOptions{Experiment: "e"}, func(_ int, r *engine.Record) (string, error) { return r.Key, nil })
		if err != nil {
			t.Fatal(err)
		}
		var at []string
		for _, f := range d.Edited {
			at = append(at, f.At)
		}
		s, err := ScanDir(dir, "e")
		if err != nil {
			t.Fatal(err)
		}
		var sat []string
		for _, f := range s.Edited {
			sat = append(sat, f.At)
		}
		if strings.Join(at, ",") != strings.Join(sat, ",") {
			t.Errorf("Unique finds edits at %v, ScanDir at %v", at, sat)
		}
		return len(out), at
	}
	if n, at := read(dir); n != 150 || len(at) != 0 {
		t.Fatalf("sealed: %d records, edited %v", n, at)
	}

	cases := []struct {
		name   string
		tamper func(t *testing.T, path string)
		n      int
		edited string
	}{
		{"a line edited, the old seal kept", func(t *testing.T, path string) {
			b := must(os.ReadFile(path))
			frame := b[len(b)-segSealFrame:]
			dec, _ := zstd.NewReader(nil)
			plain, err := dec.DecodeAll(b[:len(b)-segSealFrame], nil)
			if err != nil {
				t.Fatal(err)
			}
			ls := strings.SplitAfter(string(plain), "\n")
			ls[1] = strings.Replace(ls[1], `"response":"`, `"response":"gold `, 1)
			enc, _ := zstd.NewWriter(nil)
			out := append(enc.EncodeAll([]byte(strings.Join(ls, "")), nil), frame...)
			os.WriteFile(path, out, 0o644)
		}, 149, SegmentName(2) + " line 2"},
		{"the digest damaged, every line whole", func(t *testing.T, path string) {
			b := must(os.ReadFile(path))
			b[len(b)-2] ^= 1 // a hex digit of the digest
			os.WriteFile(path, b, 0o644)
		}, 150, ""},
		{"the seal cut off", func(t *testing.T, path string) {
			b := must(os.ReadFile(path))
			os.WriteFile(path, b[:len(b)-segSealFrame], 0o644)
		}, 150, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			for _, n := range ns {
				os.WriteFile(filepath.Join(d, n), must(os.ReadFile(filepath.Join(dir, n))), 0o644)
			}
			c.tamper(t, filepath.Join(d, SegmentName(2)))
			fh, _ := os.Open(filepath.Join(d, SegmentName(2)))
			st, _ := fh.Stat()
			ok, _ := segmentSealed(fh, st.Size())
			fh.Close()
			if ok {
				t.Fatal("the tampered segment reads as sealed")
			}
			n, at := read(d)
			if n != c.n || strings.Join(at, ",") != c.edited {
				t.Errorf("%d records, edited %v; want %d, %q", n, at, c.n, c.edited)
			}
		})
	}

	// A live file with an edited line seals into a segment without a seal:
	// the edit is still found after the seal.
	live := t.TempDir()
	writeRecs(t, live, 0, 0, recs(20))
	p := filepath.Join(live, FileName)
	b := must(os.ReadFile(p))
	os.WriteFile(p, bytes.Replace(b, []byte(`"response":"`), []byte(`"response":"x`), 1), 0o644)
	lk, err := LockDir(live, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := Seal(lk, live, 0)
	lk.Unlock()
	if err != nil || seg != SegmentName(1) {
		t.Fatalf("seal: %q %v", seg, err)
	}
	fh, _ := os.Open(filepath.Join(live, seg))
	st, _ := fh.Stat()
	if ok, _ := segmentSealed(fh, st.Size()); ok {
		t.Error("a segment with an edited line carries a seal")
	}
	fh.Close()
	if n, at := read(live); n != 19 || strings.Join(at, ",") != SegmentName(1)+" line 1" {
		t.Errorf("sealed with an edited line: %d records, edited %v", n, at)
	}
}
