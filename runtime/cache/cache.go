// Package cache stores response bodies on disk by request key, in one
// SQLite database, DIR/cache.db, which several processes may share.
//
// The database holds one table:
//
//	CREATE TABLE responses (
//	  key   TEXT PRIMARY KEY,  -- the request key: 64 lowercase hex digits
//	  xxh64 INTEGER NOT NULL,  -- XXH64 (seed 0) of value, as a signed 64-bit integer
//	  value BLOB NOT NULL      -- the response body, byte for byte
//	) WITHOUT ROWID
//
// It is in WAL mode with synchronous=NORMAL: a Put returns once the
// transaction holding its answer has committed, and a committed
// transaction survives the process being killed at any point; a power
// failure may lose the transactions committed since the last checkpoint,
// never the consistency of the rest. Puts made at the same time commit
// together in one transaction (while they keep arriving together, each
// transaction first waits putLinger for more), and Gets made at the same
// time are read in one query. The last value put under a key wins.
// Every process sees every committed answer, its own and the others'.
//
// Every read checks value against xxh64: a row that does not match
// answers as a miss, with an error naming the file and the key, so that
// the request is sent again and its answer replaces the row.
//
// A directory in the earlier format (responses.log and its index
// responses.idx) is converted on Open (convertOld).
package cache

import (
	"bufio"
	"cmp"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cespare/xxhash/v2"
	"modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// FileName is the name of the database inside the cache directory.
const FileName = "cache.db"

// DefaultDir is $BHASHA_CACHE_DIR, else the user cache directory + /bhasha.
func DefaultDir() string {
	if d := os.Getenv("BHASHA_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "bhasha")
	}
	return filepath.Join(os.TempDir(), "bhasha-cache")
}

const (
	schema = `CREATE TABLE IF NOT EXISTS responses (
	key   TEXT PRIMARY KEY,
	xxh64 INTEGER NOT NULL,
	value BLOB NOT NULL
) WITHOUT ROWID`
	// getSQL looks each key of a JSON list up by the primary key (a join
	// with the list, where key IN (list) would first copy the list into
	// a temporary index).
	getSQL = `SELECT r.key, r.xxh64, r.value FROM json_each(?) j JOIN responses r ON r.key = j.value`
	putSQL = `INSERT OR REPLACE INTO responses (key, xxh64, value) VALUES (?, ?, ?)`

	// busyTimeout is how long a write waits for another process's
	// transaction, in milliseconds.
	busyTimeout = 30000
	// mmapSize is how much of the database each connection reads
	// through a memory map. Each connection maps the file on its own, so
	// the maps add up to this times the connections in use (a run's
	// reader and writer) to resident memory.
	mmapSize = 32 << 20
	// maxBatch is the most keys one query reads or one transaction
	// commits.
	maxBatch = 4096
	// putLinger is how long a transaction waits for more Puts while they
	// arrive together. Each transaction writes about a page per answer
	// (the keys are random) and pays for its locks and its WAL frames, so
	// fewer, larger ones cost less CPU time per answer; a run does not
	// wait for its Puts (BenchmarkPutPaced measures the cost per answer).
	putLinger = 20 * time.Millisecond
)

// Store is an open cache. Its methods are safe for concurrent use.
type Store struct {
	path          string
	db            *sql.DB
	get, put      *sql.Stmt
	reads, writes group
}

// group runs calls in batches: calls arriving while every slot is taken
// join the next batch, run by its first once a slot frees. With linger
// set, a batch that follows one of several calls stays open that long
// after taking its slot, so that calls arriving together run in few
// batches; a batch after a lone call runs at once, so calls made one
// after another do not wait.
type group struct {
	mu     sync.Mutex    // guards next and last
	next   *batch        // the batch a call joins; nil when none is open
	last   int           // the calls of the batch run last
	slots  chan struct{} // a token for each batch running
	linger time.Duration
	sleep  func(time.Duration) // time.Sleep (tests count the waits)
}

func newGroup(slots int, linger time.Duration) group {
	return group{slots: make(chan struct{}, slots), linger: linger, sleep: time.Sleep}
}

// batch is the keys (hex) and values of the calls of one run, the rows
// found by a batch of Gets, and its error once done is closed.
type batch struct {
	keys   []string
	values [][]byte
	found  map[string]row
	done   chan struct{}
	err    error
}

type row struct {
	sum   int64
	value []byte
}

// do adds key and value to the open batch (opening one when there is
// none, or it holds maxBatch) and returns it once fn has run it.
func (g *group) do(key string, value []byte, fn func(*batch) error) *batch {
	g.mu.Lock()
	b := g.next
	if b == nil || len(b.keys) == maxBatch {
		b = &batch{done: make(chan struct{})}
		g.next = b
	}
	b.keys = append(b.keys, key)
	b.values = append(b.values, value)
	first := len(b.keys) == 1
	g.mu.Unlock()
	if !first {
		<-b.done
		return b
	}
	g.slots <- struct{}{}
	g.mu.Lock()
	together := g.last > 1
	g.mu.Unlock()
	if g.linger > 0 && together {
		g.sleep(g.linger)
	} else {
		runtime.Gosched() // the calls ready to run join b first
	}
	g.mu.Lock()
	if g.next == b { // closed to later calls
		g.next = nil
	}
	g.last = len(b.keys)
	g.mu.Unlock()
	b.err = fn(b)
	<-g.slots
	close(b.done)
	return b
}

// wait waits for the batches running to end.
func (g *group) wait() {
	for range cap(g.slots) {
		g.slots <- struct{}{}
	}
	for range cap(g.slots) {
		<-g.slots
	}
}

// OpenReport says what Open found.
type OpenReport struct {
	Path      string // the database
	Converted string // what the conversion of an earlier-format cache did, or ""
}

// Open opens (creating if needed) the store in dir ("" for DefaultDir),
// first converting a cache in the earlier format found there (which
// waits for processes of an earlier version to close it).
func Open(dir string) (*Store, OpenReport, error) {
	dir = cmp.Or(dir, DefaultDir())
	rep := OpenReport{Path: filepath.Join(dir, FileName)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, rep, fmt.Errorf("opening cache: %w", err)
	}
	var err error
	if rep.Converted, err = convertOld(dir, rep.Path); err != nil {
		return nil, rep, err
	}
	db, err := openDB(rep.Path)
	if err != nil {
		return nil, rep, err
	}
	// As many batches of reads at once as processors; one of writes.
	readers := runtime.GOMAXPROCS(0)
	db.SetMaxOpenConns(readers + 2)
	db.SetMaxIdleConns(readers + 2)
	s := &Store{path: rep.Path, db: db, reads: newGroup(readers, 0), writes: newGroup(1, putLinger)}
	if s.get, err = db.Prepare(getSQL); err == nil {
		s.put, err = db.Prepare(putSQL)
	}
	if err != nil {
		db.Close()
		return nil, rep, fmt.Errorf("opening cache %s: %w", rep.Path, err)
	}
	return s, rep, nil
}

// openDB opens the database at path in WAL mode, creating it and its
// table if needed.
func openDB(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("opening cache %s: %w", path, err)
	}
	dsn := (&url.URL{Scheme: "file", Path: abs, RawQuery: fmt.Sprintf(
		"_busy_timeout=%d&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_pragma=mmap_size(%d)", busyTimeout, mmapSize)}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening cache %s: %w", path, err)
	}
	db.SetMaxOpenConns(2)
	db.SetMaxIdleConns(2)
	if err := createTable(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening cache %s: %w", path, err)
	}
	return db, nil
}

