package records

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Segment files.
//
// A seal makes a segment from the live file in three steps, each
// leaving a state every reader reads as the same records in the same
// order:
//
//  1. rename records.jsonl to records-N.jsonl (N one above the highest
//     segment number) and sync the directory: a plain segment, read like
//     a sealed one;
//  2. write it as records-N.parquet through a synced temporary file and a
//     rename (the Writer that began the live file builds that file as it
//     writes, its shadow, and the seal only ends it);
//  3. remove records-N.jsonl.
//
// A records-N.parquet is complete whenever it exists, so another file of
// segment N beside it (records-N.jsonl, an older records-N.jsonl.zst or
// records-N.lean) is a redundant copy every reader skips; hidden
// .records-*.tmp files are never read. The next writer under the
// exclusive lock finishes what a crash left (finishSeals).
const (
	segPrefix = "records-"
	segPlain  = ".jsonl"
	segZst    = ".jsonl.zst"
	segLean   = ".lean"
)

// File kinds of a records file.
const (
	kindLive  = iota // records.jsonl
	kindPlain        // records-N.jsonl: a seal in progress
	kindZst          // records-N.jsonl.zst: an older Bhasha's segment
	kindPq           // records-N.parquet
	kindLean         // records-N.lean: an older Bhasha's lean copy, never read
)

// recordFile is one file of a run's records.
type recordFile struct {
	path   string
	name   string // base name, as messages show it
	seg    int    // segment number; 0 for the live file
	kind   int
	damage *Damage // what open could not read of a damaged segment
}

// dirFiles is what a run directory holds of records files.
type dirFiles struct {
	files     []recordFile // in logical order
	redundant []string     // copies of a segment beside its Parquet file (step 3 not done)
	plain     []recordFile // plain segments alone (step 2 not done)
	old       []recordFile // an older Bhasha's segments, to convert
	temps     []string     // hidden temporary files of an interrupted seal or rewrite
	maxSeg    int
}

// parseSegment reads a segment file name: its number and kind (ok false
// when name is not one).
func parseSegment(name string) (n, kind int, ok bool) {
	rest, found := strings.CutPrefix(name, segPrefix)
	if !found {
		return 0, 0, false
	}
	var num string
	for _, k := range []struct {
		ext  string
		kind int
	}{{segExt, kindPq}, {segZst, kindZst}, {segPlain, kindPlain}, {segLean, kindLean}} {
		if s, ok := strings.CutSuffix(rest, k.ext); ok {
			num, kind = s, k.kind
			break
		}
	}
	if len(num) < 6 || strings.Trim(num, "0123456789") != "" {
		return 0, 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	return n, kind, true
}

// listFiles reads dir's records files.
func listFiles(dir string) (dirFiles, error) {
	var d dirFiles
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("listing records: %w", err)
	}
	segs := map[int]map[int]string{} // number -> kind -> name
	live := false
	for _, e := range es {
		name := e.Name()
		if name == FileName {
			live = true
			continue
		}
		if strings.HasPrefix(name, ".records") && strings.HasSuffix(name, ".tmp") {
			d.temps = append(d.temps, filepath.Join(dir, name))
			continue
		}
		n, kind, ok := parseSegment(name)
		if !ok {
			continue
		}
		if segs[n] == nil {
			segs[n] = map[int]string{}
		}
		segs[n][kind] = name
	}
	for _, n := range slices.Sorted(maps.Keys(segs)) {
		s := segs[n]
		d.maxSeg = n
		var f *recordFile
		for _, kind := range []int{kindPq, kindZst, kindPlain} {
			name, ok := s[kind]
			if !ok {
				continue
			}
			if f != nil {
				d.redundant = append(d.redundant, filepath.Join(dir, name))
				continue
			}
			f = &recordFile{path: filepath.Join(dir, name), name: name, seg: n, kind: kind}
		}
		if lean, ok := s[kindLean]; ok && (f == nil || f.kind == kindPq) {
			d.redundant = append(d.redundant, filepath.Join(dir, lean))
		}
		if f == nil {
			continue
		}
		d.files = append(d.files, *f)
		switch f.kind {
		case kindPlain:
			d.plain = append(d.plain, *f)
		case kindZst:
			d.old = append(d.old, *f)
		}
	}
	if live {
		d.files = append(d.files, recordFile{path: filepath.Join(dir, FileName), name: FileName})
	}
	return d, nil
}

