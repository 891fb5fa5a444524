package cache

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"sort"

	"github.com/bhashalab/bhasha/internal/atomicfile"
)

// IndexName is the name of the log's index on disk, beside it.
const IndexName = "responses.idx"

// The index file, all integers little-endian:
//
//	header (88 bytes):
//	  [0:8]   magic "BHCIDX1\n"
//	  [8:16]  n, the number of entries
//	  [16:24] covered: every good line of the log before this offset has
//	          its entry (a later line of a key replacing an earlier one's)
//	  [24:32] corrupt: lines before covered that did not validate
//	  [32:40] offset and [40:48] length of the last good line before
//	          covered (0 and 0 when covered is 0)
//	  [48:80] that line's key
//	  [80:84] CRC-32 (IEEE) of the entries
//	  [84:88] CRC-32 (IEEE) of bytes [0:84]
//	n entries (24 bytes each), in increasing order of frag, no frag twice:
//	  frag.hi, frag.lo, place
//
// The index is derived from the log and only ever replaced whole
// (internal/atomicfile: a temporary file, synced, renamed over it): one
// that does not validate (magic, CRCs, order, size) or does not match the log (shorter
// than covered, or the line before covered not the one recorded) is
// rebuilt from the log, which stays the only record of the answers.
// Entries may also point past covered (a process's own lines while
// another appended between them); Open indexes the log from covered
// again, and the memory index, read first, shadows them.
const (
	idxMagic     = "BHCIDX1\n"
	idxHeaderLen = 88
	idxEntryLen  = 24
	idxBlock     = 64 // entries a lookup reads: 1,536 bytes
)

type idxHeader struct {
	n, covered, corrupt int64
	last                loc
	lastKey             [32]byte
	sum                 uint32
}

func (h idxHeader) encode() []byte {
	b := make([]byte, idxHeaderLen)
	copy(b, idxMagic)
	le := binary.LittleEndian
	le.PutUint64(b[8:], uint64(h.n))
	le.PutUint64(b[16:], uint64(h.covered))
	le.PutUint64(b[24:], uint64(h.corrupt))
	le.PutUint64(b[32:], uint64(h.last.off))
	le.PutUint64(b[40:], uint64(h.last.n))
	copy(b[48:80], h.lastKey[:])
	le.PutUint32(b[80:], h.sum)
	le.PutUint32(b[84:], crc32.ChecksumIEEE(b[:84]))
	return b
}

func decodeHeader(b []byte) (idxHeader, error) {
	var h idxHeader
	le := binary.LittleEndian
	switch {
	case len(b) < idxHeaderLen || string(b[:8]) != idxMagic:
		return h, errors.New("not an index file of this version")
	case le.Uint32(b[84:]) != crc32.ChecksumIEEE(b[:84]):
		return h, errors.New("its header's checksum does not match")
	}
	h.n, h.covered, h.corrupt = int64(le.Uint64(b[8:])), int64(le.Uint64(b[16:])), int64(le.Uint64(b[24:]))
	h.last = loc{off: int64(le.Uint64(b[32:])), n: int32(le.Uint64(b[40:]))}
	copy(h.lastKey[:], b[48:80])
	h.sum = le.Uint32(b[80:])
	if h.n < 0 || h.covered < 0 || h.corrupt < 0 || h.last.off < 0 || h.last.n < 0 || h.n > 1<<40 {
		return h, errors.New("its header holds a negative or impossible count")
	}
	return h, nil
}

// diskIndex is the sorted table on disk, read by block: firsts holds the
// first frag of each block of idxBlock entries (16 bytes a block, 0.25
// bytes an entry), and a lookup reads the one block that can hold a frag.
type diskIndex struct {
	f      *os.File // nil when there is no table
	h      idxHeader
	firsts []frag
}

func putEntry(b []byte, f frag, p place) {
	binary.LittleEndian.PutUint64(b, f.hi)
	binary.LittleEndian.PutUint64(b[8:], f.lo)
	binary.LittleEndian.PutUint64(b[16:], uint64(p))
}

func getEntry(b []byte) (frag, place) {
	le := binary.LittleEndian
	return frag{le.Uint64(b), le.Uint64(b[8:])}, place(le.Uint64(b[16:]))
}

// openDisk opens the index at path and checks it against the log (read
// through lineAt, logSize bytes long). A missing index is an empty one;
// one that fails a check is reported in why and treated as missing.
func openDisk(path string, logSize int64, lineAt func(loc) ([]byte, error)) (d *diskIndex, why string, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &diskIndex{}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("opening cache index: %w", err)
	}
	d = &diskIndex{f: f}
	if bad := d.load(logSize, lineAt); bad != "" {
		f.Close()
		return &diskIndex{}, fmt.Sprintf("cache index %s %s; rebuilt from the log", path, bad), nil
	}
	return d, "", nil
}

