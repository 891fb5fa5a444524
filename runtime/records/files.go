package records

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// Segment files.
//
// A run's records are the sealed segments in number order, then the live
// file:
//
//	records-000001.jsonl.zst  records-000002.jsonl.zst  ...  records.jsonl
//
// A segment is zstd frames (RFC 8878; frames.go) of whole record lines, in
// the grammar of records.jsonl, read as one stream; it is never appended to. sealLive makes one
// from the live file in three steps, each of which leaves a state every
// reader reads as the same records in the same order:
//
//  1. rename records.jsonl to records-N.jsonl (N one above the highest
//     segment number) and fsync the directory: a plain segment, read
//     like a sealed one; the writer starts a new records.jsonl.
//  2. compress it into .records-N.jsonl.zst-*.tmp, fsync it, rename it to
//     records-N.jsonl.zst and fsync the directory.
//  3. remove records-N.jsonl.
//
// The rule a crash leaves to the next open: a records-N.jsonl.zst is
// complete whenever it exists (it gets its name only once written and
// synced), so a records-N.jsonl beside it is the redundant copy of step 3
// and is skipped by every reader; a records-N.jsonl alone is the segment.
// Hidden .records-*.tmp files are never read. The next writer under the
// exclusive lock (CreateWith, Seal, Commit) finishes what a crash left:
// it compresses a plain segment, removes a redundant copy and stale
// temporary files.
const (
	segPrefix = "records-"
	segPlain  = ".jsonl"
	segZst    = ".jsonl.zst"
)

// SegmentName is the file name of segment n, compressed.
func SegmentName(n int) string { return fmt.Sprintf("%s%06d%s", segPrefix, n, segZst) }

// recordFile is one file of a run's records.
type recordFile struct {
	path string
	name string // base name, as messages show it
	seg  int    // segment number; 0 for the live file
	zst  bool
	// verified: the segment's seal holds, so every line is as sealed
	// (set by open).
	verified bool
	// leanOK: open gives a segment with a lean copy to read (lean.go)
	// as that (framedSegment.lean), its seal taken as the lean copy's.
	leanOK bool
	dec    *segDecoder // walk's decoder and buffer, reused by open (nil: open makes its own)
	// damage: open found the segment damaged, and gives what can be
	// read of it (damage.go).
	damage *Damage
}

// dirFiles is what a run directory holds of records files.
type dirFiles struct {
	files     []recordFile // in logical order
	redundant []string     // plain segments beside their compressed one (step 3 not done)
	plain     []recordFile // plain segments alone (step 2 not done)
	temps     []string     // hidden temporary files of an interrupted seal or rewrite
	maxSeg    int
}

// parseSegment reads a segment file name: its number and whether it is
// compressed (ok false when name is not one).
func parseSegment(name string) (n int, zst, ok bool) {
	rest, found := strings.CutPrefix(name, segPrefix)
	if !found {
		return 0, false, false
	}
	var num string
	switch {
	case strings.HasSuffix(rest, segZst):
		num, zst = strings.TrimSuffix(rest, segZst), true
	case strings.HasSuffix(rest, segPlain):
		num = strings.TrimSuffix(rest, segPlain)
	default:
		return 0, false, false
	}
	if len(num) < 6 || strings.Trim(num, "0123456789") != "" {
		return 0, false, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return 0, false, false
	}
	return n, zst, true
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
	type seg struct{ plain, zst bool }
	segs := map[int]*seg{}
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
		n, zst, ok := parseSegment(name)
		if !ok {
			continue
		}
		s := segs[n]
		if s == nil {
			s = &seg{}
			segs[n] = s
		}
		if zst {
			s.zst = true
		} else {
			s.plain = true
		}
	}
	for _, n := range slices.Sorted(func(yield func(int) bool) {
		for n := range segs {
			if !yield(n) {
				return
			}
		}
	}) {
		s := segs[n]
		d.maxSeg = n
		plain := fmt.Sprintf("%s%06d%s", segPrefix, n, segPlain)
		if s.zst {
			name := SegmentName(n)
			d.files = append(d.files, recordFile{path: filepath.Join(dir, name), name: name, seg: n, zst: true})
			if s.plain {
				d.redundant = append(d.redundant, filepath.Join(dir, plain))
			}
			continue
		}
		f := recordFile{path: filepath.Join(dir, plain), name: plain, seg: n}
		d.files = append(d.files, f)
		d.plain = append(d.plain, f)
	}
	if live {
		d.files = append(d.files, recordFile{path: filepath.Join(dir, FileName), name: FileName})
	}
	return d, nil
}