// createTable creates the table when missing. The first connection of a
// process sets WAL mode and reads the schema, where SQLite may answer
// SQLITE_BUSY without waiting (its busy handler is not called where waiting
// could deadlock) while other processes open the same new cache; that is
// retried until busyTimeout has passed.
func createTable(db *sql.DB) error {
	deadline := time.Now().Add(busyTimeout * time.Millisecond)
	for {
		err := createOnce(db)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// createOnce creates the table when missing, in a transaction that takes
// the write lock first (_txlock=immediate).
func createOnce(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec(schema); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Get returns the value stored under key. A row whose value does not
// match its checksum answers as a miss, with an error naming the file
// and the key. Gets that arrive while the readers are busy wait and
// read together in the next query (at most maxBatch of them).
func (s *Store) Get(key [32]byte) ([]byte, bool, error) {
	hk := hex.EncodeToString(key[:])
	b := s.reads.do(hk, nil, s.read)
	if b.err != nil {
		return nil, false, b.err
	}
	l := s.found(b, hk)
	return l.Value, l.Found, l.Err
}

// Lookup is what Get answers for one key.
type Lookup struct {
	Value []byte
	Found bool
	Err   error // the stored row does not match its checksum (Found is false)
}

// GetMany looks keys up as Get does each, in one query per maxBatch of
// them (Get batches only the calls that arrive together): out[i] is
// keys[i]'s. err is a failure to read the database.
func (s *Store) GetMany(keys [][32]byte) ([]Lookup, error) {
	out := make([]Lookup, 0, len(keys))
	for from := 0; from < len(keys); from += maxBatch {
		b := &batch{}
		for _, k := range keys[from:min(len(keys), from+maxBatch)] {
			b.keys = append(b.keys, hex.EncodeToString(k[:]))
		}
		if err := s.read(b); err != nil {
			return nil, err
		}
		for _, hk := range b.keys {
			out = append(out, s.found(b, hk))
		}
	}
	return out, nil
}

// found is the lookup of key hk in the rows b read.
func (s *Store) found(b *batch, hk string) Lookup {
	r, ok := b.found[hk]
	switch {
	case !ok:
		return Lookup{}
	case uint64(r.sum) != xxhash.Sum64(r.value):
		return Lookup{Err: fmt.Errorf("cache %s: the entry of key %s does not match its checksum (xxh64)", s.path, hk)}
	}
	return Lookup{Value: r.value, Found: true}
}

// read looks b's keys up in one query.
func (s *Store) read(b *batch) error {
	list, _ := json.Marshal(b.keys) // a []string always encodes
	rows, err := s.get.Query(string(list))
	if err != nil {
		return fmt.Errorf("reading cache %s: %w", s.path, err)
	}
	defer rows.Close()
	b.found = make(map[string]row, len(b.keys))
	for rows.Next() {
		var k string
		var r row
		if err := rows.Scan(&k, &r.sum, &r.value); err != nil {
			return fmt.Errorf("reading cache %s: %w", s.path, err)
		}
		b.found[k] = r
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading cache %s: %w", s.path, err)
	}
	return nil
}

// Put stores value under key and returns once the transaction holding
// it has committed. Puts that arrive while a transaction commits wait
// and commit together in the next one (at most maxBatch of them); when
// the last transaction held several, the next waits putLinger for more
// before it commits, so a Put among many returns within about putLinger
// plus two commits, and a lone Put after a lone Put at once. value must
// not change until Put returns.
func (s *Store) Put(key [32]byte, value []byte) error {
	return s.writes.do(hex.EncodeToString(key[:]), value, s.write).err
}

// write commits b's answers in one transaction.
func (s *Store) write(b *batch) error {
	tx, err := s.db.Begin()
	if err != nil {
		return fmt.Errorf("writing cache %s: %w", s.path, err)
	}
	st := tx.Stmt(s.put)
	for i, k := range b.keys {
		if _, err := st.Exec(k, int64(xxhash.Sum64(b.values[i])), b.values[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("writing cache %s, key %s: %w", s.path, k, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("writing cache %s: %w", s.path, err)
	}
	return nil
}

// Len is the number of keys stored (0 when the database cannot be
// read). It counts every row: its cost grows with the store.
func (s *Store) Len() int {
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM responses`).Scan(&n); err != nil {
		return 0
	}
	return n
}

// Keys returns every stored key whose value matches its checksum (for
// tests and tools); it reads the whole store.
func (s *Store) Keys() [][32]byte {
	rows, err := s.db.Query(`SELECT key, xxh64, value FROM responses`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out [][32]byte
	for rows.Next() {
		var k string
		var sum int64
		var v []byte
		if rows.Scan(&k, &sum, &v) != nil || uint64(sum) != xxhash.Sum64(v) {
			continue
		}
		if key, err := hex.DecodeString(k); err == nil && len(key) == 32 {
			out = append(out, [32]byte(key))
		}
	}
	return out
}

// Close waits for the queries and the transaction under way, if any,
// and closes the database. Calls after it fail; closing again does
// nothing.
func (s *Store) Close() error {
	s.reads.wait()
	s.writes.wait()
	if err := errors.Join(s.get.Close(), s.put.Close(), s.db.Close()); err != nil {
		return fmt.Errorf("closing cache %s: %w", s.path, err)
	}
	return nil
}

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

// convertOld copies dir's earlier-format cache into dbPath in one
// transaction under a flock of the log, removes the old files and says what
// it did ("" without a log); on an error every file stays as it was.
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

// copyLog puts the valid lines of the log r into dbPath in one transaction,
// returning how many it put and skipped.
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
	if _, err := hex.Decode(key[:], line[:64]); err != nil {
		return key, nil, false
	}
	want, err := strconv.ParseUint(string(line[65:73]), 16, 32)
	if err != nil {
		return key, nil, false
	}
	val = line[hdr : len(line)-1]
	return key, val, crc32.ChecksumIEEE(val) == uint32(want)
}
