package records

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The fingerprint changes with an appended record, a rewrite that keeps
// the size, and a new segment; not with files that are not records.
func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	fp := func() string {
		t.Helper()
		s, err := Fingerprint(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	empty := fp()
	os.WriteFile(p, []byte(line("a", "ok")), 0o644)
	one := fp()
	steps := []struct {
		name   string
		change func()
		same   bool
	}{
		{"nothing", func() {}, true},
		{"another file", func() { os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{}"), 0o644) }, true},
		{"an appended record", func() {
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(line("b", "ok"))
			f.Close()
		}, false},
		{"the same size rewritten", func() {
			b, _ := os.ReadFile(p)
			b[len(b)-3] = 'y'
			os.WriteFile(p, b, 0o644)
			os.Chtimes(p, time.Now(), time.Now().Add(time.Hour))
		}, false},
		{"an older sealed segment", func() { os.WriteFile(filepath.Join(dir, "records-000001.jsonl.zst"), []byte("z"), 0o644) }, false},
		{"a Parquet segment", func() { os.WriteFile(filepath.Join(dir, "records-000002.parquet"), []byte("PAR1"), 0o644) }, false},
		{"a file that holds no records", func() { os.WriteFile(filepath.Join(dir, "records-notes.txt"), []byte("x"), 0o644) }, true},
	}
	prev := one
	for _, s := range steps {
		s.change()
		now := fp()
		if (now == prev) != s.same {
			t.Errorf("%s: fingerprint %s → %s", s.name, prev, now)
		}
		prev = now
	}
	if empty == one {
		t.Errorf("no records and one record have the same fingerprint")
	}
}