// Files lists the files that hold dir's records, in their logical order:
// the sealed segments by number, then records.jsonl (see the package
// doc). A plain segment left beside its compressed copy by an interrupted
// seal is not listed. A directory without records gives none.
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
// "records-000001.jsonl.zst line N" in a segment.
func lineAt(f recordFile, n int) string {
	if f.seg == 0 {
		return fmt.Sprintf("line %d", n)
	}
	return fmt.Sprintf("%s line %d", f.name, n)
}

// walk calls fn with each of dir's records files in logical order, opened
// for reading, and reports whether there was any. A seal running beside it
// (a reader without the shared lock, while a run writes) never makes it
// miss or repeat a record: what it reads is the records at some moment,
// a prefix of what they are later. A segment it was told of but that was
// compressed meanwhile is read in its compressed form; records.jsonl is
// read only when, once it is open, no segment above the last one read has
// appeared (else it may be a new live file begun after a seal, and the
// segments made meanwhile come first). Segment numbers only grow while a
// writer holds the lock, so none is skipped.
func walk(dir string, fn func(f recordFile, r io.Reader) error) (bool, error) {
	return walkLean(dir, false, fn)
}

// walkLean is walk, giving a segment with a lean copy to read as that
// when lean (recordFile.leanOK).
func walkLean(dir string, lean bool, fn func(f recordFile, r io.Reader) error) (bool, error) {
	d, err := listFiles(dir)
	if err != nil {
		return false, err
	}
	any, last, retries := false, 0, 0
	var dec segDecoder // one for every segment
	defer dec.close()
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
			return any, nil
		}
		f := d.files[i]
		if f.zst {
			f.dec = &dec
			f.leanOK = lean
		}
		r, err := f.open()
		f.dec = nil
		if errors.Is(err, os.ErrNotExist) {
			// A plain segment compressed, or records.jsonl sealed: look again.
			if err := again(); err != nil {
				return any, err
			}
			continue
		}
		if err != nil {
			return any, err
		}
		if f.seg == 0 {
			if err := again(); err != nil {
				r.Close()
				return any, err
			}
			if d.maxSeg > last {
				r.Close()
				continue
			}
			retries-- // not a retry
		}
		any = true
		err = fn(f, r)
		r.Close()
		if err != nil || f.seg == 0 {
			return any, err
		}
		last = f.seg
	}
}

// open opens a records file for reading, decompressing a segment, and
// sets f.verified when the segment's seal holds (segseal.go). With
// f.dec, a segment of at most wholeMaxCompressed bytes is read whole into
// f.dec's buffer: a *framedSegment when it is to be read frame by frame
// (frames.go), else streamed from memory. A segment of at most
// wholeMaxCompressed bytes whose seal does not hold and that is damaged
// gives what can be read of it, and sets f.damage (damage.go): its lines,
// or with f.leanOK its intact lean copy's records.
func (f *recordFile) open() (io.ReadCloser, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("reading records: %w", err)
	}
	if !f.zst {
		return fh, nil
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("reading %s: %w", f.path, err)
	}
	if f.dec != nil && st.Size() <= wholeMaxCompressed {
		defer fh.Close()
		if int64(cap(f.dec.comp)) < st.Size() {
			f.dec.comp = make([]byte, st.Size())
		}
		comp := f.dec.comp[:st.Size()]
		if _, err := io.ReadFull(fh, comp); err != nil {
			return nil, fmt.Errorf("reading %s: %w", f.path, err)
		}
		if f.leanOK {
			if lean := loadLean(f.path, comp); lean != nil {
				f.verified = true
				return &framedSegment{path: f.path, size: st.Size(), d: f.dec, comp: comp, lean: lean}, nil
			}
		}
		f.verified = sealedBytes(comp)
		if !f.verified {
			if r, ok, err := f.salvaged(comp, st.Size()); ok || err != nil {
				return r, err
			}
		}
		seg := &framedSegment{path: f.path, size: st.Size(), d: f.dec, comp: comp}
		if fs, ok, err := framesOf(comp); err == nil && ok {
			seg.frames = fs
		}
		return seg, nil
	}
	if f.verified, err = segmentSealed(fh, st.Size()); err != nil {
		fh.Close()
		return nil, fmt.Errorf("reading %s: %w", f.path, err)
	}
	if !f.verified && st.Size() <= wholeMaxCompressed {
		comp := make([]byte, st.Size())
		if _, err := fh.ReadAt(comp, 0); err != nil {
			fh.Close()
			return nil, fmt.Errorf("reading %s: %w", f.path, err)
		}
		if r, ok, err := f.salvaged(comp, st.Size()); ok || err != nil {
			fh.Close()
			return r, err
		}
	}
	if f.dec != nil { // a decoder reused from segment to segment
		zr, err := f.dec.streamer(bufio.NewReaderSize(fh, 1<<20))
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("reading %s: %w", f.path, err)
		}
		return &zstdFile{zr: zr, f: fh, path: f.path, shared: true}, nil
	}
	zr, err := newDecoder(bufio.NewReaderSize(fh, 1<<20))
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("reading %s: %w", f.path, err)
	}
	return &zstdFile{zr: zr, f: fh, path: f.path}, nil
}

