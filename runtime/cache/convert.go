package cache

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cespare/xxhash/v2"
)

// The earlier format: DIR/responses.log, one answer a line,
//
//	<64 hex digits of the key> SP <8 hex digits of CRC-32 (IEEE) of VALUE> SP VALUE LF
//
// the last line of a key winning, and DIR/responses.idx, an index derived
// from it. Processes of the earlier version hold a shared flock on the log
// while they have it open.
const (
	oldLogName   = "responses.log"
	oldIndexName = "responses.idx"
)

// convertOld copies dir's earlier-format cache into the database at
// dbPath in one transaction under an exclusive flock of the log, removes
// the old files and says what it did ("" when dir has no log). On an
// error the old files and the database are as they were.
func convertOld(dir, dbPath string) (string, error) {
	logPath := filepath.Join(dir, oldLogName)
	f, err := os.Open(logPath)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("converting cache %s: %w", logPath, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking cache %s: %w", logPath, err)
	}
	// Another Open may have converted and removed the log meanwhile.
	held, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("converting cache %s: %w", logPath, err)
	}
	if now, err := os.Stat(logPath); err != nil || !os.SameFile(held, now) {
		return "", nil
	}
	_, err = os.Stat(dbPath)
	created := errors.Is(err, fs.ErrNotExist)
	n, skipped, err := copyLog(f, logPath, dbPath)
	if err != nil {
		if created {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(dbPath + suffix)
			}
		}
		return "", err
	}
	msg := fmt.Sprintf("cache %s: converted %d answers of %s into %s, skipping %d damaged or incomplete line(s)",
		dir, n, oldLogName, FileName, skipped)
	idxPath := filepath.Join(dir, oldIndexName)
	if err := os.Remove(idxPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		msg += fmt.Sprintf("; %s could not be removed: %v", oldIndexName, err)
	}
	if err := os.Remove(logPath); err != nil {
		msg += fmt.Sprintf("; %s could not be removed (%v): the next open converts it again", oldLogName, err)
	} else {
		msg += fmt.Sprintf("; removed %s and %s", oldLogName, oldIndexName)
	}
	return msg, nil
}

// copyLog puts every line of the log r (named logPath) that validates
// into the database at dbPath, in one transaction, and returns how many
// it put and how many it skipped.
func copyLog(r io.Reader, logPath, dbPath string) (n, skipped int, err error) {
	db, err := openDB(dbPath)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return 0, 0, fmt.Errorf("converting cache %s: %w", logPath, err)
	}
	defer tx.Rollback()
	st, err := tx.Prepare(putSQL)
	if err != nil {
		return 0, 0, fmt.Errorf("converting cache %s: %w", logPath, err)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return 0, 0, fmt.Errorf("converting cache %s: %w", logPath, rerr)
		}
		if len(line) > 0 {
			key, val, ok := parseLine(line)
			if !ok {
				skipped++
			} else if _, err := st.Exec(hex.EncodeToString(key[:]), int64(xxhash.Sum64(val)), val); err != nil {
				return 0, 0, fmt.Errorf("converting cache %s into %s: %w", logPath, dbPath, err)
			} else {
				n++
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("converting cache %s into %s: %w", logPath, dbPath, err)
	}
	return n, skipped, nil
}

// parseLine validates one line of the log, LF included, and returns its
// key and value.
func parseLine(line []byte) (key [32]byte, val []byte, ok bool) {
	const hdr = 64 + 1 + 8 + 1
	if len(line) < hdr+1 || line[len(line)-1] != '\n' || line[64] != ' ' || line[73] != ' ' {
		return key, nil, false
	}
	var sum [4]byte
	if _, err := hex.Decode(key[:], line[:64]); err != nil {
		return key, nil, false
	}
	if _, err := hex.Decode(sum[:], line[65:73]); err != nil {
		return key, nil, false
	}
	val = line[hdr : len(line)-1]
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	return key, val, crc32.ChecksumIEEE(val) == want
}
