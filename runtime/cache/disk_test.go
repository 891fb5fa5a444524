package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// want records what a store should answer: the last value put under each
// key.
type want map[int]string

func (w want) put(t *testing.T, s *Store, i int, v string) {
	t.Helper()
	if err := s.Put(key(i), []byte(v)); err != nil {
		t.Fatal(err)
	}
	w[i] = v
}

func (w want) check(t *testing.T, s *Store, when string) {
	t.Helper()
	for i, v := range w {
		got, ok, err := s.Get(key(i))
		if err != nil || !ok || string(got) != v {
			t.Fatalf("%s: Get(%d) = %q, %v, %v; want %q", when, i, got, ok, err, v)
		}
	}
	if _, ok, _ := s.Get(key(-1)); ok {
		t.Fatalf("%s: found a key never stored", when)
	}
	if n := s.Len(); n != len(w) {
		t.Fatalf("%s: Len %d, want %d", when, n, len(w))
	}
}

// The memory index never holds more than memMax entries: past that they
// are merged into the table on disk, and every answer stays found, the
// last of a key winning, before and after a reopen.
func TestMergesBoundMemory(t *testing.T) {
	dir := t.TempDir()
	const memMax, n = 100, 1500
	s, _, err := openWith(dir, memMax)
	if err != nil {
		t.Fatal(err)
	}
	w := want{}
	for i := range n {
		w.put(t, s, i, fmt.Sprintf(`{"text":"a%d"}`, i))
		if i%3 == 0 { // a key stored again, often after its first entry was merged
			w.put(t, s, i/2, fmt.Sprintf(`{"text":"b%d"}`, i))
		}
		if s.mem.n >= memMax {
			t.Fatalf("after %d puts the memory index holds %d entries", i+1, s.mem.n)
		}
	}
	if s.disk.h.n < n-memMax {
		t.Fatalf("the table holds %d entries, want about %d", s.disk.h.n, n)
	}
	w.check(t, s, "open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, rep, err := openWith(dir, memMax)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, _ := os.Stat(filepath.Join(dir, FileName))
	if rep.Entries != n || rep.String() != "" || s.cover.covered != st.Size() || s.mem.n != 0 {
		t.Fatalf("reopened: %+v, covering %d of %d bytes, %d in memory", rep, s.cover.covered, st.Size(), s.mem.n)
	}
	w.check(t, s, "reopened")
}

// Open reads the log only past the index's cover: lines appended after the
// last merge are indexed from the log, and shadow the table's entries.
func TestOpenIndexesThePastCover(t *testing.T) {
	dir := t.TempDir()
	w := want{}
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		w.put(t, s, i, fmt.Sprintf(`{"text":"a%d"}`, i))
	}
	s.Close() // merged: 200 entries on disk
	s, _, _ = Open(dir)
	w.put(t, s, 3, `{"text":"newer"}`)
	w.put(t, s, 1000, `{"text":"new"}`)
	// Killed: no Close, no merge; the log has two lines past the cover
	// (too few for Open to merge them: fewer than 1/32 of the table's).
	s.f.Close()
	s.disk.close()
	s, rep, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.disk.h.n != 200 || s.mem.n != 2 || rep.Entries != 201 {
		t.Fatalf("%d on disk, %d in memory, %d entries", s.disk.h.n, s.mem.n, rep.Entries)
	}
	w.check(t, s, "reopened")
}

// An index that does not check out against the log, or against itself,
// is rebuilt from the log, with a message; no answer is lost or wrong.
func TestBadIndexIsRebuilt(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		msg    string
	}{
		{"missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, IndexName)) }, ""},
		{"not an index", func(t *testing.T, dir string) { writeFile(t, dir, IndexName, strings.Repeat("hello\n", 100)) }, "not an index file"},
		{"header damaged", func(t *testing.T, dir string) { flipByte(t, dir, IndexName, 20) }, "header's checksum"},
		{"entry damaged", func(t *testing.T, dir string) { flipByte(t, dir, IndexName, idxHeaderLen+5*idxEntryLen+17) }, "checksum"},
		{"cut short", func(t *testing.T, dir string) { truncate(t, dir, IndexName, -idxEntryLen) }, "not as long"},
		{"log cut short", func(t *testing.T, dir string) {
			truncate(t, dir, FileName, -200)
		}, "covers"},
		{"log replaced", func(t *testing.T, dir string) {
			// The same length, another last line: the index is another log's.
			b := readFile(t, dir, FileName)
			lines := strings.SplitAfter(string(b), "\n")
			last := lines[len(lines)-2]
			lines[len(lines)-2] = fmt.Sprintf("%x", key(-7)) + last[64:]
			writeFile(t, dir, FileName, strings.Join(lines, ""))
		}, "last line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, _, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			w := want{}
			for i := range 400 {
				w.put(t, s, i, fmt.Sprintf(`{"text":"v%d"}`, i))
			}
			s.Close()
			c.damage(t, dir)
			switch c.name {
			case "log cut short": // the lines cut are gone for good
				s, rep, err := Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(rep.Index, c.msg) || rep.DroppedTail != 1 {
					t.Fatalf("report %+v", rep)
				}
				for i := range 400 {
					got, ok, err := s.Get(key(i))
					if err != nil || ok && string(got) != w[i] {
						t.Fatalf("Get(%d) = %q, %v, %v", i, got, ok, err)
					}
				}
				if n := s.Len(); n < 390 || n >= 400 {
					t.Fatalf("Len %d after cutting 200 bytes", n)
				}
				s.Close()
				return
			case "log replaced":
				w[-7] = w[399]
				delete(w, 399)
			}
			s, rep, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if c.msg == "" && rep.Index != "" || !strings.Contains(rep.Index, c.msg) || c.msg != "" && !strings.Contains(rep.String(), "rebuilt from the log") {
				t.Fatalf("report %+v, want a message with %q", rep, c.msg)
			}
			w.check(t, s, "rebuilt")
			if s.cover.covered == 0 || s.disk.h.n != int64(len(w)) {
				t.Fatalf("after the rebuild: %d on disk, cover %d", s.disk.h.n, s.cover.covered)
			}
		})
	}
}

