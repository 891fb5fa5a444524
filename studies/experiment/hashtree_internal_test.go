package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// hashTree follows symbolic links: a dataset linked into place (the
// root, a file or a directory inside it) hashes as the same files copied
// there, a tree without links as it always did (filepath.WalkDir's
// order), and a link back into the tree is an error, not a loop.
func TestHashTreeFollowsLinks(t *testing.T) {
	// files writes a small dataset tree under dir.
	files := func(t *testing.T, dir string) {
		for p, body := range map[string]string{"en/P17.json": `{"a":1}`, "hi/P17.json": `{"a":2}`, "hi/P19.json": `{"b":3}`, "README": "x"} {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// walked is the hash as filepath.WalkDir made it before links were
	// followed: the reference for a tree without links.
	walked := func(t *testing.T, root string) string {
		h := sha256.New()
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			h.Write([]byte(rel))
			h.Write([]byte{0})
			h.Write(sum[:])
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	real := t.TempDir()
	files(t, real)
	want := walked(t, real)
	link := func(t *testing.T, target, at string) {
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		root    func(t *testing.T) string
		wantErr string
	}{
		{"no links", func(*testing.T) string { return real }, ""},
		{"root linked", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "data")
			link(t, real, p)
			return p
		}, ""},
		{"a file and a directory linked inside", func(t *testing.T) string {
			dir, other := t.TempDir(), t.TempDir()
			files(t, other)
			if err := os.MkdirAll(filepath.Join(dir, "hi"), 0o755); err != nil {
				t.Fatal(err)
			}
			link(t, filepath.Join(other, "en"), filepath.Join(dir, "en"))
			link(t, filepath.Join(other, "README"), filepath.Join(dir, "README"))
			link(t, filepath.Join(other, "hi", "P17.json"), filepath.Join(dir, "hi", "P17.json"))
			link(t, filepath.Join(other, "hi", "P19.json"), filepath.Join(dir, "hi", "P19.json"))
			return dir
		}, ""},
		{"a link back into the tree", func(t *testing.T) string {
			dir := t.TempDir()
			files(t, dir)
			link(t, dir, filepath.Join(dir, "hi", "loop"))
			return dir
		}, "links back"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := hashTree(c.root(t))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("%q, %v: want an error saying %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != want {
				t.Fatalf("%q, %v: want %q, the tree's own files' hash", got, err, want)
			}
		})
	}
}

// hashTree streams a tree's files through one buffer: what it allocates
// grows with the files' count by far less than a copy buffer each
// (32 KiB), and its hash is that of the files' own hashes.
func TestHashTreeSharesItsBuffer(t *testing.T) {
	for _, c := range []struct {
		files, size int
	}{{64, 100}, {256, 5 << 10}, {32, 200 << 10}} {
		t.Run(fmt.Sprintf("%d files of %d bytes", c.files, c.size), func(t *testing.T) {
			dir := t.TempDir()
			want := sha256.New()
			for i := range c.files {
				name := fmt.Sprintf("f%04d.json", i)
				body := []byte(strings.Repeat(string(rune('a'+i%26)), c.size))
				if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(body)
				want.Write([]byte(name))
				want.Write([]byte{0})
				want.Write(sum[:])
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, err := hashTree(dir)
			runtime.ReadMemStats(&after)
			if err != nil || got != hex.EncodeToString(want.Sum(nil)) {
				t.Fatalf("hashTree: %s %v", got, err)
			}
			if per := (after.TotalAlloc - before.TotalAlloc) / uint64(c.files); per > 8<<10 {
				t.Errorf("%d bytes allocated a file, want under 8 KiB", per)
			}
		})
	}
}