// salvaged is what open gives of the segment f, read whole into comp
// (size bytes), whose seal does not hold: ok false when it is not damaged
// (it is then read as it is), else what can be read of it (f.damage set).
func (f *recordFile) salvaged(comp []byte, size int64) (io.ReadCloser, bool, error) {
	lines, dm, err := salvage(f.path, comp)
	if err != nil || dm == nil {
		return nil, false, err
	}
	f.damage = dm
	if f.leanOK && dm.leanData != nil {
		dm.Lean = filepath.Base(leanName(f.path))
		f.verified = true // the lean copy's records are as sealed
		seg := &framedSegment{path: f.path, size: size, d: f.dec, lean: dm.leanData}
		dm.leanData = nil
		return seg, true, nil
	}
	return io.NopCloser(bytes.NewReader(lines)), true, nil
}

// newDecoder is a segment's zstd decoder.
func newDecoder(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<34))
}

// zstdFile reads a compressed segment; errors name it.
type zstdFile struct {
	zr     *zstd.Decoder
	f      *os.File
	path   string
	shared bool // zr is walk's, left open by Close
}

func (z *zstdFile) Read(p []byte) (int, error) {
	n, err := z.zr.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("decompressing %s: %w (the segment is damaged)", z.path, err)
	}
	return n, err
}

