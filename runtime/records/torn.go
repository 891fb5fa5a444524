package records

import (
	"fmt"
	"io"

	"github.com/bhashalab/bhasha/internal/lines"
)

// TornTail is the last line of records.jsonl when it has no newline (a run
// killed mid-write): every reader leaves it out and names it; a resume
// (Prepare, Scan.Commit) cuts it.
type TornTail struct {
	At    string // where it is: "line N" of records.jsonl
	Bytes int    // its length
}

// String says what was left out.
func (t TornTail) String() string {
	return fmt.Sprintf("%s %s is an incomplete record (%d bytes, without its newline: the run was interrupted mid-write): it was not read, and the tables cover the whole records before it; running the experiment into the directory again cuts it and asks its request again",
		FileName, t.At, t.Bytes)
}

// lastByteReader remembers the last byte read through it.
type lastByteReader struct {
	r    io.Reader
	last byte
}

func (l *lastByteReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

// eachLine calls fn with each line of f (read from r) and its 1-based
// number; a last line of records.jsonl without a newline is returned instead.
func eachLine(f recordFile, r io.Reader, fn func(line []byte, n int) error) (*TornTail, error) {
	lr := &lastByteReader{r: r}
	sc := lines.New(lr, f.path, 0)
	var held []byte // the line read last, handed over once the next is read
	heldAt := 0
	for sc.Scan() {
		if heldAt > 0 {
			if err := fn(held, heldAt); err != nil {
				return nil, err
			}
		}
		held, heldAt = append(held[:0], sc.Bytes()...), sc.Line()
	}
	if err := sc.Err(); err != nil || heldAt == 0 {
		return nil, err
	}
	if f.seg == 0 && lr.last != '\n' {
		return &TornTail{At: lineAt(&f, heldAt), Bytes: len(held)}, nil
	}
	return nil, fn(held, heldAt)
}

// eachLine opens f and calls fn with each of its lines, a torn tail left out.
func (f *recordFile) eachLine(fn func(line []byte, n int) error) error {
	r, err := f.open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = eachLine(*f, r, fn)
	return err
}
