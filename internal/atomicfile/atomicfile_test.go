package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// RemoveStray removes what a write killed before Commit leaves, and
// nothing else: not the file itself, not another file's temporary files.
func TestRemoveStray(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.idx")
	if err := WriteFile(path, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	killed, err := Create(path) // never committed nor aborted
	if err != nil {
		t.Fatal(err)
	}
	killed.Close()
	other, err := Create(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Abort()
	os.WriteFile(filepath.Join(dir, ".out.idx-.tmpx"), nil, 0o644)
	if err := RemoveStray(path); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{".out.idx-.tmpx", filepath.Base(other.Name()), "out.idx"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("left %q, want %q", names, want)
	}
}