func (z *zstdFile) Close() error {
	if !z.shared {
		z.zr.Close()
	}
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

// compressTo writes what write writes as the compressed segment dst: into
// a temporary file, synced, then renamed, and the directory synced.
func compressTo(dst string, write func(io.Writer) error) error {
	return replaceFile(dst, true, write)
}

// replaceFile writes what write writes (compressed when zst) into a
// temporary file beside path, syncs it, renames it to path and syncs the
// directory: path holds either its old content or all of the new.
func replaceFile(path string, zst bool, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	fail := func(err error) error {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil { // as records.jsonl is made
		return fail(err)
	}
	// A segment's compressed bytes are hashed on their way to the file,
	// and its lines' seals checked on their way into the encoder: the
	// segment seal (segseal.go) is appended when every line was sealed.
	sum, xx := sha256.New(), xxhash.New() // the seal's digest, and the lean copy's
	var out io.Writer = tmp
	if zst {
		out = io.MultiWriter(tmp, sum, xx)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	var w io.Writer = bw
	var zw *frameWriter
	var seals *lineSeals
	var lean *leanBuilder // a segment's lean copy (lean.go)
	if zst {
		if zw, err = newFrameWriter(bw); err != nil {
			return fail(err)
		}
		seals = newLineSeals()
		w = io.MultiWriter(zw, seals)
		if _, _, ok := parseSegment(filepath.Base(path)); ok {
			if lean, err = newLeanBuilder(); err != nil {
				zw.Close()
				return fail(err)
			}
			defer lean.close()
			w = io.MultiWriter(zw, seals, lean)
		}
	}
	if err := write(w); err != nil {
		if zw != nil {
			zw.Close()
		}
		return fail(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fail(err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	sealed := seals != nil && seals.sealed() && seals.lines > 0
	if sealed {
		if _, err := tmp.Write(segSealOf(sum.Sum(nil))); err != nil {
			return fail(fmt.Errorf("sealing the segment: %w", err))
		}
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if lean != nil {
		// A segment rewritten loses its old lean copy before it changes.
		if err := os.Remove(leanName(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("writing %s: removing its old lean copy: %w", path, err)
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if lean != nil {
		// The lean copy is a reader's shortcut: one that cannot be
		// written (a full disk) is left out, the segment read instead.
		if data, ok := lean.file(sum.Sum(nil), xx.Sum64()); ok && sealed {
			_ = writeLean(path, data)
		}
	}
	return nil
}

// compressPlain is steps 2 and 3 of a seal: the plain segment f becomes
// its compressed one.
func compressPlain(f recordFile) error {
	src, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("sealing %s: %w", f.path, err)
	}
	defer src.Close()
	if err := endsInNewline(src, f.path); err != nil {
		return err
	}
	dst := filepath.Join(filepath.Dir(f.path), SegmentName(f.seg))
	if err := compressTo(dst, func(w io.Writer) error { _, err := io.Copy(w, bufio.NewReaderSize(src, 1<<20)); return err }); err != nil {
		return err
	}
	if err := os.Remove(f.path); err != nil {
		return fmt.Errorf("sealing %s: %w", dst, err)
	}
	return syncDir(filepath.Dir(f.path))
}

// endsInNewline refuses to seal a file whose last line is torn (a segment
// holds whole lines only).
func endsInNewline(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sealing %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], fi.Size()-1); err != nil {
		return fmt.Errorf("sealing %s: %w", path, err)
	}
	if b[0] != '\n' {
		return fmt.Errorf("sealing %s: its last line is incomplete (a torn record: open the run again to repair it)", path)
	}
	return nil
}

// finishSeals completes what an interrupted seal left in dir: a plain
// segment alone is compressed, a plain copy beside its compressed segment
// and temporary files are removed. It must run under the exclusive lock.
func finishSeals(dir string) (bool, error) {
	d, err := listFiles(dir)
	if err != nil {
		return false, err
	}
	did := false
	for _, p := range d.redundant {
		if err := os.Remove(p); err != nil {
			return did, fmt.Errorf("removing %s, a copy of a sealed segment: %w", p, err)
		}
		did = true
	}
	for _, t := range d.temps {
		if err := os.Remove(t); err != nil && !errors.Is(err, os.ErrNotExist) {
			return did, fmt.Errorf("removing %s: %w", t, err)
		}
		did = true
	}
	if did {
		if err := syncDir(dir); err != nil {
			return did, err
		}
	}
	for _, f := range d.plain {
		if err := compressPlain(f); err != nil {
			return did, err
		}
		did = true
	}
	return did, nil
}

// sealLive seals dir's live file into the next segment (steps 1 to 3) and
// returns the segment's name ("" when the live file is missing or empty).
func sealLive(dir string) (string, error) {
	plain, err := renameLive(dir)
	if err != nil || plain == nil {
		return "", err
	}
	if err := compressPlain(*plain); err != nil {
		return "", err
	}
	return SegmentName(plain.seg), nil
}

// renameLive is step 1 of a seal: dir's live file becomes the plain
// segment it returns (nil when the live file is missing or empty).
func renameLive(dir string) (*recordFile, error) {
	d, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	live := filepath.Join(dir, FileName)
	f, err := os.Open(live)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sealing %s: %w", live, err)
	}
	err = endsInNewline(f, live)
	fi, serr := f.Stat()
	f.Close()
	if err != nil {
		return nil, err
	}
	if serr != nil || fi.Size() == 0 {
		return nil, serr
	}
	n := d.maxSeg + 1
	plain := recordFile{path: filepath.Join(dir, fmt.Sprintf("%s%06d%s", segPrefix, n, segPlain)), seg: n}
	plain.name = filepath.Base(plain.path)
	if err := os.Rename(live, plain.path); err != nil {
		return nil, fmt.Errorf("sealing %s: %w", live, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, fmt.Errorf("sealing %s: %w", live, err)
	}
	return &plain, nil
}

// Seal seals dir's records.jsonl into the next compressed segment when it
// holds more than min bytes, after finishing what an interrupted seal
// left (see the package doc). lk must be dir's exclusive lock. It returns
// the new segment's name, or "" when it sealed nothing.
func Seal(lk *Lock, dir string, min int64) (string, error) {
	if err := lk.holds(dir); err != nil {
		return "", err
	}
	if _, err := finishSeals(dir); err != nil {
		return "", err
	}
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if errors.Is(err, os.ErrNotExist) || (err == nil && fi.Size() <= min) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sealing records: %w", err)
	}
	return sealLive(dir)
}
