package records

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// A torn last line of records.jsonl (cut mid-line, as a kill or a full
// disk leaves it) is left out by every reader, which reads the whole
// lines before it; Unique and ReadUnique name it in their findings. A
// last line that is whole but lacks only its newline is torn too (the
// Writer ends every record with one; a resume cuts it). A segment before
// it is read as it is.
func TestTornTailLeftOut(t *testing.T) {
	const n = 40
	cases := []struct {
		name  string
		segs  bool
		cut   func(last string) string // what is left of the last line
		reads int                      // whole records read
		torn  bool
	}{
		{"cut mid-line", false, func(l string) string { return l[:len(l)/2] }, n - 1, true},
		{"cut after one byte", false, func(l string) string { return l[:1] }, n - 1, true},
		{"only its newline missing", false, func(l string) string { return strings.TrimSuffix(l, "\n") }, n - 1, true},
		{"whole", false, func(l string) string { return l }, n, false},
		{"cut mid-line after segments", true, func(l string) string { return l[:len(l)/3] }, n - 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.segs {
				writeRecs(t, dir, 2<<10, -1, recs(n)[:n-10])
				writeRecs(t, dir, 0, -1, recs(n)[n-10:])
				if ns := names(t, dir); len(ns) < 2 {
					t.Fatalf("files %v: want segments", ns)
				}
			} else {
				writeRecs(t, dir, 0, -1, recs(n))
			}
			p := filepath.Join(dir, FileName)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			ls := strings.SplitAfter(string(b), "\n")
			ls = ls[:len(ls)-1] // the empty string after the last newline
			last := len(ls)
			ls[last-1] = c.cut(ls[last-1])
			if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			read := 0
			if err := Read(dir, func(*engine.Record) error { read++; return nil }); err != nil || read != c.reads {
				t.Errorf("Read: %d records, %v; want %d", read, err, c.reads)
			}
			out, d, err := ReadUnique(dir, "", false)
			if err != nil || len(out) != c.reads || (d.Torn != nil) != c.torn {
				t.Errorf("ReadUnique: %d records, torn %+v, %v", len(out), d.Torn, err)
			}
			for _, withReq := range []bool{false, true} {
				got, _, d, lines, err := Unique(context.Background(), dir, StreamOptions{WithRequests: withReq}, func(_ int, r *engine.Record) (string, error) { return r.Key, nil })
				if err != nil || len(got) != c.reads || lines != c.reads || (d.Torn != nil) != c.torn {
					t.Fatalf("Unique: %d records, %d lines, torn %+v, %v", len(got), lines, d.Torn, err)
				}
				if c.torn {
					notes := strings.Join(d.Notes(), "\n")
					if want := "line " + strconv.Itoa(last) + " is an incomplete record"; !strings.Contains(notes, want) || !strings.Contains(notes, "not read") {
						t.Errorf("notes do not say %q: %s", want, notes)
					}
				}
			}
			each := 0
			if _, err := Each(context.Background(), dir, StreamOptions{}, func(_ int, r *engine.Record) (int, error) { return 0, nil },
				func(int, string, bool, int) error { each++; return nil }); err != nil || each != c.reads {
				t.Errorf("Each: %d records, %v", each, err)
			}
			s, err := ScanDir(dir, "")
			if err != nil || s.Done.Len() != c.reads || s.Report.TornTail != c.torn {
				t.Errorf("ScanDir: %v, %d done, torn %t", err, s.Done.Len(), s.Report.TornTail)
			}
		})
	}
}
