package records

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// ScanDir names edited, unsealed and disagreeing lines and the records of
// another experiment, and changes nothing; Commit then archives what it is
// told and keeps the rest byte for byte.
func TestScanDir(t *testing.T) {
	write := func(t *testing.T, dir string, recs ...*engine.Record) []string {
		w, err := Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, FileName))
		return strings.SplitAfter(strings.TrimSuffix(string(b), "\n")+"\n", "\n")[:len(recs)]
	}
	ok := func(key, resp string) *engine.Record {
		return &engine.Record{Key: key, Status: engine.StatusOK, Response: resp}
	}
	cases := []struct {
		name      string
		edit      func([]string) []string
		edited    []int
		conflicts int
		foreign   int
		kept      int
	}{
		{"as written", func(ls []string) []string { return ls }, nil, 0, 0, 3},
		{"an answer edited", func(ls []string) []string {
			ls[1] = strings.Replace(ls[1], `"b1"`, `"gold"`, 1)
			return ls
		}, []int{2}, 0, 0, 3},
		{"a seal removed", func(ls []string) []string {
			i := strings.Index(ls[2], sealMember)
			ls[2] = ls[2][:i] + "}\n"
			return ls
		}, []int{3}, 0, 0, 3},
		{"before sealing (older Bhasha)", func(ls []string) []string {
			for i := range ls {
				ls[i] = ls[i][:strings.Index(ls[i], sealMember)] + "}\n"
			}
			return ls
		}, nil, 0, 0, 3},
		{"a disagreeing duplicate", func(ls []string) []string {
			return append(ls, `{"key":"e|m|a","status":"ok","response":"other"}`+"\n")
		}, []int{4}, 1, 0, 3},
		{"another experiment's record", func(ls []string) []string {
			return append(ls, strings.Replace(ls[0], `"e|m|a"`, `"x|m|a"`, 1))
		}, []int{4}, 0, 1, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ls := c.edit(write(t, dir, ok("e|m|a", "a1"), ok("e|m|b", "b1"), ok("e|m|c", "c1")))
			content := strings.Join(ls, "")
			os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644)
			s, err := ScanDir(dir, "e")
			if err != nil {
				t.Fatal(err)
			}
			var edited []int
			for _, f := range s.Edited {
				edited = append(edited, f.Line)
			}
			if !slices.Equal(edited, c.edited) {
				t.Errorf("edited lines %v, want %v", edited, c.edited)
			}
			if len(s.Conflicts) != c.conflicts || len(s.Foreign) != c.foreign || s.Done.Len() != c.kept {
				t.Errorf("conflicts %v, foreign %v, kept %d", s.Conflicts, s.Foreign, s.Done.Len())
			}
			if b, _ := os.ReadFile(filepath.Join(dir, FileName)); string(b) != content {
				t.Error("ScanDir changed the file")
			}
			// Archive line 1: the others stay as they were.
			apath, n, err := s.Commit(func(line int, _ string, _ *engine.Identity) bool { return line == 1 }, "t")
			if err != nil || n != 1 {
				t.Fatalf("commit: %d %v", n, err)
			}
			a, _ := os.ReadFile(apath)
			b, _ := os.ReadFile(filepath.Join(dir, FileName))
			if string(a) != ls[0] || string(b) != strings.Join(ls[1:], "") || s.Done.Has("e|m|a") {
				t.Errorf("after commit: archive %q, records %q", a, b)
			}
		})
	}
}

// Archiving from a file with failed records and a duplicate, then the
// resume's own Commit: every kept record stays (the second pass must not
// read the rewritten file with the old file's line numbers).
func TestCommitTwiceKeepsRecords(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*engine.Record{
		{Key: "e|m|a", Status: engine.StatusFailed, Error: "boom"},
		{Key: "e|m|b", Status: engine.StatusOK, Response: "b"},
		{Key: "e|m|b", Status: engine.StatusOK, Response: "b"},
		{Key: "e|m|c", Status: engine.StatusOK, Response: "c"},
		{Key: "e|m|d", Status: engine.StatusOK, Response: "d"},
	} {
		w.Write(r)
	}
	w.Close()
	s, err := ScanDir(dir, "e")
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := s.Commit(func(_ int, key string, _ *engine.Identity) bool { return key == "e|m|c" }, "t"); err != nil || n != 1 {
		t.Fatalf("archive: %d %v", n, err)
	}
	if _, _, err := s.Commit(nil, ""); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := Read(dir, func(r *engine.Record) error { keys = append(keys, r.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"e|m|b", "e|m|d"}) || s.Done.Len() != 2 {
		t.Errorf("records %v, %d done; want e|m|b and e|m|d", keys, s.Done.Len())
	}
}
