package records

import (
	"bytes"
	"fmt"
	"io"

	"github.com/bhashalab/bhasha/internal/lines"
)

// span is one line's bytes in a batch's buffer: data[from:to], without its
// newline (or "\r\n").
type span struct{ from, to int32 }

// cutReadBytes is the least room cutLines reads into at once.
const cutReadBytes = 256 << 10

// cutLines reads r into buf and cuts it into lines as bufio.ScanLines
// does (a line ends at '\n', a '\r' before it is dropped, a last line
// without a newline is a line, an empty line is a line), without copying
// them out: line is called with each line's span in the buffer, in order. After
// the lines of each read are cut, full is called with the buffer (grown,
// when a line needed more room) and the offset where the next line
// begins; it returns the buffer to go on with (holding the bytes from that
// offset at its start: spans start again there) or nil to keep this one,
// and stop to end the reading without an error (the caller's context
// ended). It returns the buffer last read into. A line longer than
// lines.DefaultMax is an error naming path and the line's number.
func cutLines(r io.Reader, path string, buf []byte, line func(from, to int), full func(data []byte, next int) (nb []byte, stop bool)) ([]byte, error) {
	data := buf[:0]
	start := 0 // where the line being read begins
	n := 0     // lines cut
	for {
		if cap(data)-len(data) < cutReadBytes {
			grown := make([]byte, len(data), 2*cap(data)+cutReadBytes)
			copy(grown, data)
			data = grown
		}
		k, err := r.Read(data[len(data):cap(data)])
		scan := len(data)
		data = data[:len(data)+k]
		for {
			j := bytes.IndexByte(data[scan:], '\n')
			if j < 0 {
				break
			}
			end := scan + j
			to := end
			if to > start && data[to-1] == '\r' {
				to--
			}
			n++
			line(start, to)
			start, scan = end+1, end+1
		}
		if len(data)-start > lines.DefaultMax {
			return data, fmt.Errorf("%s line %d: longer than the limit of %d MiB", path, n+1, lines.DefaultMax>>20)
		}
		if err == io.EOF {
			if start < len(data) {
				to := len(data)
				if data[to-1] == '\r' {
					to--
				}
				n++
				line(start, to)
			}
			return data, nil
		}
		if err != nil {
			return data, fmt.Errorf("reading %s after line %d: %w", path, n, err)
		}
		nb, stop := full(data, start)
		if stop {
			return data, nil
		}
		if nb != nil {
			data, start = nb, 0
		}
	}
}
