package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/parquet-go/parquet-go/encoding/thrift"
)

// damagedDir is a directory with one sealed segment of n records in row
// groups of groupRows, with flip applied to the segment's bytes (given
// its footer, to find its column chunks).
func damagedDir(t *testing.T, n int, groupRows int64, flip func(seg []byte, chunk func(group int, column string) (off, size int64))) string {
	t.Helper()
	dir := t.TempDir()
	writeRecs(t, dir, 0, 0, recs(n))
	live := filepath.Join(dir, FileName)
	b, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, SegmentName(1))
	if err := writeSegment(p, live, groupRows, func(add func([]byte) error) error {
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if len(l) > 0 {
				if err := add(bytes.TrimSuffix(l, []byte("\n"))); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	os.Remove(live)
	seg, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := footer(bytes.NewReader(seg), int64(len(seg)))
	if err != nil || len(md.RowGroups) < 3 {
		t.Fatalf("%d row groups (%v): want a segment of several", len(md.RowGroups), err)
	}
	flip(seg, func(g int, column string) (int64, int64) {
		for i := range md.RowGroups[g].Columns {
			if c := &md.RowGroups[g].Columns[i]; columnName(c) == column {
				return chunkRange(c)
			}
		}
		t.Fatalf("no column %s", column)
		return 0, 0
	})
	if err := os.WriteFile(p, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A damaged sealed segment loses no record that can be read: every reader
// reads the rows of the row groups that decode (each line of a row group
// whose digest does not hold checked by its own seal), never a wrong
// answer; the findings name the file and what was lost (the rows of a
// row group that does not decode, by line and key); a resume's scan
// leaves out only the lost keys, and Commit keeps the damaged file in the
// archive and replaces the segment by the records read, after which the
// directory reads whole.
func TestDamagedSegmentReadsWhatCanBeRead(t *testing.T) {
	const n, group = 3500, 1000
	want := map[string]string{}
	for _, r := range recs(n) {
		want[r.Key] = r.Response
	}
	cases := []struct {
		name    string
		flip    func(seg []byte, chunk func(int, string) (int64, int64))
		read    int    // records read
		damaged bool   // some row group does not decode
		note    string // in the damage's note
	}{
		{"the responses of the second row group", func(seg []byte, chunk func(int, string) (int64, int64)) {
			off, size := chunk(1, "response")
			clear(seg[off : off+size]) // a bad sector
		}, n - group, true, "record(s) are lost: line 1001 (key e|m|1000|||||)"},
		{"the keys of the third row group", func(seg []byte, chunk func(int, string) (int64, int64)) {
			off, size := chunk(2, "key")
			clear(seg[off : off+size])
		}, n - group, true, "record(s) are lost: line 2001, line 2002"},
		{"the footer", func(seg []byte, _ func(int, string) (int64, int64)) { seg[len(seg)-1] ^= 0xff }, 0, true, "an unknown number of records are lost"},
		{"the last row group left out of the footer", func(seg []byte, _ func(int, string) (int64, int64)) {
			md, _, err := footer(bytes.NewReader(seg), int64(len(seg)))
			if err != nil {
				panic(err)
			}
			md.NumRows -= md.RowGroups[3].NumRows
			md.RowGroups = md.RowGroups[:3]
			b, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
			if err != nil {
				panic(err)
			}
			copy(seg[len(seg)-8-len(b):], b) // the new footer ends where the old one did
			binary.LittleEndian.PutUint32(seg[len(seg)-8:], uint32(len(b)))
		}, 3 * group, true, "its footer counts 3000 rows in 3 row group(s), its digest 3500 in 4"},
		// The rows decode: every line is there, each verified by its seal.
		{"a byte of the responses of the second row group, the values unchanged", func(seg []byte, chunk func(int, string) (int64, int64)) {
			off, size := chunk(1, "response")
			seg[off+size/2] ^= 0x5a
		}, n, false, ""},
		{"the digest in the footer", func(seg []byte, _ func(int, string) (int64, int64)) {
			i := bytes.LastIndex(seg, []byte(`"response":"`)) + len(`"response":"`)
			seg[i] = map[bool]byte{true: '1', false: '0'}[seg[i] == '0']
		}, n, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := damagedDir(t, n, group, c.flip)
			check := func(what string, r *engine.Record) {
				if w, ok := want[r.Key]; !ok || w != r.Response {
					t.Fatalf("%s: a wrong record: %s %q", what, r.Key, r.Response)
				}
			}
			read := 0
			if err := Read(dir, func(r *engine.Record) error { check("Read", r); read++; return nil }); err != nil {
				t.Fatalf("Read: %v", err)
			}
			if read != c.read {
				t.Errorf("Read: %d records, want %d", read, c.read)
			}
			for _, o := range []StreamOptions{{}, {WithRequests: true}, {TextsOnly: true}} {
				out, _, d, _, err := Unique(context.Background(), dir, o, func(_ int, r *engine.Record) (*engine.Record, error) {
					c := *r
					return &c, nil
				})
				if err != nil {
					t.Fatalf("Unique: %v", err)
				}
				for _, r := range out {
					check("Unique", r)
				}
				if len(out) != c.read || len(d.Edited) != 0 {
					t.Errorf("Unique %+v: %d records, want %d; %q", o, len(out), c.read, d.Notes())
				}
				if !c.damaged {
					if len(d.Damaged) != 0 {
						t.Errorf("findings: %q", d.Notes())
					}
					continue
				}
				notes := strings.Join(d.Notes(), "\n")
				if len(d.Damaged) != 1 || !strings.Contains(notes, SegmentName(1)+" is damaged") || !strings.Contains(notes, c.note) || d.Damaged[0].Kept != c.read {
					t.Fatalf("findings %+v: %q", o, notes)
				}
			}
			s, err := ScanDir(dir, "")
			if err != nil {
				t.Fatalf("ScanDir: %v", err)
			}
			if s.Done.Len() != c.read || len(s.Report.Damaged) != map[bool]int{true: 1, false: 0}[c.damaged] {
				t.Fatalf("scan: %d keys done (want %d), %d damaged", s.Done.Len(), c.read, len(s.Report.Damaged))
			}
			if err := s.EditedError(); err != nil {
				t.Error(err)
			}
			if !c.damaged {
				return
			}
			lk, err := LockDir(dir, Exclusive)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = s.Commit(nil, "")
			lk.Unlock()
			if err != nil {
				t.Fatalf("Commit: %v", err)
			}
			kept, _ := filepath.Glob(filepath.Join(dir, ArchiveDir, "damaged-*"+SegmentName(1)))
			if len(kept) != 1 || len(s.Report.KeptDamaged) != 1 || !strings.Contains(strings.Join(s.Report.Messages(), "\n"), kept[0]) {
				t.Errorf("the damaged file is not kept: %v %q", kept, s.Report.Messages())
			}
			again, err := ScanDir(dir, "")
			if err != nil || again.Done.Len() != c.read || len(again.Report.Damaged) != 0 || again.EditedError() != nil {
				t.Errorf("after Commit: %v, %d keys done, want %d", err, again.Done.Len(), c.read)
			}
		})
	}
}