// Files lists the files that hold dir's records, in their logical order:
// the sealed segments by number, then records.jsonl (see the package
// doc). A copy of a segment left beside its Parquet file by an
// interrupted seal is not listed. A directory without records gives none.
func Files(dir string) ([]string, error) {
	d, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range d.files {
		out = append(out, f.path)
	}
	return out, nil
}

// lineAt names line n of f as messages do: "line N" in records.jsonl,
// "records-000001.parquet line N" in a segment (its row N).
func lineAt(f *recordFile, n int) string {
	if f.seg == 0 {
		return fmt.Sprintf("line %d", n)
	}
	return fmt.Sprintf("%s line %d", f.name, n)
}

// walk calls fn with each of dir's records files in logical order: a
// Parquet segment whose footer reads as opened (s, which fn closes),
// another as lines (r). A seal running beside it never makes it miss or
// repeat a record.
func walk(dir string, fn func(f recordFile, r io.Reader, s *pqSegment) error) error {
	d, err := listFiles(dir)
	if err != nil {
		return err
	}
	last, retries := 0, 0
	again := func() error {
		if retries++; retries > 1000 {
			return fmt.Errorf("reading the records of %s: its files keep changing", dir)
		}
		d, err = listFiles(dir)
		return err
	}
	for {
		i := slices.IndexFunc(d.files, func(f recordFile) bool { return f.seg == 0 || f.seg > last })
		if i < 0 {
			return nil
		}
		f := d.files[i]
		var r io.ReadCloser
		var s *pqSegment
		if f.kind == kindPq {
			s, err = openSegment(f.path)
		}
		if s == nil && (err == nil || errors.Is(err, errNoFooter)) {
			r, err = f.open() // a footer that cannot be read: open names the damage
		}
		if errors.Is(err, os.ErrNotExist) {
			// A plain segment sealed, or records.jsonl sealed: look again.
			if err := again(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if f.seg == 0 {
			if err := again(); err != nil || d.maxSeg > last {
				r.Close()
				if err != nil {
					return err
				}
				continue
			}
			retries-- // not a retry
		}
		err = fn(f, r, s)
		if r != nil {
			r.Close()
		}
		if err != nil || f.seg == 0 {
			return err
		}
		last = f.seg
	}
}

// open opens a records file for reading as lines (a Parquet segment's
// rows as their lines), setting f.damage when a segment is damaged.
func (f *recordFile) open() (io.ReadCloser, error) {
	if f.kind == kindPq {
		s, err := openSegment(f.path)
		if errors.Is(err, errNoFooter) {
			f.damage = &Damage{File: f.name, Gaps: []string{strings.TrimPrefix(err.Error(), "reading "+f.path+": ")}}
			return io.NopCloser(bytes.NewReader(nil)), nil
		}
		if err != nil {
			return nil, err
		}
		defer s.close()
		var data []byte
		f.damage, _ = s.eachGroup(nil, true, func(_ int, _ bool, lines []byte) error {
			data = append(data, lines...)
			return nil
		})
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("reading records: %w", err)
	}
	if f.kind != kindZst {
		return fh, nil
	}
	zr, err := zstd.NewReader(bufio.NewReaderSize(fh, 1<<20), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<34))
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("reading %s: %w", f.path, err)
	}
	return &zstdFile{zr: zr, f: fh, path: f.path}, nil
}

// zstdFile reads an older compressed segment; errors name it.
type zstdFile struct {
	zr   *zstd.Decoder
	f    *os.File
	path string
}

func (z *zstdFile) Read(p []byte) (int, error) {
	n, err := z.zr.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("decompressing %s: %w (the segment is damaged)", z.path, err)
	}
	return n, err
}

func (z *zstdFile) Close() error {
	z.zr.Close()
	return z.f.Close()
}