// Two stores on one directory, as two processes: each sees its own
// entries; after both close, one Open sees all of them, whichever merged
// last.
func TestTwoWritersMerge(t *testing.T) {
	dir := t.TempDir()
	a, _, err := openWith(dir, 50)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := openWith(dir, 70)
	if err != nil {
		t.Fatal(err)
	}
	w := want{}
	for i := range 600 {
		st := a
		if i%3 == 0 {
			st = b
		}
		w.put(t, st, i, fmt.Sprintf(`{"text":"v%d"}`, i))
	}
	if _, ok, _ := a.Get(key(0)); ok {
		t.Error("a sees b's entry, put after a opened")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	s, rep, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep.String() != "" {
		t.Fatalf("report %+v", rep)
	}
	w.check(t, s, "reopened")
}

// Two keys with the same 16-byte fragment (never met in SHA-256 keys) take
// one entry: the earlier then answers as a miss, never with the later's
// value.
func TestSharedFragmentMisses(t *testing.T) {
	dir := t.TempDir()
	a := key(1)
	b := a
	b[31] ^= 1
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Put(a, []byte(`"a"`))
	s.Put(b, []byte(`"b"`))
	if v, ok, err := s.Get(a); ok || err != nil {
		t.Fatalf("Get(a) = %s, %v, %v; want a miss", v, ok, err)
	}
	if v, ok, _ := s.Get(b); !ok || string(v) != `"b"` {
		t.Fatalf("Get(b) = %s, %v", v, ok)
	}
}

// A merge that cannot write the index leaves the store working from
// memory; Close reports it, and the next Open finds everything in the log.
func TestMergeFailureKeepsAnswers(t *testing.T) {
	dir := t.TempDir()
	s, _, err := openWith(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	s.idxPath = filepath.Join(dir, "missing", IndexName)
	w := want{}
	for i := range 100 {
		w.put(t, s, i, fmt.Sprintf(`{"text":"v%d"}`, i))
	}
	w.check(t, s, "after a failed merge")
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "cache index") {
		t.Fatalf("Close: %v", err)
	}
	s, rep, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep.Entries != 100 {
		t.Fatalf("report %+v", rep)
	}
	w.check(t, s, "reopened")
}

// A merge killed before its rename leaves a temporary file, which the next
// Open with the store to itself removes.
func TestStrayTempRemoved(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 5)
	stray := filepath.Join(dir, "."+IndexName+"-123.tmp")
	writeFile(t, dir, filepath.Base(stray), "partial")
	s, rep, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(stray); !os.IsNotExist(err) || rep.Entries != 5 {
		t.Fatalf("stray file: %v; report %+v", err, rep)
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, dir, name, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, dir, name string, at int) {
	t.Helper()
	b := readFile(t, dir, name)
	b[at] ^= 0x40
	writeFile(t, dir, name, string(b))
}

func truncate(t *testing.T, dir, name string, by int64) {
	t.Helper()
	p := filepath.Join(dir, name)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, st.Size()+by); err != nil {
		t.Fatal(err)
	}
}

// An index with any one byte flipped (its magic, its counts, its cover,
// the last line's place and key, its checksums, its entries) is rebuilt
// from the log, saying so, and every answer is found as it was stored.
func TestIndexFlippedByte(t *testing.T) {
	dir := t.TempDir()
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := want{}
	for i := range 300 {
		w.put(t, s, i, fmt.Sprintf(`{"text":"v%d"}`, i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	orig := readFile(t, dir, IndexName)
	cases := []int{0, 7, 8, 16, 24, 32, 40, 48, 79, 80, 84, 87, idxHeaderLen, len(orig) - 1}
	for at := 0; at < len(orig); at += len(orig) / 97 {
		cases = append(cases, at)
	}
	for _, at := range cases {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			b := []byte(string(orig))
			b[at] ^= 0x01
			writeFile(t, dir, IndexName, string(b))
			s, rep, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if rep.Index == "" || !strings.Contains(rep.String(), "rebuilt from the log") {
				t.Fatalf("byte %d of %d flipped: report %+v, want the index rebuilt", at, len(orig), rep)
			}
			w.check(t, s, "rebuilt")
		})
	}
}
