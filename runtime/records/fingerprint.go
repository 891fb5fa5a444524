package records

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// TailBytes is how much of each records file's end Fingerprint hashes.
const TailBytes = 4096

// Fingerprint identifies the records of dir as they are now, cheaply: over
// every regular records file at the top of dir (records.jsonl and the
// segments beside it, such as records-000001.parquet), in name order, its name, size, modification
// time (nanoseconds) and the SHA-256 of its last TailBytes bytes. The
// result is "sha256:<64 hex digits>"; a directory without records files
// gives the fingerprint of the empty list. An appended record changes the
// size and the tail; a record rewritten in place (a repair, a hand edit)
// changes the modification time. It reads at most TailBytes per file.
func Fingerprint(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "records*"))
	if err != nil {
		return "", fmt.Errorf("fingerprinting records of %s: %w", dir, err)
	}
	files = slices.DeleteFunc(files, func(p string) bool {
		_, _, seg := parseSegment(filepath.Base(p))
		return !seg && filepath.Base(p) != FileName
	})
	slices.Sort(files)
	h := sha256.New()
	for _, p := range files {
		st, err := os.Lstat(p)
		if err != nil {
			return "", fmt.Errorf("fingerprinting records of %s: %w", dir, err)
		}
		if !st.Mode().IsRegular() {
			continue
		}
		tail, err := tailOf(p, st.Size())
		if err != nil {
			return "", fmt.Errorf("fingerprinting records of %s: %w", dir, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%x\n", filepath.Base(p), st.Size(), st.ModTime().UnixNano(), tail)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// tailOf hashes the last TailBytes bytes of the file at p, of size n.
func tailOf(p string, n int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off := max(n-TailBytes, 0)
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, off, n-off)); err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return h.Sum(nil), nil
}