// syncDir makes the renames and removals in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// toParquet is steps 2 and 3 of a seal: the plain segment f, or an older
// Bhasha's compressed one, becomes its Parquet segment, and f (with an
// older segment's lean copy) is removed. The segment of sh, the shadow of
// f's records (nil: none), stands for the conversion when it commits.
func toParquet(f recordFile, sh *shadow) error {
	dir := filepath.Dir(f.path)
	dst := filepath.Join(dir, SegmentName(f.seg))
	done := false
	if sh != nil {
		done, _ = sh.finish(sh.seg == f.seg && f.kind != kindZst)
	} else if f.kind != kindZst {
		if _, err := endsInNewline(f.path); err != nil {
			return err
		}
	}
	if !done {
		if err := writeSegment(dst, f.path, segGroupRows, func(add func([]byte) error) error {
			return f.eachLine(func(line []byte, _ int) error { return add(line) })
		}); err != nil {
			return err
		}
	}
	remove := []string{f.path}
	if f.kind == kindZst {
		remove = append(remove, filepath.Join(dir, fmt.Sprintf("%s%06d%s", segPrefix, f.seg, segLean)))
	}
	for _, p := range remove {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sealing %s: %w", dst, err)
		}
	}
	return syncDir(dir)
}

// endsInNewline refuses to seal the file path when its last line is torn
// (a segment holds whole lines only), and returns its size.
func endsInNewline(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("sealing %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	var b [1]byte
	if err == nil && fi.Size() > 0 {
		_, err = f.ReadAt(b[:], fi.Size()-1)
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("sealing %s: %w", path, err)
	case fi.Size() > 0 && b[0] != '\n':
		return 0, fmt.Errorf("sealing %s: its last line is incomplete (a torn record: open the run again to repair it)", path)
	}
	return fi.Size(), nil
}

// finishSeals completes the seals interrupted in dir and converts an
// older Bhasha's segments, each said to log (when not nil); a failed
// conversion is said, not returned. It needs the exclusive lock.
func finishSeals(dir string, log func(string)) error {
	d, err := listFiles(dir)
	if err != nil {
		return err
	}
	for _, p := range d.redundant {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("removing %s, a copy of a sealed segment: %w", p, err)
		}
	}
	for _, t := range d.temps {
		if err := os.Remove(t); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", t, err)
		}
	}
	if len(d.redundant)+len(d.temps) > 0 {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	for _, f := range d.plain {
		if err := toParquet(f, nil); err != nil {
			return err
		}
	}
	for _, f := range d.old {
		err := toParquet(f, nil)
		switch {
		case log == nil:
		case err != nil:
			log(fmt.Sprintf("warning: %s stays as it is, still read: converting it to Parquet: %v", f.name, err))
		default:
			log(fmt.Sprintf("%s converted to %s (Parquet; the older segment and its lean copy removed)", f.name, SegmentName(f.seg)))
		}
	}
	return nil
}

// sealLive is step 1 of a seal: dir's live file becomes the plain segment
// returned (path "" when the live file is missing or empty).
func sealLive(dir string) (recordFile, error) {
	d, err := listFiles(dir)
	if err != nil {
		return recordFile{}, err
	}
	live := filepath.Join(dir, FileName)
	size, err := endsInNewline(live)
	if errors.Is(err, os.ErrNotExist) {
		return recordFile{}, nil
	}
	if err != nil || size == 0 {
		return recordFile{}, err
	}
	n := d.maxSeg + 1
	name := fmt.Sprintf("%s%06d%s", segPrefix, n, segPlain)
	plain := recordFile{path: filepath.Join(dir, name), name: name, seg: n}
	if err := os.Rename(live, plain.path); err != nil {
		return recordFile{}, fmt.Errorf("sealing %s: %w", live, err)
	}
	if err := syncDir(dir); err != nil {
		return recordFile{}, fmt.Errorf("sealing %s: %w", live, err)
	}
	return plain, nil
}

// Seal seals dir's records.jsonl into the next segment when it holds more
// than min bytes, after finishing what an interrupted seal left and
// converting an older Bhasha's segments (see the package doc), each
// conversion said to log when it is not nil. lk must be dir's exclusive
// lock. It returns the new segment's name, or "" when it sealed nothing.
func Seal(lk *Lock, dir string, min int64, log func(string)) (string, error) {
	if err := lk.holds(dir); err != nil {
		return "", err
	}
	if err := finishSeals(dir, log); err != nil {
		return "", err
	}
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if errors.Is(err, os.ErrNotExist) || (err == nil && fi.Size() <= min) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sealing records: %w", err)
	}
	plain, err := sealLive(dir)
	if err != nil || plain.path == "" {
		return "", err
	}
	if err := toParquet(plain, nil); err != nil {
		return "", err
	}
	return SegmentName(plain.seg), nil
}
