package records

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the lock file of a run directory. It holds the PID of the
// process that last took the lock.
const LockFile = ".lock"

// Lock is a held lock on a run directory.
type Lock struct {
	f    *os.File
	dir  string
	mode Mode
}

// holds refuses l unless it is dir's exclusive lock, still held.
func (l *Lock) holds(dir string) error {
	if l == nil || l.f == nil || l.mode != Exclusive {
		return fmt.Errorf("sealing the records of %s needs its exclusive lock (records.LockDir)", dir)
	}
	a, err1 := os.Stat(l.dir)
	b, err2 := os.Stat(dir)
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		return fmt.Errorf("sealing the records of %s: the lock held is of another directory (%s)", dir, l.dir)
	}
	return nil
}

// Mode says how a run directory is locked.
type Mode int

// Lock modes.
const (
	// Exclusive is held by one writer of records for its whole lifetime.
	Exclusive Mode = iota
	// Shared is held by any number of readers, never beside an exclusive holder.
	Shared
)

// ErrReadOnly is the error LockDir wraps when the run directory's lock
// file cannot be opened for writing (EROFS, EACCES or EPERM).
var ErrReadOnly = errors.New("the run directory is read-only")

// IsReadOnly reports whether err is ErrReadOnly, fs.ErrPermission or EROFS.
func IsReadOnly(err error) bool {
	return errors.Is(err, ErrReadOnly) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// LockDir takes DIR/.lock with flock(2) without waiting. When another
// process holds it, the error names the directory and that process's PID.
// A lock file that cannot be opened for writing is an error wrapping
// ErrReadOnly and the system's error. The lock is released by Unlock, or
// by the kernel when the process dies.
func LockDir(dir string, mode Mode) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	if err := CheckFiles(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		if IsReadOnly(err) {
			return nil, fmt.Errorf("locking run directory %s: %w (%w)", dir, ErrReadOnly, err)
		}
		return nil, fmt.Errorf("locking run directory %s: %w", dir, err)
	}
	how := syscall.LOCK_EX
	if mode == Shared {
		how = syscall.LOCK_SH
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				holder = fmt.Sprintf("process %d", pid)
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("run directory %s is in use by %s (a run, batch import or report); wait for it to finish or use another run directory", dir, holder)
		}
		return nil, fmt.Errorf("locking run directory %s: %w", dir, err)
	}
	// The PID names a holder in the error of the next process that tries.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f, dir: dir, mode: mode}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}

// CheckFiles refuses a run directory in which a run file (.lock, records
// files, archive/, manifest.json, experiment.yaml, tables/) is a symbolic
// link; the directory itself may be reached through one.
func CheckFiles(dir string) error {
	for _, name := range []string{LockFile, FileName, ArchiveDir, manifestFile, "experiment.yaml", "tables"} {
		if err := noLink(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil // a missing directory holds no links; LockDir creates it
	}
	for _, e := range es {
		if _, _, ok := parseSegment(e.Name()); ok {
			if err := noLink(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// noLink refuses a path that is a symbolic link (a missing path is fine).
func noLink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		to, _ := os.Readlink(path)
		return fmt.Errorf("%s is a symbolic link (to %s); a run's files must be its own: copy the file in, or use another run directory", path, to)
	}
	return nil
}