// load reads and checks the table, returning what is wrong with it.
func (d *diskIndex) load(logSize int64, lineAt func(loc) ([]byte, error)) string {
	br := bufio.NewReaderSize(d.f, 1<<20)
	hb := make([]byte, idxHeaderLen)
	if _, err := io.ReadFull(br, hb); err != nil {
		return "is shorter than its header"
	}
	h, err := decodeHeader(hb)
	if err != nil {
		return err.Error()
	}
	if st, err := d.f.Stat(); err != nil || st.Size() != idxHeaderLen+h.n*idxEntryLen {
		return "is not as long as its header says"
	}
	if h.covered > logSize {
		return fmt.Sprintf("covers %d bytes of a log now %d long", h.covered, logSize)
	}
	if h.covered > 0 {
		line, err := lineAt(h.last)
		if err != nil {
			return fmt.Sprintf("names a last line the log does not hold (%v)", err)
		}
		k, _, _, ok := parseLine(line)
		if !ok || k != h.lastKey || h.last.off+int64(len(line)) != h.covered {
			return "names a last line the log does not hold"
		}
	}
	crc := uint32(0)
	buf := make([]byte, idxBlock*idxEntryLen)
	d.firsts = make([]frag, 0, (h.n+idxBlock-1)/idxBlock)
	var prev frag
	for i := int64(0); i < h.n; i += idxBlock {
		b := buf[:min(idxBlock, h.n-i)*idxEntryLen]
		if _, err := io.ReadFull(br, b); err != nil {
			return "is shorter than its header says"
		}
		crc = crc32.Update(crc, crc32.IEEETable, b)
		for j := 0; j < len(b); j += idxEntryLen {
			f, _ := getEntry(b[j:])
			if (i > 0 || j > 0) && prev.cmp(f) >= 0 {
				return "is out of order"
			}
			prev = f
		}
		first, _ := getEntry(b)
		d.firsts = append(d.firsts, first)
	}
	if crc != h.sum {
		return "does not match its checksum"
	}
	d.h = h
	return ""
}

// get returns f's place.
func (d *diskIndex) get(f frag) (place, bool, error) {
	if d.f == nil {
		return 0, false, nil
	}
	b := sort.Search(len(d.firsts), func(i int) bool { return d.firsts[i].cmp(f) > 0 }) - 1
	if b < 0 {
		return 0, false, nil
	}
	lo := int64(b) * idxBlock
	var buf [idxBlock * idxEntryLen]byte
	blk := buf[:min(idxBlock, d.h.n-lo)*idxEntryLen]
	if _, err := d.f.ReadAt(blk, idxHeaderLen+lo*idxEntryLen); err != nil {
		return 0, false, fmt.Errorf("reading cache index %s: %w", d.f.Name(), err)
	}
	n := len(blk) / idxEntryLen
	i := sort.Search(n, func(i int) bool { g, _ := getEntry(blk[i*idxEntryLen:]); return g.cmp(f) >= 0 })
	if i < n {
		if g, p := getEntry(blk[i*idxEntryLen:]); g == f {
			return p, true, nil
		}
	}
	return 0, false, nil
}

// each calls fn with every entry, in order, until fn returns false.
func (d *diskIndex) each(fn func(frag, place) bool) error {
	if d.f == nil {
		return nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(d.f, idxHeaderLen, d.h.n*idxEntryLen), 1<<16)
	var e [idxEntryLen]byte
	for range d.h.n {
		if _, err := io.ReadFull(br, e[:]); err != nil {
			return fmt.Errorf("reading cache index %s: %w", d.f.Name(), err)
		}
		if !fn(getEntry(e[:])) {
			return nil
		}
	}
	return nil
}

func (d *diskIndex) close() error {
	if d.f == nil {
		return nil
	}
	return d.f.Close()
}

// merge writes the union of d and mem (mem's entry where both hold a
// frag) under h's covered, corrupt and last line as a new table at path
// (internal/atomicfile: synced, then renamed over it), and returns it
// opened. On an error nothing at path changes and d stays usable.
func (d *diskIndex) merge(path string, mem *memIndex, h idxHeader) (*diskIndex, error) {
	out, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("writing cache index: %w", err)
	}
	defer out.Abort()
	// The table is read through a descriptor of its own, opened before the
	// rename: a process that renames its table over this one meanwhile
	// changes the name, not what this one reads.
	rf, err := os.Open(out.Name())
	if err != nil {
		return nil, fmt.Errorf("writing cache index %s: %w", path, err)
	}
	nd := &diskIndex{f: rf}
	if err := d.write(out, mem, &h, nd); err != nil {
		rf.Close()
		return nil, fmt.Errorf("writing cache index %s: %w", path, err)
	}
	if err := out.Commit(); err != nil {
		rf.Close()
		return nil, err
	}
	nd.h = h
	d.close()
	return nd, nil
}

// write writes the merged table to w (its header last, at 0), counting
// and summing its entries in h and noting each block's first in nd.
func (d *diskIndex) write(w *atomicfile.File, mem *memIndex, h *idxHeader, nd *diskIndex) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(make([]byte, idxHeaderLen)); err != nil {
		return err
	}
	var buf [idxBlock * idxEntryLen]byte
	fill := 0
	flush := func() error {
		h.sum = crc32.Update(h.sum, crc32.IEEETable, buf[:fill*idxEntryLen])
		_, err := bw.Write(buf[:fill*idxEntryLen])
		fill = 0
		return err
	}
	emit := func(f frag, p place) error {
		if fill == 0 {
			nd.firsts = append(nd.firsts, f)
		}
		putEntry(buf[fill*idxEntryLen:], f, p)
		h.n++
		if fill++; fill == idxBlock {
			return flush()
		}
		return nil
	}
	order := mem.sorted()
	k := 0
	h.n, h.sum = 0, 0
	var werr error
	err := d.each(func(f frag, p place) bool {
		for ; k < len(order) && werr == nil; k++ {
			mf, mp := mem.entry(int(order[k]))
			if c := mf.cmp(f); c > 0 {
				break
			} else if c == 0 {
				p = mp // the memory's entry is the newer
				k++
				break
			}
			werr = emit(mf, mp)
		}
		if werr == nil {
			werr = emit(f, p)
		}
		return werr == nil
	})
	for ; err == nil && werr == nil && k < len(order); k++ {
		werr = emit(mem.entry(int(order[k])))
	}
	if err == nil {
		err = werr
	}
	if err == nil && fill > 0 {
		err = flush()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		_, err = w.WriteAt(h.encode(), 0)
	}
	return err
}
