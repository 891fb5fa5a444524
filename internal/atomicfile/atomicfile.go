// Package atomicfile writes output files so that a reader never sees a
// partial one: the bytes go to a temporary file in the same directory,
// which is synced and then renamed over the final name. A process killed
// at any moment leaves either the previous file or the complete new one
// under the final name, plus at worst a stray ".NAME-*.tmp" file.
package atomicfile

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
)

// File is an output being written; nothing appears under its final name
// until Commit.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts writing path (mode 0644 on Commit).
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	f, err := os.CreateTemp(cmp.Or(dir, "."), "."+base+"-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &File{File: f, path: path}, nil
}

// Commit syncs the temporary file, closes it and renames it to the final
// name. On any error the temporary file is removed and the final name is
// left as it was.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("writing %s: already committed or aborted", f.path)
	}
	f.done = true
	err := cmp.Or(f.Sync(), f.Close())
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort discards the temporary file; after Commit it does nothing, so it
// can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}
