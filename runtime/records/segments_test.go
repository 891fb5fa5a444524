package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// segRec is record i of the segment tests: a request body with Hindi,
// escapes and spacing the encoder would change if it re-encoded it.
func segRec(i int, status string) *engine.Record {
	body := fmt.Sprintf(`{"model":"m",  "prompt":"प्रश्न %d \u00e9 \"q\"\n<b>","max_tokens":10}`, i)
	return &engine.Record{Key: fmt.Sprintf("e|m|%d|||||", i), Status: status, Response: strings.Repeat("उत्तर ", 1+i%5),
		LatencyMS: float64(i) / 3, Request: json.RawMessage(body), RequestSHA256: engine.RequestDigest([]byte(body))}
}

// writeRecs writes recs into dir with a writer that holds dir's lock and
// seals at sealBytes (0: a Writer without the lock, which never seals).
func writeRecs(t *testing.T, dir string, sealBytes, closeSeal int64, recs []*engine.Record) *Writer {
	t.Helper()
	var w *Writer
	var err error
	if sealBytes == 0 {
		w, err = Create(dir)
	} else {
		lk, lerr := LockDir(dir, Exclusive)
		if lerr != nil {
			t.Fatal(lerr)
		}
		defer lk.Unlock()
		w, err = CreateWith(dir, Options{Lock: lk, SealBytes: sealBytes, CloseSealBytes: closeSeal})
	}
	if err != nil {
		t.Fatal(err)
	}
	w.FlushEvery = 0
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w
}

// content is the records' lines of dir, in logical order, decompressed.
func content(t *testing.T, dir string) string {
	t.Helper()
	d, err := listFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range d.files {
		r, err := f.open()
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(&b, r)
		r.Close()
	}
	return b.String()
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	fs, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, filepath.Base(f))
	}
	return out
}

func recs(n int) []*engine.Record {
	var out []*engine.Record
	for i := range n {
		out = append(out, segRec(i, engine.StatusOK))
	}
	return out
}

// The Writer seals at its threshold and at Close, and what the files hold,
// decompressed in their order, is byte for byte what a plain writer
// writes: every request body exactly as sent.
func TestSealing(t *testing.T) {
	cases := []struct {
		name            string
		seal, closeSeal int64
		n               int
		segments        int  // at least this many
		live            bool // records.jsonl remains
	}{
		{"never without the lock", 0, 0, 200, 0, true},
		{"at the threshold", 8 << 10, -1, 200, 5, true},
		{"and at close", 8 << 10, 1, 200, 6, false},
		{"small run stays plain", DefaultSealBytes, DefaultCloseSealBytes, 50, 0, true},
		{"segments of a thousand records", 512 << 10, -1, 3000, 2, true},
	}
	plain := t.TempDir()
	writeRecs(t, plain, 0, 0, recs(3000))
	want, _ := os.ReadFile(filepath.Join(plain, FileName))
	var wantRecs []string // every record of the plain file, as Read gives it
	if err := Read(plain, func(r *engine.Record) error {
		b, err := json.Marshal(r)
		wantRecs = append(wantRecs, string(b))
		return err
	}); err != nil || len(wantRecs) != 3000 {
		t.Fatalf("reading the plain file: %d records, %v", len(wantRecs), err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			w := writeRecs(t, dir, c.seal, c.closeSeal, recs(c.n))
			ns := names(t, dir)
			segs := slices.DeleteFunc(slices.Clone(ns), func(s string) bool { return s == FileName })
			if len(segs) < c.segments || (c.segments == 0 && len(segs) > 0) || slices.Contains(ns, FileName) != c.live {
				t.Fatalf("files %v", ns)
			}
			if !slices.Equal(w.Sealed(), segs) {
				t.Errorf("sealed %v, files %v", w.Sealed(), segs)
			}
			for i, s := range segs {
				if s != SegmentName(i+1) {
					t.Errorf("segment %d is %s", i+1, s)
				}
				fi, _ := os.Stat(filepath.Join(dir, s))
				// (A segment of a few records is mostly its footer.)
				if c.seal >= 512<<10 && i < len(segs)-1 && fi.Size() >= c.seal/4 {
					t.Errorf("%s is %d bytes: not compressed", s, fi.Size())
				}
			}
			got := content(t, dir)
			if wantN := string(want[:lineEnd(want, c.n)]); got != wantN {
				t.Fatalf("content differs from the plain writer's (%d vs %d bytes)", len(got), len(wantN))
			}
			i := 0
			if err := Read(dir, func(r *engine.Record) error {
				if r.Key != segRec(i, "").Key || string(r.Request) != string(segRec(i, "").Request) {
					return fmt.Errorf("record %d: %s %s", i, r.Key, r.Request)
				}
				if b, _ := json.Marshal(r); string(b) != wantRecs[i] {
					return fmt.Errorf("record %d reads as\n%s\nnot as from the plain file\n%s", i, b, wantRecs[i])
				}
				i++
				return nil
			}); err != nil || i != c.n {
				t.Fatalf("read %d records, %v", i, err)
			}
			s, err := ScanDir(dir, "e")
			if err != nil || s.Done.Len() != c.n || s.Sealed != c.n || len(s.Edited) != 0 {
				t.Fatalf("scan: %v %d done, %d sealed, %v", err, s.Done.Len(), s.Sealed, s.Edited)
			}
		})
	}
}

