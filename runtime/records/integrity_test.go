package records

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// fullFile accepts room bytes, then fails as a full disk does: a short
// write, then ENOSPC.
type fullFile struct {
	bytes.Buffer
	room int
}

func (f *fullFile) Write(b []byte) (int, error) {
	n := min(len(b), f.room)
	f.room -= n
	f.Buffer.Write(b[:n])
	if n < len(b) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

func (f *fullFile) Close() error { return nil }

func rec(i int, status string) *engine.Record {
	return &engine.Record{Key: fmt.Sprintf("e|m|%d|||||", i), Status: status, Response: strings.Repeat("x", 50+i%7)}
}

// On a full disk the writer counts exactly the records whole in the file:
// neither those handed to it nor the torn one.
func TestWriterCountsWhatReachedTheFile(t *testing.T) {
	for _, room := range []int{0, 1, 500, 4096, 20000, 1 << 20} {
		t.Run(fmt.Sprint(room), func(t *testing.T) {
			f := &fullFile{room: room}
			w := newWriter(f, "records.jsonl")
			w.FlushEvery = 0 // flush every record, as a slow run does
			var werr error
			for i := range 160 {
				status := engine.StatusOK
				if i%10 == 3 {
					status = engine.StatusFailed
				}
				if werr = w.Write(rec(i, status)); werr != nil {
					break
				}
			}
			cerr := w.Close()
			whole := bytes.Count(f.Bytes(), []byte("\n"))
			got := w.Written()
			if got.Records != whole || got.OK+got.Failed != whole {
				t.Errorf("written %+v, %d whole lines in the file", got, whole)
			}
			wantErr := room < 1<<20 // 160 records take about 60 KB
			if gotErr := werr != nil || cerr != nil; gotErr != wantErr {
				t.Errorf("errors %v %v (want an error: %v)", werr, cerr, wantErr)
			}
			if werr != nil && !errors.Is(werr, syscall.ENOSPC) {
				t.Errorf("error %v does not say the disk is full", werr)
			}
			// Later writes fail the same way.
			if werr != nil {
				if err := w.Write(rec(999, engine.StatusOK)); err == nil {
					t.Error("a write after ENOSPC succeeded")
				}
			}
		})
	}
}

// Records are never split across write(2) calls: two writers appending
// large records to one file concurrently leave only whole lines (the old
// 256 KiB buffered writer spliced records mid-line).
func TestRecordsAreWrittenWhole(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	big := strings.Repeat("अ", 40<<10) // 120 KB per record
	for g := range 2 {
		w, err := Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				if err := w.Write(&engine.Record{Key: fmt.Sprintf("w%d|%d", g, i), Status: engine.StatusOK, Response: big}); err != nil {
					t.Error(err)
					return
				}
			}
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	if err := Read(dir, func(r *engine.Record) error {
		n++
		if r.Response != big {
			return fmt.Errorf("%s: response spliced", r.Key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 120 {
		t.Errorf("%d records, want 120", n)
	}
}

func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	lk, err := LockDir(dir, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Mode{Exclusive, Shared} {
		_, err := LockDir(dir, m)
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
			t.Errorf("mode %d while held: %v", m, err)
		}
	}
	lk.Unlock()
	s1, err := LockDir(dir, Shared)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := LockDir(dir, Shared)
	if err != nil {
		t.Fatalf("two readers: %v", err)
	}
	if _, err := LockDir(dir, Exclusive); err == nil {
		t.Error("exclusive beside readers")
	}
	s1.Unlock()
	s2.Unlock()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Error(err)
	}
}

func TestReadUnique(t *testing.T) {
	dir := t.TempDir()
	content := line("a", "failed") + line("b", "ok") + line("a", "ok") + line("b", "ok") + line("c", "ok")
	os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644)
	recs, d, err := ReadUnique(dir, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Key != "a" || recs[0].Status != engine.StatusOK || d.Records != 2 || len(d.Keys) != 2 {
		t.Errorf("%d records, first %+v, duplicates %+v", len(recs), recs[0], d)
	}
	if !strings.Contains(d.String(), "2 duplicate record(s)") {
		t.Errorf("%q", d.String())
	}
}
