package records

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// Each calls back in the lines' order with what work made of each line,
// whatever the number of workers; it skips a line edited after it was
// written, stops at an error from each, and at a cancelled context.
func TestEach(t *testing.T) {
	dir := t.TempDir()
	const n = 300
	var recs []*engine.Record
	for i := range n {
		st := engine.StatusOK
		if i%7 == 3 {
			st = engine.StatusFailed
		}
		r := segRec(i, st)
		r.Key = fmt.Sprintf("e|m|item%03d||||", i)
		r.Response = strings.Repeat("x", i%13)
		recs = append(recs, r)
	}
	writeRecs(t, dir, 4<<10, 1<<30, recs) // several sealed segments and a live file
	files, err := Files(dir)
	if err != nil || len(files) < 2 {
		t.Fatalf("want several records files, got %v (%v)", files, err)
	}
	for _, workers := range []int{1, 2, 8} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			var lines []int
			nlines, err := Each(context.Background(), dir, StreamOptions{Workers: workers}, func(line int, r *engine.Record) (int, error) {
				return len(r.Response), nil
			}, func(line int, key string, ok bool, v int) error {
				i := line - 1
				if want := fmt.Sprintf("e|m|item%03d||||", i); key != want || v != i%13 || ok != (i%7 != 3) {
					t.Errorf("line %d: key %q ok %v v %d", line, key, ok, v)
				}
				lines = append(lines, line)
				return nil
			})
			if err != nil || nlines != n || len(lines) != n {
				t.Fatalf("Each: %d lines, %d calls, %v", nlines, len(lines), err)
			}
			for i, l := range lines {
				if l != i+1 {
					t.Fatalf("call %d was line %d: out of order", i, l)
				}
			}
		})
	}
	// work reads each request body as it was written.
	bodies := map[string]string{}
	for _, r := range recs {
		bodies[r.Key] = string(r.Request)
	}
	_, err = Each(context.Background(), dir, StreamOptions{WithRequests: true}, func(_ int, r *engine.Record) (string, error) {
		return string(r.Request), nil
	}, func(line int, key string, _ bool, body string) error {
		if body != bodies[key] {
			t.Errorf("line %d: request %q, written %q", line, body, bodies[key])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	calls := 0
	_, err = Each(context.Background(), dir, StreamOptions{}, func(int, *engine.Record) (int, error) { return 0, nil },
		func(int, string, bool, int) error {
			calls++
			if calls == 5 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) || calls != 5 {
		t.Errorf("an error from each: %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Each(ctx, dir, StreamOptions{}, func(int, *engine.Record) (int, error) { return 0, nil },
		func(int, string, bool, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// An edited line of the live file gets no call.
	live := filepath.Join(dir, FileName)
	b, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), "item", "itex", 1) // its first line's key
	if edited == string(b) {
		t.Fatal("no line in the live file")
	}
	if err := os.WriteFile(live, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	got := 0
	nlines, err := Each(context.Background(), dir, StreamOptions{}, func(int, *engine.Record) (int, error) { return 0, nil },
		func(int, string, bool, int) error { got++; return nil })
	if err != nil || nlines != n || got != n-1 {
		t.Errorf("with an edited line: %d lines, %d calls (want %d), %v", nlines, got, n-1, err)
	}
}