// lineEnd is the offset after the n-th line of b.
func lineEnd(b []byte, n int) int {
	off := 0
	for range n {
		off += bytes.IndexByte(b[off:], '\n') + 1
	}
	return off
}

// sealedDir writes n records into a new directory, sealed into segments
// with the last ones left in records.jsonl, and returns it.
func sealedDir(t *testing.T, n int) string {
	dir := t.TempDir()
	writeRecs(t, dir, 8<<10, -1, recs(n))
	if ns := names(t, dir); len(ns) < 3 || ns[len(ns)-1] != FileName {
		t.Fatalf("files %v", ns)
	}
	return dir
}

// decompress writes segment seg of dir as its plain copy.
func decompress(t *testing.T, dir string, seg int) {
	t.Helper()
	f := recordFile{path: filepath.Join(dir, SegmentName(seg)), seg: seg, kind: kindPq}
	r, err := f.open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("records-%06d.jsonl", seg)), b, 0o644)
}

// Every state a crash can leave around a seal reads as the same records,
// one per key; the next writer under the lock (Prepare, then CreateWith)
// leaves compressed segments and records.jsonl only.
func TestSealCrashPoints(t *testing.T) {
	const n = 150
	cases := []struct {
		name  string
		crash func(t *testing.T, dir string, last int)
		torn  bool
	}{
		{"temporary file left behind", func(t *testing.T, dir string, last int) {
			os.WriteFile(filepath.Join(dir, "."+SegmentName(last+1)+"-123.tmp"), []byte("(partial zstd"), 0o644)
		}, false},
		{"renamed, not yet compressed", func(t *testing.T, dir string, last int) {
			decompress(t, dir, last)
			os.Remove(filepath.Join(dir, SegmentName(last)))
		}, false},
		{"renamed, no live file opened yet", func(t *testing.T, dir string, last int) {
			b, _ := os.ReadFile(filepath.Join(dir, FileName))
			os.Remove(filepath.Join(dir, FileName))
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("records-%06d.jsonl", last+1)), b, 0o644)
		}, false},
		{"compressed, plain copy not removed", func(t *testing.T, dir string, last int) {
			decompress(t, dir, last)
		}, false},
		{"torn live tail after a segment", func(t *testing.T, dir string, last int) {
			f, _ := os.OpenFile(filepath.Join(dir, FileName), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(`{"key":"e|m|torn|||||","sta`)
			f.Close()
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := sealedDir(t, n)
			before := content(t, dir)
			ns := names(t, dir)
			c.crash(t, dir, len(ns)-1)
			check := func(stage string) {
				t.Helper()
				seen := map[string]bool{}
				if err := Read(dir, func(r *engine.Record) error {
					if seen[r.Key] {
						return fmt.Errorf("%s twice", r.Key)
					}
					seen[r.Key] = true
					return nil
				}); err != nil && !c.torn {
					t.Fatalf("%s: %v", stage, err)
				}
				recs, f, err := ReadUnique(dir, "e", true)
				if err != nil && !(c.torn && stage == "after the crash") {
					t.Fatalf("%s: %v", stage, err)
				}
				if err == nil && (len(recs) != n || f.Records != 0) {
					t.Fatalf("%s: %d records, %+v", stage, len(recs), f)
				}
				s, err := ScanDir(dir, "e")
				if err != nil || s.Done.Len() != n || s.Report.DroppedDup != 0 || s.Report.TornTail != (c.torn && stage == "after the crash") {
					t.Fatalf("%s: %v, %d done, %+v", stage, err, s.Done.Len(), s.Report)
				}
			}
			check("after the crash")
			if _, rep, err := Prepare(dir); err != nil || rep.Kept != n {
				t.Fatalf("prepare: %v %+v", err, rep)
			}
			check("after prepare")
			if got := content(t, dir); got != before {
				t.Errorf("the records changed: %d bytes, %d before", len(got), len(before))
			}
			lk, err := LockDir(dir, Exclusive)
			if err != nil {
				t.Fatal(err)
			}
			w, err := CreateWith(dir, Options{Lock: lk})
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			lk.Unlock()
			es, _ := os.ReadDir(dir)
			for _, e := range es {
				if _, kind, ok := parseSegment(e.Name()); (ok && kind != kindPq) || strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("%s left behind", e.Name())
				}
			}
			check("after the next writer")
		})
	}
}

