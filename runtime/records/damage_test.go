package records

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// damagedDir is a directory with one sealed segment of n records (several
// frames) and its lean copy, with flip applied to the segment's bytes
// (given its frames' offsets); without the lean copy unless lean.
func damagedDir(t *testing.T, n int, lean bool, flip func(seg []byte, frames []int)) string {
	t.Helper()
	dir := t.TempDir()
	writeRecs(t, dir, 1<<30, 1, recs(n))
	p := filepath.Join(dir, SegmentName(1))
	seg, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fs, ok, err := framesOf(seg)
	if err != nil || !ok || len(fs) < 3 {
		t.Fatalf("%d frames (%v, %v): want a segment of several", len(fs), ok, err)
	}
	if _, err := os.Stat(leanName(p)); err != nil {
		t.Fatalf("no lean copy: %v", err)
	}
	var starts []int
	at := 0
	for _, f := range fs {
		starts = append(starts, at)
		at += len(f.data)
	}
	flip(seg, starts)
	if err := os.WriteFile(p, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	if !lean {
		os.Remove(leanName(p))
	}
	return dir
}

// A flipped byte in a sealed segment loses no record that can be read:
// every reader reads the lines of the frames that decode (and of a
// damaged frame, those before the damage whose seal holds), never a
// wrong answer; the scoring reads every record from an intact lean copy;
// the findings name the file and what was lost (exactly, by the lean
// copy); a resume's scan leaves out only the lost keys, and Commit keeps
// the damaged file in the archive and replaces the segment by the records
// read, after which the directory reads whole.
func TestDamagedSegmentReadsWhatCanBeRead(t *testing.T) {
	const n = 4500
	want := map[string]string{}
	for _, r := range recs(n) {
		want[r.Key] = r.Response
	}
	cases := []struct {
		name    string
		flip    func(seg []byte, frames []int)
		damaged bool // a frame does not decode
		loses   bool // some records cannot be read from the segment itself
	}{
		{"compressed data of the second frame", func(seg []byte, f []int) { seg[(f[1]+f[2])/2] ^= 0x5a }, true, true},
		{"magic number of the second frame", func(seg []byte, f []int) { seg[f[1]+1] ^= 0xff }, true, true},
		// The frame's blocks decode: every line is there, and verified.
		{"content size in the header of the third frame", func(seg []byte, f []int) { seg[f[2]+5] ^= 0x01 }, true, false},
		{"digest in the seal frame", func(seg []byte, _ []int) { seg[len(seg)-10] ^= 0x01 }, false, false},
		{"magic number of the seal frame", func(seg []byte, _ []int) { seg[len(seg)-segSealFrame] ^= 0x01 }, false, false},
	}
	for _, c := range cases {
		for _, lean := range []bool{true, false} {
			t.Run(c.name+map[bool]string{true: " with its lean copy", false: " without a lean copy"}[lean], func(t *testing.T) {
				dir := damagedDir(t, n, lean, c.flip)
				check := func(what string, r *engine.Record) {
					if w, ok := want[r.Key]; !ok || w != r.Response {
						t.Fatalf("%s: a wrong record: %s %q", what, r.Key, r.Response)
					}
				}
				// The plain reader.
				read := 0
				if err := Read(dir, func(r *engine.Record) error { check("Read", r); read++; return nil }); err != nil {
					t.Fatalf("Read: %v", err)
				}
				if !c.loses && read != n {
					t.Errorf("Read: %d records of %d", read, n)
				}
				if c.loses && (read == n || read < n/3) {
					t.Errorf("Read: %d records of %d from a segment damaged in one frame", read, n)
				}
				// The scoring's reader.
				for _, withReq := range []bool{false, true} {
					out, _, d, _, err := Unique(context.Background(), dir, StreamOptions{WithRequests: withReq}, func(_ int, r *engine.Record) (*engine.Record, error) {
						c := *r
						return &c, nil
					})
					if err != nil {
						t.Fatalf("Unique: %v", err)
					}
					for _, r := range out {
						check("Unique", r)
					}
					fromLean := lean && !withReq && c.damaged
					switch {
					case !c.damaged || fromLean:
						if len(out) != n {
							t.Errorf("Unique (requests %t): %d records of %d", withReq, len(out), n)
						}
					default:
						if len(out) != read {
							t.Errorf("Unique (requests %t): %d records, Read %d", withReq, len(out), read)
						}
					}
					if !c.damaged {
						if len(d.Damaged) != 0 || len(d.Edited) != 0 {
							t.Errorf("findings: %q", d.Notes())
						}
						continue
					}
					notes := strings.Join(d.Notes(), "\n")
					if len(d.Damaged) != 1 || !strings.Contains(notes, SegmentName(1)+" is damaged") {
						t.Fatalf("findings (requests %t): %q", withReq, notes)
					}
					dm := d.Damaged[0]
					if fromLean != (dm.Lean != "") || dm.Kept != read {
						t.Errorf("damage (requests %t): %+v, Read %d", withReq, dm, read)
					}
					if lean && (!dm.LostKnown || dm.Lost != n-read || c.loses != strings.Contains(notes, "record(s) are lost: line ")) {
						t.Errorf("damage with the lean copy: %+v: %s", dm, notes)
					}
					if !lean && (dm.LostKnown || !strings.Contains(notes, "bytes ")) {
						t.Errorf("damage without the lean copy: %+v: %s", dm, notes)
					}
				}
				// A resume: the lost keys only are left to ask; the
				// damaged file is kept, the segment replaced.
				s, err := ScanDir(dir, "")
				if err != nil {
					t.Fatalf("ScanDir: %v", err)
				}
				if s.Done.Len() != read || len(s.Report.Damaged) != map[bool]int{true: 1, false: 0}[c.damaged] {
					t.Fatalf("scan: %d keys done (Read %d), %d damaged", s.Done.Len(), read, len(s.Report.Damaged))
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
				if err != nil || again.Done.Len() != read || len(again.Report.Damaged) != 0 || again.EditedError() != nil {
					t.Errorf("after Commit: %v, %d keys done, want %d", err, again.Done.Len(), read)
				}
			})
		}
	}
}
