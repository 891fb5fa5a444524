package report

import (
	"bytes"
	"io"
	"runtime"

	"github.com/klauspost/compress/flate"
)

// pflate compresses what is written to it as one deflate stream (RFC
// 1951), chunk by chunk on several goroutines, as pigz does: each chunk
// is compressed with the 32 KiB before it as its dictionary and ends in a
// sync flush (the last one in the final block), and the chunks are
// written in order, so the stream is one any inflater reads. A
// workbook's long sheets are most of its bytes: their compression then
// runs beside the writing of their rows.
type pflate struct {
	out     io.Writer
	level   int
	size    int // bytes per chunk
	cur     []byte
	prev    []byte // the last 32 KiB written before cur
	pending []*pchunk
	slots   chan struct{} // bounds the chunks being compressed
	err     error
	// What a chunk is done with, for the next ones: its compressor
	// (ResetDict gives it the next chunk's dictionary), the buffer its
	// bytes were in and the one its output was in. A stream of hundreds of
	// chunks otherwise makes a compressor (about a megabyte of tables) and
	// two buffers for each: a third of what a report allocates.
	writers chan *flate.Writer
	buffers chan []byte
	outs    chan *bytes.Buffer
}

// pchunk is one chunk being compressed.
type pchunk struct {
	done chan struct{}
	out  *bytes.Buffer
	err  error
}

// pflateWindow is deflate's window: the dictionary each chunk starts with.
const pflateWindow = 32 << 10

// newPflate returns a pflate writing into out at level, with chunks of
// size bytes (0: 1 MiB) on at most GOMAXPROCS goroutines.
func newPflate(out io.Writer, level, size int) *pflate {
	if size <= 0 {
		size = 1 << 20
	}
	n := runtime.GOMAXPROCS(0)
	// The first chunk's buffer grows as it fills (most of a workbook's
	// streams, a table's sheet, are a few kilobytes); the next ones are
	// the chunk's size.
	return &pflate{out: out, level: level, size: size, cur: make([]byte, 0, min(size, 64<<10)), slots: make(chan struct{}, n),
		writers: make(chan *flate.Writer, n), buffers: make(chan []byte, n+1), outs: make(chan *bytes.Buffer, 2*n+2)}
}

// buffer is an empty chunk buffer, one a chunk is done with if any.
func (p *pflate) buffer() []byte {
	select {
	case b := <-p.buffers:
		return b[:0]
	default:
		return make([]byte, 0, p.size)
	}
}

// outBuffer is an empty output buffer, one written out before if any.
func (p *pflate) outBuffer() *bytes.Buffer {
	select {
	case b := <-p.outs:
		b.Reset()
		return b
	default:
		return new(bytes.Buffer)
	}
}

// compress deflates data into out with dict as its dictionary, ending in
// the final block when final, else in a sync flush, with a compressor a
// chunk is done with if any; data's buffer and the compressor are then
// kept for the next chunks.
func (p *pflate) compress(out *bytes.Buffer, data, dict []byte, final bool) error {
	var fw *flate.Writer
	var err error
	select {
	case fw = <-p.writers:
		fw.ResetDict(out, dict)
	default:
		fw, err = flate.NewWriterDict(out, p.level, dict)
	}
	if err == nil {
		_, err = fw.Write(data)
	}
	if err == nil && final {
		err = fw.Close()
	} else if err == nil {
		err = fw.Flush()
	}
	select {
	case p.buffers <- data:
	default:
	}
	if err == nil {
		select {
		case p.writers <- fw:
		default:
		}
	}
	return err
}

func (p *pflate) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n := len(b)
	for len(b) > 0 {
		k := min(len(b), p.size-len(p.cur))
		p.cur = append(p.cur, b[:k]...)
		b = b[k:]
		if len(p.cur) == p.size {
			if err := p.submit(false, false); err != nil {
				return n - len(b), err
			}
		}
	}
	return n, nil
}

// submit starts compressing the current chunk (ending it in the final
// block when final), then writes out the chunks already done, in order:
// all of them when final or all.
func (p *pflate) submit(final, all bool) error {
	data, dict := p.cur, p.prev
	next := make([]byte, 0, pflateWindow) // the next chunk's dictionary
	if len(data) >= pflateWindow {
		next = append(next, data[len(data)-pflateWindow:]...)
	} else {
		keep := min(len(dict), pflateWindow-len(data))
		next = append(append(next, dict[len(dict)-keep:]...), data...)
	}
	p.prev = next
	p.cur = p.buffer()
	c := &pchunk{done: make(chan struct{}), out: p.outBuffer()}
	p.pending = append(p.pending, c)
	p.slots <- struct{}{}
	go func() {
		defer func() { <-p.slots; close(c.done) }()
		c.err = p.compress(c.out, data, dict, final)
	}()
	for len(p.pending) > 0 {
		h := p.pending[0]
		if !all && len(p.pending) <= 2*cap(p.slots) {
			select {
			case <-h.done:
			default:
				return nil
			}
		}
		<-h.done
		if h.err == nil {
			_, h.err = p.out.Write(h.out.Bytes())
			select {
			case p.outs <- h.out:
			default:
			}
		}
		if h.err != nil {
			p.err = h.err
			for _, c := range p.pending {
				<-c.done
			}
			p.pending = nil
			return h.err
		}
		p.pending = p.pending[1:]
	}
	return nil
}

// Close compresses the last chunk as the final block and writes every
// chunk out.
func (p *pflate) Close() error {
	if p.err != nil {
		return p.err
	}
	err := p.submit(true, true)
	p.cur, p.prev = nil, nil
	return err
}

// Flush compresses what is held as a chunk ending in a sync flush, not
// the final block, and writes every chunk out: what was written is then
// a deflate stream that another (not referring back into it) may follow,
// the last of them ending in the final block. Nothing may be written
// after it.
func (p *pflate) Flush() error {
	if p.err != nil {
		return p.err
	}
	err := p.submit(false, true)
	p.cur, p.prev = nil, nil
	return err
}