// A segment cut short on disk is never a silent loss: the scan names it
// and keeps out of Done the records it lost, and a reader reads the rest.
func TestDamagedSegment(t *testing.T) {
	dir := sealedDir(t, 100)
	p := filepath.Join(dir, SegmentName(1))
	b, _ := os.ReadFile(p)
	os.WriteFile(p, b[:len(b)/2], 0o644)
	all := 0
	if err := Read(sealedDir(t, 100), func(*engine.Record) error { all++; return nil }); err != nil {
		t.Fatal(err)
	}
	read := 0
	if err := Read(dir, func(*engine.Record) error { read++; return nil }); err != nil || read >= all {
		t.Errorf("read %d of %d: %v", read, all, err)
	}
	s, err := ScanDir(dir, "")
	if err != nil || len(s.Report.Damaged) != 1 || s.Report.Damaged[0].File != SegmentName(1) || s.Done.Len() != read {
		t.Errorf("scan: %v, %+v, %d done of %d read", err, s.Report.Damaged, s.Done.Len(), read)
	}
}

// editSegment rewrites segment seg of dir with edit applied to its lines.
func editSegment(t *testing.T, dir string, seg int, edit func([]string) []string) {
	t.Helper()
	f := recordFile{path: filepath.Join(dir, SegmentName(seg)), seg: seg, kind: kindPq}
	r, err := f.open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	ls := edit(strings.SplitAfter(strings.TrimSuffix(string(b), "\n")+"\n", "\n")[:bytes.Count(b, []byte("\n"))])
	if err := writeSegment(f.path, f.path, segGroupRows, func(add func([]byte) error) error {
		for _, l := range ls {
			if err := add([]byte(strings.TrimSuffix(l, "\n"))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Prepare drops a failed record and a duplicate that lie in sealed
// segments, rewriting only those segments; Commit archives a line of a
// segment; the other files are left byte for byte.
func TestRepairsInSegments(t *testing.T) {
	rs := recs(150)
	rs[3] = segRec(3, engine.StatusFailed)
	dir := t.TempDir()
	writeRecs(t, dir, 8<<10, -1, rs)
	ns := names(t, dir)
	// A duplicate of record 0 in segment 2.
	editSegment(t, dir, 2, func(ls []string) []string {
		b, _ := os.ReadFile(filepath.Join(dir, FileName))
		_ = b
		return append(ls, firstLine(t, dir))
	})
	snap := func() map[string]string {
		m := map[string]string{}
		for _, n := range ns {
			b, _ := os.ReadFile(filepath.Join(dir, n))
			m[n] = string(b)
		}
		return m
	}
	before := snap()
	done, rep, err := Prepare(dir)
	if err != nil || rep.DroppedFailed != 1 || rep.DroppedDup != 1 || done.Len() != 149 || done.Has(rs[3].Key) {
		t.Fatalf("prepare: %v %+v", err, rep)
	}
	after := snap()
	for _, n := range ns {
		changed := after[n] != before[n]
		if want := n == SegmentName(1) || n == SegmentName(2); changed != want {
			t.Errorf("%s changed: %v", n, changed)
		}
	}
	if got := names(t, dir); !slices.Equal(got, ns) {
		t.Errorf("files %v, were %v", got, ns)
	}
	n := 0
	Read(dir, func(r *engine.Record) error {
		if r.Status != engine.StatusOK {
			t.Errorf("%s: %s", r.Key, r.Status)
		}
		n++
		return nil
	})
	if n != 149 {
		t.Errorf("%d records", n)
	}

	// Archive line 2 (in segment 1) and the first line of records.jsonl.
	s, err := ScanDir(dir, "e")
	if err != nil {
		t.Fatal(err)
	}
	liveFirst := s.Lines - bytes.Count([]byte(after[FileName]), []byte("\n")) + 1
	want := lineOf(t, dir, 2) + lineOf(t, dir, liveFirst)
	before = snap()
	apath, moved, err := s.Commit(func(line int, _ string, _ *engine.Identity) bool { return line == 2 || line == liveFirst }, "t")
	if err != nil || moved != 2 {
		t.Fatalf("commit: %d %v", moved, err)
	}
	if a, _ := os.ReadFile(apath); string(a) != want {
		t.Errorf("archive %q, want %q", a, want)
	}
	after = snap()
	for _, n := range ns {
		changed := after[n] != before[n]
		if want := n == SegmentName(1) || n == FileName; changed != want {
			t.Errorf("%s changed: %v", n, changed)
		}
	}
	if got := len(strings.Split(content(t, dir), "\n")) - 1; got != 147 {
		t.Errorf("%d lines left", got)
	}
}

func firstLine(t *testing.T, dir string) string { return lineOf(t, dir, 1) }

// lineOf is logical line n of dir's records.
func lineOf(t *testing.T, dir string, n int) string {
	t.Helper()
	ls := strings.SplitAfter(content(t, dir), "\n")
	return ls[n-1]
}

// An emptied segment goes; the others keep their numbers.
func TestCommitRemovesEmptiedSegment(t *testing.T) {
	dir := sealedDir(t, 150)
	ns := names(t, dir)
	s, err := ScanDir(dir, "e")
	if err != nil {
		t.Fatal(err)
	}
	first := s.starts[1] // segment 2's lines
	last := s.starts[2]
	if _, moved, err := s.Commit(func(line int, _ string, _ *engine.Identity) bool { return line > first && line <= last }, "t"); err != nil || moved != last-first {
		t.Fatalf("commit: %d %v", moved, err)
	}
	got := names(t, dir)
	if want := slices.Delete(slices.Clone(ns), 1, 2); !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	lk, _ := LockDir(dir, Exclusive)
	defer lk.Unlock()
	if seg, err := Seal(lk, dir, 0, nil); err != nil || seg != SegmentName(len(ns)) {
		t.Errorf("next seal %q %v", seg, err)
	}
}

// ScanDir and ReadUnique name the segment and line of an edited record,
// and of each line of a disagreeing duplicate.
func TestFindingsNameTheSegment(t *testing.T) {
	dir := sealedDir(t, 150)
	editSegment(t, dir, 2, func(ls []string) []string {
		ls[1] = strings.Replace(ls[1], `"response":"`, `"response":"gold `, 1)
		return ls
	})
	// A disagreeing record of segment 1's first key, appended live.
	var r0 engine.Record
	json.Unmarshal([]byte(firstLine(t, dir)), &r0)
	w, _ := Create(dir)
	r0.Response = "other"
	w.Write(&r0)
	w.Close()
	liveLines := bytes.Count(must(os.ReadFile(filepath.Join(dir, FileName))), []byte("\n"))

	s, err := ScanDir(dir, "e")
	if err != nil {
		t.Fatal(err)
	}
	wantEdited := SegmentName(2) + " line 2"
	if len(s.Edited) != 1 || s.Edited[0].At != wantEdited || s.At(s.Edited[0].Line) != wantEdited ||
		!strings.Contains(s.EditedError().Error(), wantEdited+" (key ") {
		t.Errorf("edited %v: %v", s.Edited, s.EditedError())
	}
	wantConflict := fmt.Sprintf(`%s line 1 answers %q, line %d answers "other"`, SegmentName(1), r0.Response[:0]+segRec(0, "").Response, liveLines)
	if err := s.ConflictError(); err == nil || !strings.Contains(err.Error(), wantConflict) {
		t.Errorf("conflict %v, want %s", err, wantConflict)
	}
	_, f, err := ReadUnique(dir, "e", false)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(f.Notes(), "\n")
	if !strings.Contains(notes, wantEdited) || !strings.Contains(notes, wantConflict) {
		t.Errorf("notes:\n%s", notes)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// A segment that is a symbolic link is refused, as records.jsonl is.
func TestCheckFilesRefusesLinkedSegment(t *testing.T) {
	dir, other := t.TempDir(), sealedDir(t, 100)
	os.Symlink(filepath.Join(other, SegmentName(1)), filepath.Join(dir, SegmentName(1)))
	if _, err := LockDir(dir, Exclusive); err == nil || !strings.Contains(err.Error(), SegmentName(1)) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("lock: %v", err)
	}
}

// Sealing needs the directory's exclusive lock.
func TestSealNeedsTheLock(t *testing.T) {
	dir := t.TempDir()
	writeRecs(t, dir, 0, 0, recs(10))
	sh, _ := LockDir(dir, Shared)
	if _, err := Seal(sh, dir, 0, nil); err == nil {
		t.Error("sealed under a shared lock")
	}
	if _, err := CreateWith(dir, Options{Lock: sh}); err == nil {
		t.Error("a sealing writer under a shared lock")
	}
	sh.Unlock()
	if _, err := Seal(nil, dir, 0, nil); err == nil {
		t.Error("sealed without a lock")
	}
	lk, _ := LockDir(dir, Exclusive)
	defer lk.Unlock()
	if _, err := Seal(lk, t.TempDir(), 0, nil); err == nil {
		t.Error("sealed another directory")
	}
	if seg, err := Seal(lk, dir, 0, nil); err != nil || seg != SegmentName(1) || slices.Contains(names(t, dir), FileName) {
		t.Errorf("seal %q %v, files %v", seg, err, names(t, dir))
	}
}

// A reader beside a writer that seals (a notebook reading a run that is
// still writing, without the shared lock) reads a prefix of the records:
// none missed in the middle, none twice.
func TestReadBesideSealing(t *testing.T) {
	dir := t.TempDir()
	lk, err := LockDir(dir, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	w, err := CreateWith(dir, Options{Lock: lk, SealBytes: 4 << 10, CloseSealBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	w.FlushEvery = 0
	const n = 300
	done := make(chan error)
	go func() {
		for i := range n {
			if err := w.Write(segRec(i, engine.StatusOK)); err != nil {
				done <- err
				return
			}
			time.Sleep(time.Millisecond) // records.jsonl lives between seals, as in a run
		}
		done <- w.Close()
	}()
	reads, longest := 0, 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		i := 0
		err := Read(dir, func(r *engine.Record) error {
			if want := segRec(i, "").Key; r.Key != want {
				return fmt.Errorf("record %d is %s, want %s", i, r.Key, want)
			}
			i++
			return nil
		})
		// A read(2) racing the writer's write(2) can see the end of
		// records.jsonl mid-record (as before segments): an error, never a
		// wrong record; what is checked here is the order across seals.
		midWrite := func(err error) bool {
			return err != nil && strings.Contains(err.Error(), FileName+" line ") && strings.Contains(err.Error(), "unexpected end of JSON input")
		}
		if err != nil && !os.IsNotExist(err) && !midWrite(err) {
			t.Fatalf("read %d: %v", reads, err)
		}
		recs, f, err := ReadUnique(dir, "", false)
		if err != nil && !midWrite(err) {
			t.Fatalf("ReadUnique %d: %v", reads, err)
		}
		for j, r := range recs {
			if want := segRec(j, "").Key; r.Key != want {
				t.Fatalf("ReadUnique: record %d is %s, want %s (%v; %v)", j, r.Key, want, err, f.Notes())
			}
		}
		if err == nil && len(recs) < i {
			t.Fatalf("ReadUnique read %d records after Read read %d", len(recs), i)
		}
		reads++
		longest = max(longest, i)
	}
	if segs := len(w.Sealed()); reads < 5 || segs < 10 || longest != n {
		t.Errorf("%d reads beside %d seals, the last read %d records", reads, segs, longest)
	}
}

// Segments and rewritten files are readable by others, as records.jsonl is.
func TestSegmentMode(t *testing.T) {
	dir := sealedDir(t, 60)
	for _, f := range must2(Files(dir)) {
		if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v", f, fi.Mode())
		}
	}
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Sealed lists the segments this Writer sealed.
func (w *Writer) Sealed() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.sealed)
}
