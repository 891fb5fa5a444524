package cache

import (
	"fmt"
	"strings"
	"testing"
)

// keyWithPrefix is a key whose first 8 bytes are those of prefix key p.
func keyWithPrefix(p [32]byte, tail byte) [32]byte {
	k := p
	for i := 8; i < 32; i++ {
		k[i] = tail
	}
	return k
}

// Keys sharing their first 8 bytes (the memory index's hash) are told
// apart, before and after a reopen, and the last entry of each wins.
func TestSharedPrefix(t *testing.T) {
	dir := t.TempDir()
	a, b, c := keyWithPrefix(key(1), 1), keyWithPrefix(key(1), 2), keyWithPrefix(key(1), 3)
	if fragOf(a).hi != fragOf(b).hi || a == b {
		t.Fatal("the keys do not share a prefix")
	}
	steps := []struct {
		put   [32]byte
		value string
	}{{a, `"a1"`}, {b, `"b1"`}, {key(2), `"other"`}, {a, `"a2"`}}
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if err := s.Put(st.put, []byte(st.value)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(s *Store, when string) {
		t.Helper()
		want := map[[32]byte]string{a: `"a2"`, b: `"b1"`, key(2): `"other"`}
		for k, w := range want {
			v, ok, err := s.Get(k)
			if err != nil || !ok || string(v) != w {
				t.Errorf("%s: Get(%x…) = %s, %v, %v; want %s", when, k[8:10], v, ok, err, w)
			}
		}
		if _, ok, _ := s.Get(c); ok || s.Has(c) {
			t.Errorf("%s: a key never stored is found under its prefix", when)
		}
		if s.Len() != 3 || len(s.Keys()) != 3 {
			t.Errorf("%s: Len %d, %d keys; want 3", when, s.Len(), len(s.Keys()))
		}
	}
	check(s, "before a reopen")
	s.Close()
	s2, rep, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if rep.Entries != 3 {
		t.Errorf("reopened: %d entries, want 3", rep.Entries)
	}
	check(s2, "after a reopen")
}

// Many keys, some stored twice, through several growths of the index.
func TestIndexGrows(t *testing.T) {
	dir := t.TempDir()
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	for i := range n {
		if err := s.Put(key(i), val(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 7 {
		if err := s.Put(key(i), []byte(fmt.Sprintf(`{"text":"again %d"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, rep, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep.Entries != n || s.Len() != n {
		t.Fatalf("%d entries, want %d", rep.Entries, n)
	}
	for i := range n {
		want := string(val(i))
		if i%7 == 0 {
			want = fmt.Sprintf(`{"text":"again %d"}`, i)
		}
		if v, ok, err := s.Get(key(i)); err != nil || !ok || string(v) != want {
			t.Fatalf("Get(%d) = %s, %v, %v", i, v, ok, err)
		}
	}
	if _, ok, _ := s.Get(key(n)); ok {
		t.Fatal("found a key never stored")
	}
}

// A line longer than the index's length field says is read to its LF.
func TestLongLine(t *testing.T) {
	dir := t.TempDir()
	s, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	long := `{"text":"` + strings.Repeat("a", longLine+10) + `"}`
	if err := s.Put(key(1), []byte(long)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(key(2), val(2)); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*Store{s, nil} {
		if st == nil {
			s.Close()
			if st, _, err = Open(dir); err != nil {
				t.Fatal(err)
			}
			defer st.Close()
		}
		if v, ok, err := st.Get(key(1)); err != nil || !ok || string(v) != long {
			t.Fatalf("long value: %d bytes, %v, %v", len(v), ok, err)
		}
		if v, ok, err := st.Get(key(2)); err != nil || !ok || string(v) != string(val(2)) {
			t.Fatalf("after the long line: %s, %v, %v", v, ok, err)
		}
	}
}
