package cache

import (
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func key(i int) [32]byte { return sha256.Sum256([]byte(fmt.Sprint(i))) }

func val(i int) []byte { return []byte(fmt.Sprintf(`{"text":"answer %d"}`, i)) }

// want records what a store should answer: the last value put under each
// key.
type want map[int]string

func (w want) check(t *testing.T, s *Store, when string) {
	t.Helper()
	for i, v := range w {
		got, ok, err := s.Get(key(i))
		if err != nil || !ok || string(got) != v {
			t.Fatalf("%s: Get(%d) = %.40q, %v, %v; want %.40q", when, i, got, ok, err, v)
		}
	}
	if _, ok, err := s.Get(key(-1)); ok || err != nil {
		t.Fatalf("%s: a key never stored: %v, %v", when, ok, err)
	}
	if n, k := s.Len(), len(s.Keys()); n != len(w) || k != len(w) {
		t.Fatalf("%s: Len %d, %d keys, want %d", when, n, k, len(w))
	}
}

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Values are stored byte for byte, whatever they hold; the last put under
// a key wins; all of it is there after a reopen.
func TestValuesKeptExactly(t *testing.T) {
	cases := []struct {
		name   string
		values []string // put in order under one key
	}{
		{"json", []string{`{"text":"नमस्ते","finish_reason":"stop"}`}},
		{"newlines and NUL", []string{"a\nb\x00c\r\n"}},
		{"not UTF-8", []string{"\xff\xfe\x80 text"}},
		{"empty", []string{""}},
		{"16 MiB and more", []string{strings.Repeat("ab", 1<<23+5)}},
		{"replaced", []string{`{"text":"first"}`, `{"text":"second, longer"}`, `"third"`}},
	}
	dir := t.TempDir()
	s := open(t, dir)
	w := want{}
	for i, c := range cases {
		for _, v := range c.values {
			if err := s.Put(key(i), []byte(v)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		w[i] = c.values[len(c.values)-1]
	}
	w.check(t, s, "open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	w.check(t, s, "reopened")
}

// A row whose value or checksum was changed behind the store's back
// answers as a miss with an error naming the file and the key; the other
// rows answer as before, and putting the key again repairs it.
func TestChecksumMismatch(t *testing.T) {
	cases := []struct {
		name   string
		update string // run with the damaged key's hex as its one argument
	}{
		{"value changed", `UPDATE responses SET value = CAST('{"text":"ANSWER 1"}' AS BLOB) WHERE key = ?`},
		{"value cut short", `UPDATE responses SET value = substr(value, 1, 5) WHERE key = ?`},
		{"checksum changed", `UPDATE responses SET xxh64 = xxh64 + 1 WHERE key = ?`},
		{"value as text", `UPDATE responses SET value = 'other' WHERE key = ?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir)
			defer s.Close()
			w := want{}
			for i := range 3 {
				if err := s.Put(key(i), val(i)); err != nil {
					t.Fatal(err)
				}
				w[i] = string(val(i))
			}
			db, err := sql.Open("sqlite", filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			if res, err := db.Exec(c.update, fmt.Sprintf("%x", key(1))); err != nil {
				t.Fatal(err)
			} else if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("%d rows changed", n)
			}
			db.Close()
			if ls, err := s.GetMany([][32]byte{key(0), key(1), key(-1)}); err != nil || len(ls) != 3 ||
				!ls[0].Found || string(ls[0].Value) != w[0] || ls[1].Found || ls[1].Err == nil || ls[2].Found || ls[2].Err != nil {
				t.Fatalf("GetMany: %+v, %v; want the first found, the damaged one a miss with an error, the absent one a miss", ls, err)
			}
			v, ok, err := s.Get(key(1))
			if ok || err == nil || !strings.Contains(err.Error(), filepath.Join(dir, FileName)) || !strings.Contains(err.Error(), fmt.Sprintf("%x", key(1))) {
				t.Fatalf("damaged row: %q, %v, %v; want a miss with an error naming the file and the key", v, ok, err)
			}
			if n := len(s.Keys()); n != 2 {
				t.Errorf("Keys lists %d keys, want the 2 undamaged", n)
			}
			for _, i := range []int{0, 2} {
				if v, ok, err := s.Get(key(i)); !ok || err != nil || string(v) != w[i] {
					t.Errorf("entry %d: %q, %v, %v", i, v, ok, err)
				}
			}
			if err := s.Put(key(1), val(1)); err != nil {
				t.Fatal(err)
			}
			w.check(t, s, "put again")
		})
	}
}

// writerEnv names what a child process of TestConcurrentWriters writes:
// "DIR FROM TO".
const writerEnv = "BHASHA_CACHE_TEST_WRITER"

// putRange puts keys from to to-1 from 8 goroutines.
func putRange(s *Store, from, to int) error {
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from + g; i < to; i += 8 {
				if err := s.Put(key(i), val(i)); err != nil {
					errs[g] = err
					return
				}
				if v, ok, err := s.Get(key(i)); !ok || err != nil || string(v) != string(val(i)) {
					errs[g] = fmt.Errorf("read back %d: %q, %v, %v", i, v, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// TestWriterProcess is the child of TestConcurrentWriters: it puts its
// keys and is killed without closing the store.
func TestWriterProcess(t *testing.T) {
	arg := os.Getenv(writerEnv)
	if arg == "" {
		t.Skip("run by TestConcurrentWriters")
	}
	f := strings.Fields(arg)
	from, _ := strconv.Atoi(f[1])
	to, _ := strconv.Atoi(f[2])
	s, _, err := Open(f[0])
	if err == nil {
		err = putRange(s, from, to)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

// Several writers on one directory at once, each from 8 goroutines: one
// store, several stores (connections of their own), several processes
// killed after their last Put returned. Every answer is there afterwards.
func TestConcurrentWriters(t *testing.T) {
	const writers, each = 4, 300
	cases := []struct {
		name  string
		write func(t *testing.T, dir string)
	}{
		{"one store", func(t *testing.T, dir string) {
			s := open(t, dir)
			defer s.Close()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := putRange(s, w*each, (w+1)*each); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
		}},
		{"stores", func(t *testing.T, dir string) {
			var wg sync.WaitGroup
			for w := range writers {
				s := open(t, dir)
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer s.Close()
					if err := putRange(s, w*each, (w+1)*each); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
		}},
		{"processes", func(t *testing.T, dir string) {
			var cmds []*exec.Cmd
			for w := range writers {
				c := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$")
				c.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", writerEnv, dir, w*each, (w+1)*each))
				c.Stderr = os.Stderr
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				cmds = append(cmds, c)
			}
			for _, c := range cmds {
				err := c.Wait()
				if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Errorf("writer: %v, want it killed after its puts", err)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.write(t, dir)
			s := open(t, dir)
			defer s.Close()
			w := want{}
			for i := range writers * each {
				w[i] = string(val(i))
			}
			w.check(t, s, "after the writers")
		})
	}
}

// oldLine is a line of the earlier format's log.
func oldLine(k [32]byte, v string) string {
	return fmt.Sprintf("%x %08x %s\n", k, crc32.ChecksumIEEE([]byte(v)), v)
}

// An earlier-format cache is converted on Open: the last line of a key
// wins, damaged lines and a torn tail are skipped and counted, the old
// files are removed and Open says so; the next Open has nothing to say.
func TestConvertOldFormat(t *testing.T) {
	cases := []struct {
		name    string
		log     string
		db      want // put in a database beside the log before
		want    want
		put     int // lines converted
		skipped int
	}{
		{"clean", oldLine(key(0), `{"text":"a"}`) + oldLine(key(1), `{"text":"b"}`), nil,
			want{0: `{"text":"a"}`, 1: `{"text":"b"}`}, 2, 0},
		{"last line wins", oldLine(key(0), `"a1"`) + oldLine(key(1), `"b"`) + oldLine(key(0), `"a2"`), nil,
			want{0: `"a2"`, 1: `"b"`}, 3, 0},
		{"damaged line and torn tail", oldLine(key(0), `"a"`) + strings.Replace(oldLine(key(1), `"bad"`), "bad", "BAD", 1) +
			oldLine(key(2), `"c"`) + oldLine(key(3), `"torn"`)[:70], nil,
			want{0: `"a"`, 2: `"c"`}, 2, 2},
		{"empty log", "", nil, want{}, 0, 0},
		{"beside a database", oldLine(key(0), `"old"`) + oldLine(key(1), `"b"`), want{0: `"new"`, 5: `"e"`},
			want{0: `"old"`, 1: `"b"`, 5: `"e"`}, 2, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.db != nil {
				s := open(t, dir)
				for i, v := range c.db {
					if err := s.Put(key(i), []byte(v)); err != nil {
						t.Fatal(err)
					}
				}
				s.Close()
			}
			writeFile(t, dir, oldLogName, c.log)
			writeFile(t, dir, oldIndexName, "an index")
			s, rep, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			msg := fmt.Sprintf("converted %d answers of responses.log into cache.db, skipping %d damaged or incomplete line(s); removed responses.log and responses.idx",
				c.put, c.skipped)
			if !strings.Contains(rep.Converted, msg) || !strings.Contains(rep.Converted, dir) {
				t.Errorf("report %q, want %q", rep.Converted, msg)
			}
			for _, name := range []string{oldLogName, oldIndexName} {
				if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
					t.Errorf("%s after the conversion: %v", name, err)
				}
			}
			c.want.check(t, s, "converted")
			s.Close()
			s, rep, err = Open(dir)
			if err != nil || rep.Converted != "" {
				t.Fatalf("reopened: %q, %v", rep.Converted, err)
			}
			defer s.Close()
			c.want.check(t, s, "reopened")
		})
	}
}

// A conversion that fails leaves the directory as it was: the old files,
// and a database that was there, byte for byte; one it created is gone.
func TestConvertFailureLeavesFiles(t *testing.T) {
	log := oldLine(key(0), `"a"`) + oldLine(key(1), `"b"`)
	cases := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		msg     string
	}{
		{"database not SQLite", func(t *testing.T, dir string) {
			writeFile(t, dir, oldLogName, log)
			writeFile(t, dir, FileName, strings.Repeat("not a database\n", 400))
		}, "cache.db"},
		{"log unreadable", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, oldLogName), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "responses.log"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.prepare(t, dir)
			writeFile(t, dir, oldIndexName, "an index")
			before := dirFiles(t, dir)
			s, _, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatal("the conversion succeeded")
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %v, want one naming %s", err, c.msg)
			}
			if after := dirFiles(t, dir); after != before {
				t.Errorf("the directory changed:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// dirFiles lists dir's entries with their contents.
func dirFiles(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		c, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %v %q\n", e.Name(), e.IsDir(), c)
	}
	return b.String()
}

func writeFile(t *testing.T, dir, name, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// After Close, every call fails at once and closing again does nothing.
func TestUseAfterClose(t *testing.T) {
	s := open(t, t.TempDir())
	if err := s.Put(key(1), val(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"Get", func() error {
			if _, ok, err := s.Get(key(1)); ok || err == nil {
				return fmt.Errorf("Get after Close: %v, %v", ok, err)
			}
			return nil
		}},
		{"Put", func() error {
			if err := s.Put(key(2), val(2)); err == nil {
				return errors.New("Put after Close succeeded")
			}
			return nil
		}},
		{"Close", s.Close},
	}
	for _, c := range cases {
		if err := c.call(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// A batch waits its group's linger only after a batch of several calls:
// calls made one after another never wait, and the batches they make
// each hold one call.
func TestGroupLinger(t *testing.T) {
	cases := []struct {
		name      string
		together  int // calls held back while the slot is taken, then run
		after     int // calls made one after another once they have run
		wantWaits int
		wantSizes []int
	}{
		{"one after another", 0, 4, 0, []int{1, 1, 1, 1}},
		{"together, then alone", 3, 2, 1, []int{3, 1, 1}},
		{"a lone call held back", 1, 2, 0, []int{1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGroup(1, time.Hour)
			var waits int
			g.sleep = func(d time.Duration) {
				if d != time.Hour {
					t.Errorf("waited %v, want the linger", d)
				}
				waits++
			}
			var mu sync.Mutex
			var sizes []int
			run := func(b *batch) error {
				mu.Lock()
				defer mu.Unlock()
				sizes = append(sizes, len(b.keys))
				return nil
			}
			if c.together > 0 {
				g.slots <- struct{}{} // a batch running: the calls wait together
				var wg sync.WaitGroup
				for i := range c.together {
					wg.Go(func() { g.do(strconv.Itoa(i), nil, run) })
				}
				for {
					g.mu.Lock()
					n := 0
					if g.next != nil {
						n = len(g.next.keys)
					}
					g.mu.Unlock()
					if n == c.together {
						break
					}
					runtime.Gosched()
				}
				<-g.slots
				wg.Wait()
			}
			for i := range c.after {
				g.do(strconv.Itoa(i), nil, run)
			}
			if waits != c.wantWaits || !slices.Equal(sizes, c.wantSizes) {
				t.Errorf("%d waits, batches %v; want %d, %v", waits, sizes, c.wantWaits, c.wantSizes)
			}
		})
	}
}

// GetMany answers more keys than one query reads, found or not, each in
// its place, as Get answers each.
func TestGetMany(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	const n = maxBatch + 100
	b := &batch{}
	var keys [][32]byte
	for i := range n {
		k := key(i)
		keys = append(keys, k)
		if i%3 != 0 { // every third key is absent
			b.keys, b.values = append(b.keys, fmt.Sprintf("%x", k)), append(b.values, val(i))
		}
	}
	if err := s.write(b); err != nil {
		t.Fatal(err)
	}
	ls, err := s.GetMany(keys)
	if err != nil || len(ls) != n {
		t.Fatalf("%d lookups, %v", len(ls), err)
	}
	for i, l := range ls {
		if want := i%3 != 0; l.Found != want || l.Err != nil || (want && string(l.Value) != string(val(i))) {
			t.Fatalf("key %d: %+v, want found %v", i, l, want)
		}
	}
}
