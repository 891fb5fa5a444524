package records

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Parquet segments.
//
// A segment, records-N.parquet, holds one row per record line, in order,
// one column per member (segRow), and the line itself in the line column
// when the other columns do not give it back byte for byte (rowLine). Its
// footer's key-value metadata holds, under segMetaKey, a segDigest. A row
// group whose chunks match it is as written; one whose chunks do not is
// read line by line, each line checked by its own seal; one that does not
// decode is lost (Damage).

// segExt is a Parquet segment's file name extension.
const segExt = ".parquet"

// segMetaKey is the footer's key-value metadata member holding the
// segment's digest.
const segMetaKey = "bhasha.records"

// segGroupRows is the rows of a row group.
const segGroupRows = 8192

// segRow is one record line as a row of a segment (segCols): its Fields,
// Identity and Extracted as JSON text.
type segRow struct {
	engine.Record
	FieldsJSON, IdentityJSON, ExtractedJSON []byte
	RecordSHA256                            string
	// Line is the line itself when the other columns do not give it back
	// (empty otherwise).
	Line string
}

// segCol is a column of a segment and the field of segRow it holds (a
// *string, *[]byte, *int, *float64 or *bool). An optional column is null
// where the field is empty.
type segCol struct {
	name     string
	node     parquet.Node
	optional bool
	field    func(*segRow) any
}

// value is the column's value in r.
func (c *segCol) value(r *segRow) parquet.Value {
	switch f := c.field(r).(type) {
	case *string:
		return parquet.ByteArrayValue(view(*f))
	case *[]byte:
		return parquet.ByteArrayValue(*f)
	case *int:
		return parquet.Int64Value(int64(*f))
	case *float64:
		return parquet.DoubleValue(*f)
	default:
		return parquet.BooleanValue(*f.(*bool))
	}
}

// segCols are a segment's columns.
func segCols() []segCol {
	str, dict, js := parquet.String(), parquet.Encoded(parquet.String(), &parquet.RLEDictionary), parquet.JSON()
	num, flag := parquet.Int(64), parquet.Leaf(parquet.BooleanType)
	return []segCol{
		{"key", str, false, func(r *segRow) any { return &r.Key }},
		{"fields", js, false, func(r *segRow) any { return &r.FieldsJSON }},
		{"kind", dict, false, func(r *segRow) any { return (*string)(&r.Kind) }},
		{"served_model", dict, false, func(r *segRow) any { return &r.ServedModel }},
		{"status", dict, false, func(r *segRow) any { return &r.Status }},
		{"error", str, false, func(r *segRow) any { return &r.Error }},
		{"response", str, false, func(r *segRow) any { return &r.Response }},
		{"reasoning", str, true, func(r *segRow) any { return &r.Reasoning }},
		{"finish_reason", dict, false, func(r *segRow) any { return &r.FinishReason }},
		{"prompt_tokens", num, false, func(r *segRow) any { return &r.PromptTokens }},
		{"completion_tokens", num, false, func(r *segRow) any { return &r.CompletionTokens }},
		{"latency_ms", parquet.Leaf(parquet.DoubleType), false, func(r *segRow) any { return &r.LatencyMS }},
		{"attempts", num, false, func(r *segRow) any { return &r.Attempts }},
		{"endpoint", dict, false, func(r *segRow) any { return &r.Endpoint }},
		{"cached", flag, false, func(r *segRow) any { return &r.Cached }},
		{"cache_key", str, false, func(r *segRow) any { return &r.CacheKey }},
		{"logprobs", js, true, func(r *segRow) any { return (*[]byte)(&r.Logprobs) }},
		{"prompt_logprobs", js, true, func(r *segRow) any { return (*[]byte)(&r.PromptLogprobs) }},
		{"refusal", str, true, func(r *segRow) any { return &r.Refusal }},
		{"tool_calls", js, true, func(r *segRow) any { return (*[]byte)(&r.ToolCalls) }},
		{"empty_response", flag, false, func(r *segRow) any { return &r.EmptyResponse }},
		{"request", js, true, func(r *segRow) any { return (*[]byte)(&r.Request) }},
		{"request_sha256", str, true, func(r *segRow) any { return &r.RequestSHA256 }},
		{"identity", js, true, func(r *segRow) any { return &r.IdentityJSON }},
		{"simulated", flag, false, func(r *segRow) any { return &r.Simulated }},
		{"extracted", js, true, func(r *segRow) any { return &r.ExtractedJSON }},
		{"record_sha256", str, true, func(r *segRow) any { return &r.RecordSHA256 }},
		{"line", str, true, func(r *segRow) any { return &r.Line }},
	}
}

// view is s's bytes without a copy; they must not be written.
func view(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// segDigest is what the footer says of a segment's contents.
type segDigest struct {
	// Sealed: every line's record_sha256 held when the segment was written.
	Sealed bool `json:"sealed"`
	// KeyFields: every row's fields column (but a row kept whole in the
	// line column) is the Writer's encoding of its key's fields, which a
	// reader then takes from the key column.
	KeyFields bool       `json:"fields_from_key,omitempty"`
	Groups    []segGroup `json:"row_groups"`
}

// segGroup is one row group's rows and its column chunks' SHA-256, by
// column name.
type segGroup struct {
	Rows   int64             `json:"rows"`
	SHA256 map[string]string `json:"sha256"`
}

// SegmentName is the file name of segment n.
func SegmentName(n int) string { return fmt.Sprintf("%s%06d%s", segPrefix, n, segExt) }

// lineEncoder encodes records as the Writer writes them.
type lineEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
	dc  decoder
}

func newLineEncoder() *lineEncoder {
	e := &lineEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// appendRecord appends r's line to e.buf, without its seal, ending in
// "}\n": its members in order, the request body (as it is) spliced in last.
func (e *lineEncoder) appendRecord(r *engine.Record) error {
	req := r.Request
	r.Request = nil
	err := e.enc.Encode(r) // Encode writes nothing on error
	r.Request = req
	if err != nil {
		return err
	}
	if len(req) > 0 {
		e.buf.Truncate(e.buf.Len() - 2) // "}\n"
		e.buf.WriteString(`,"request":`)
		e.buf.Write(req)
		e.buf.WriteString("}\n")
	}
	return nil
}

// line is the line of r whose seal is seal ("" for none), without its
// newline; valid until the next call.
func (e *lineEncoder) line(r *engine.Record, seal string) ([]byte, error) {
	e.buf.Reset()
	if err := e.appendRecord(r); err != nil {
		return nil, err
	}
	if seal != "" {
		e.buf.Truncate(e.buf.Len() - 2)
		e.buf.WriteString(sealMember)
		e.buf.WriteString(seal)
		e.buf.WriteString("\"}\n")
	}
	return e.buf.Bytes()[:e.buf.Len()-1], nil
}

// rowOf is the row of a record line (without its newline).
func (e *lineEncoder) rowOf(line []byte) (segRow, error) {
	var rec struct {
		engine.Record
		Seal string `json:"record_sha256"`
	}
	if err := json.Unmarshal(line, &rec); err != nil {
		return segRow{}, err
	}
	row, err := newRow(&rec.Record, rec.Seal)
	if err != nil {
		return segRow{}, err
	}
	if back, err := e.rowLine(&row); err != nil || !bytes.Equal(back, line) {
		row.Line = string(line)
	}
	return row, nil
}

// newRow is the row of r, whose line's seal is seal, its JSON members
// marshalled.
func newRow(r *engine.Record, seal string) (row segRow, err error) {
	row = segRow{Record: *r, RecordSHA256: seal}
	row.Fields, row.Identity, row.Extracted = engine.Key{}, nil, nil
	if row.FieldsJSON, err = json.Marshal(r.Fields); err == nil && r.Identity != nil {
		row.IdentityJSON, err = json.Marshal(r.Identity)
	}
	if err == nil && r.Extracted != nil {
		row.ExtractedJSON, err = json.Marshal(r.Extracted)
	}
	return row, err
}

// rowLine is the line row holds, without its newline; valid until the
// next call.
func (e *lineEncoder) rowLine(row *segRow) ([]byte, error) {
	if row.Line != "" {
		return []byte(row.Line), nil
	}
	var r engine.Record
	if err := e.dc.recordOf(row, false, &r); err != nil {
		return nil, err
	}
	return e.line(&r, row.RecordSHA256)
}

// writeSegment writes the record lines write gives to add (without their
// newlines) atomically as the Parquet segment path, in row groups of
// groupRows rows; a line that is not a record is an error naming what
// and the line.
func writeSegment(path, what string, groupRows int64, write func(add func(line []byte) error) error) error {
	sw, err := newSegWriter(path, groupRows)
	if err != nil {
		return err
	}
	defer sw.tmp.Abort()
	e := newLineEncoder()
	n := 0
	err = write(func(line []byte) error {
		n++
		line = bytes.TrimSuffix(line, []byte("\r"))
		row, err := e.rowOf(line)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", what, n, err)
		}
		return sw.add(row, checkSeal(line) == sealOK)
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return sw.commit()
}

// segWriter writes a Parquet segment row by row; one goroutine's.
type segWriter struct {
	path          string
	tmp           *atomicfile.File
	bw            *bufio.Writer
	pw            *parquet.Writer
	order         []segCol
	rows          []segRow
	prow          []parquet.Row
	groupRows     int64
	inGroup       int64 // rows of the row group being written
	n             int
	sealed, keyed bool
	k             engine.Key
}

// newSegWriter starts the segment path in a temporary file beside it.
func newSegWriter(path string, groupRows int64) (*segWriter, error) {
	tmp, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	sw := &segWriter{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 1<<20), groupRows: groupRows,
		rows: make([]segRow, 0, 256), prow: make([]parquet.Row, 0, 256), sealed: true, keyed: true}
	cols := segCols()
	g := parquet.Group{}
	for _, c := range cols {
		g[c.name] = c.node
		if c.optional {
			g[c.name] = parquet.Optional(c.node)
		}
	}
	sch := parquet.NewSchema("records", g)
	for _, path := range sch.Columns() { // the columns in the schema's order
		sw.order = append(sw.order, cols[slices.IndexFunc(cols, func(c segCol) bool { return c.name == path[0] })])
	}
	// The texts' bounds (whole values, in every page header) are left out.
	options := []parquet.WriterOption{sch, parquet.Compression(&parquet.Zstd),
		parquet.PageBufferSize(1 << 20), parquet.CreatedBy("bhasha", "", "")}
	for _, c := range sw.order {
		if c.node.Type().Kind() == parquet.ByteArray && c.node.Encoding() == nil {
			options = append(options, parquet.SkipPageBounds(c.name))
		}
	}
	sw.pw = parquet.NewWriter(sw.bw, options...)
	return sw, nil
}

// add appends row, whose line's seal holds when sealed.
func (sw *segWriter) add(row segRow, sealed bool) error {
	sw.n++
	sw.sealed = sw.sealed && sealed
	sw.keyed = sw.keyed && (row.Line != "" || keyOf(row.Key, row.FieldsJSON, &sw.k))
	if sw.rows = append(sw.rows, row); len(sw.rows) == cap(sw.rows) || sw.inGroup+int64(len(sw.rows)) >= sw.groupRows {
		return sw.flush()
	}
	return nil
}

// flush writes the rows held, ending the row group when it is full.
func (sw *segWriter) flush() error {
	sw.prow = sw.prow[:0]
	for i := range sw.rows {
		pr := make(parquet.Row, 0, len(sw.order))
		for col := range sw.order {
			c := &sw.order[col]
			v := c.value(&sw.rows[i])
			switch {
			case !c.optional:
				v = v.Level(0, 0, col)
			case v.IsNull() || (v.Kind() == parquet.ByteArray && len(v.ByteArray()) == 0):
				v = parquet.NullValue().Level(0, 0, col)
			default:
				v = v.Level(0, 1, col)
			}
			pr = append(pr, v)
		}
		sw.prow = append(sw.prow, pr)
	}
	if _, err := sw.pw.WriteRows(sw.prow); err != nil {
		return err
	}
	sw.inGroup += int64(len(sw.rows))
	clear(sw.rows)
	sw.rows = sw.rows[:0]
	if sw.inGroup >= sw.groupRows {
		sw.inGroup = 0
		return sw.pw.Flush() // the row group ends
	}
	return nil
}

// commit ends the segment: its footer and digest written, the file
// synced and renamed over path, the directory synced.
func (sw *segWriter) commit() error {
	fail := func(err error) error { return fmt.Errorf("writing %s: %w", sw.path, err) }
	if len(sw.rows) > 0 {
		if err := sw.flush(); err != nil {
			return fail(err)
		}
	}
	if err := sw.pw.Close(); err != nil {
		return fail(err)
	}
	if err := sw.bw.Flush(); err != nil {
		return fail(err)
	}
	if err := addDigest(sw.tmp.File, segDigest{Sealed: sw.sealed && sw.n > 0, KeyFields: sw.keyed && sw.n > 0}); err != nil {
		return fail(fmt.Errorf("adding its digest: %w", err))
	}
	if err := sw.tmp.Commit(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(sw.path))
}

// footer reads a Parquet file's footer: its metadata and where it begins.
func footer(f io.ReaderAt, size int64) (format.FileMetaData, int64, error) {
	var md format.FileMetaData
	var tail [8]byte
	if size < 12 {
		return md, 0, errors.New("too short for a Parquet file")
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return md, 0, err
	}
	if string(tail[4:]) != "PAR1" {
		return md, 0, errors.New("no Parquet footer (the file does not end in PAR1)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	at := size - 8 - n
	if n <= 0 || at < 4 {
		return md, 0, fmt.Errorf("a footer length of %d bytes in a file of %d", n, size)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, at); err != nil {
		return md, 0, err
	}
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b, &md); err != nil {
		return md, 0, fmt.Errorf("its footer: %w", err)
	}
	return md, at, nil
}

// chunkRange is where a column chunk's bytes lie in the file.
func chunkRange(c *format.ColumnChunk) (off, n int64) {
	off = c.MetaData.DataPageOffset
	if d := c.MetaData.DictionaryPageOffset; d > 0 && d < off {
		off = d
	}
	return off, c.MetaData.TotalCompressedSize
}

// chunkSum is the hex SHA-256 of a column chunk's bytes, read through buf
// (returned, grown).
func chunkSum(f io.ReaderAt, c *format.ColumnChunk, buf []byte) (string, []byte, error) {
	off, n := chunkRange(c)
	if n < 0 || n > 1<<31 {
		return "", buf, fmt.Errorf("a column chunk of %d bytes", n)
	}
	buf = slices.Grow(buf[:0], int(n))[:n]
	if _, err := f.ReadAt(buf, off); err != nil {
		return "", buf, err
	}
	s := sha256.Sum256(buf)
	return hex.EncodeToString(s[:]), buf, nil
}

// addDigest adds the segment's digest to the footer of the Parquet file
// f, written and flushed: it hashes each column chunk and writes the
// footer again with the digest among its key-value metadata.
func addDigest(f *os.File, d segDigest) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	md, at, err := footer(f, st.Size())
	if err != nil {
		return err
	}
	var buf []byte
	for _, g := range md.RowGroups {
		sg := segGroup{Rows: g.NumRows, SHA256: map[string]string{}}
		for i := range g.Columns {
			c := &g.Columns[i]
			var s string
			if s, buf, err = chunkSum(f, c, buf); err != nil {
				return err
			}
			sg.SHA256[columnName(c)] = s
		}
		d.Groups = append(d.Groups, sg)
	}
	doc, err := json.Marshal(d)
	if err != nil {
		return err
	}
	md.KeyValueMetadata = append(md.KeyValueMetadata, format.KeyValue{Key: segMetaKey, Value: string(doc)})
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return err
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(b)))
	b = append(b, "PAR1"...)
	if err := f.Truncate(at); err != nil {
		return err
	}
	_, err = f.WriteAt(b, at)
	return err
}

// columnName is a column chunk's column (its path, dotted).
func columnName(c *format.ColumnChunk) string { return strings.Join(c.MetaData.PathInSchema, ".") }

// pqSegment is a Parquet segment opened for reading.
type pqSegment struct {
	path   string
	name   string
	fh     *os.File
	size   int64
	md     format.FileMetaData
	pf     *parquet.File
	digest segDigest
	col    map[string]int // column index by name
	starts []int64        // each row group's first row
}

// openSegment opens the Parquet segment at path and reads its footer and
// digest. A file whose footer cannot be read is an error wrapping
// errNoFooter.
func openSegment(path string) (s *pqSegment, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading records: %w", err)
	}
	defer func() {
		if err != nil {
			fh.Close()
		}
	}()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	s = &pqSegment{path: path, name: filepath.Base(path), fh: fh, size: st.Size(), col: map[string]int{}}
	if s.md, _, err = footer(fh, st.Size()); err != nil {
		return nil, fmt.Errorf("reading %s: %w: %v", path, errNoFooter, err)
	}
	if s.pf, err = parquet.OpenFile(fh, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(1<<20)); err != nil {
		return nil, fmt.Errorf("reading %s: %w: %v", path, errNoFooter, err)
	}
	for i, c := range s.pf.Schema().Columns() {
		s.col[c[0]] = i
	}
	for _, c := range []string{"key", "status", "response", "line"} {
		if _, ok := s.col[c]; !ok {
			return nil, fmt.Errorf("reading %s: it has no column %q (not a records segment)", path, c)
		}
	}
	if doc, ok := s.pf.Lookup(segMetaKey); ok {
		// A digest that does not parse holds for no row group.
		_ = json.Unmarshal([]byte(doc), &s.digest)
	}
	s.starts = []int64{0}
	for _, g := range s.md.RowGroups {
		s.starts = append(s.starts, s.starts[len(s.starts)-1]+g.NumRows)
	}
	return s, nil
}

// errNoFooter is a segment whose footer (its index) cannot be read.
var errNoFooter = errors.New("its footer cannot be read")

func (s *pqSegment) close() error { return s.fh.Close() }

// groupHolds reports whether row group g's chunks of the columns cols
// (all, when nil) match the digest, reading them through buf (returned).
func (s *pqSegment) groupHolds(g int, cols []string, buf []byte) (bool, []byte) {
	if g >= len(s.digest.Groups) || len(s.digest.Groups) != len(s.md.RowGroups) || s.digest.Groups[g].Rows != s.md.RowGroups[g].NumRows {
		return false, buf
	}
	want := s.digest.Groups[g].SHA256
	chunks := s.md.RowGroups[g].Columns
	if len(want) != len(chunks) {
		return false, buf
	}
	for i := range chunks {
		c := &chunks[i]
		name := columnName(c)
		if cols != nil && !slices.Contains(cols, name) {
			continue
		}
		sum, b, err := chunkSum(s.fh, c, buf)
		buf = b
		if err != nil || sum != want[name] {
			return false, buf
		}
	}
	return true, buf
}

// groupRows reads the columns cols (all, when nil) of every row of row
// group g into rows (reused); with want set, only the key of a row whose
// key want refuses (the key is the first column), and skip marks those rows.
func (s *pqSegment) groupRows(g int, cols []string, rows []segRow, want func(key string) bool) (_ []segRow, skip []bool, err error) {
	rg := s.pf.RowGroups()[g]
	n := int(rg.NumRows())
	rows = slices.Grow(rows[:0], n)[:n]
	clear(rows)
	chunks := rg.ColumnChunks()
	for _, c := range segCols() {
		ci, ok := s.col[c.name]
		if !ok || (cols != nil && !slices.Contains(cols, c.name)) {
			continue
		}
		if err := readColumn(chunks[ci], rows, &c, skip); err != nil {
			return rows, nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		if c.name == "key" && want != nil {
			skip = make([]bool, n)
			for i := range rows {
				skip[i] = !want(rows[i].Key)
			}
		}
	}
	return rows, skip, nil
}

// groupLines is the lines of row group g, each ending in a newline. A
// row group that cannot be read is an error (its rows are lost).
func (s *pqSegment) groupLines(g int, e *lineEncoder) ([]byte, error) {
	rows, _, err := s.groupRows(g, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	var data []byte
	for i := range rows {
		l, err := e.rowLine(&rows[i])
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", s.starts[g]+int64(i)+1, err)
		}
		data = append(append(data, l...), '\n')
	}
	return data, nil
}

// eachGroup calls fn with each row group g of the segment that can be
// read, in order: with its lines (each ending in a newline) when asLines or
// when it does not hold, else with holds true (the lines were sealed and
// the group's chunks of cols, all when nil, match the digest). The Damage
// returned (nil: none) names the groups that cannot be read and counts
// the rows kept.
func (s *pqSegment) eachGroup(cols []string, asLines bool, fn func(g int, holds bool, lines []byte) error) (*Damage, error) {
	e := newLineEncoder()
	var dm *Damage
	var buf []byte
	kept := 0
	for g := range s.md.RowGroups {
		holds := false
		if s.digest.Sealed && !asLines {
			holds, buf = s.groupHolds(g, cols, buf)
		}
		var data []byte
		if asLines || !holds {
			var err error
			if data, err = s.groupLines(g, e); err != nil {
				if dm == nil {
					dm = &Damage{File: s.name, LostKnown: true}
				}
				s.lost(dm, g, err)
				continue
			}
		}
		kept += int(s.md.RowGroups[g].NumRows)
		if err := fn(g, holds, data); err != nil {
			return dm, err
		}
	}
	if dm = s.footerLoss(dm); dm != nil {
		dm.Kept = kept
	}
	return dm, nil
}

// footerLoss adds to dm (made when nil) the rows the digest counts and
// the footer does not (a footer damaged into fewer rows or row groups),
// and returns it; nil when there are none.
func (s *pqSegment) footerLoss(dm *Damage) *Damage {
	var want int64
	for _, g := range s.digest.Groups {
		want += g.Rows
	}
	have := s.starts[len(s.starts)-1]
	if want <= have {
		return dm
	}
	if dm == nil {
		dm = &Damage{File: s.name}
	}
	dm.LostKnown = false
	dm.Gaps = append(dm.Gaps, fmt.Sprintf("its footer counts %d rows in %d row group(s), its digest %d in %d", have, len(s.md.RowGroups), want, len(s.digest.Groups)))
	return dm
}

// lost adds row group g, which could not be read (err), to dm: its rows
// are counted and named by line and, when its key column still reads as
// written, by key.
func (s *pqSegment) lost(dm *Damage, g int, err error) {
	from, to := s.starts[g]+1, s.starts[g+1]
	dm.Lost += int(to - from + 1)
	dm.Gaps = append(dm.Gaps, fmt.Sprintf("row group %d (lines %d–%d): %v", g+1, from, to, err))
	var keys []segRow // when the key column holds by the digest
	if ok, _ := s.groupHolds(g, []string{"key"}, nil); ok {
		if keys, _, err = s.groupRows(g, []string{"key"}, nil, nil); err != nil {
			keys = nil
		}
	}
	for i := from; i <= to && len(dm.LostAt) < maxLostNamed; i++ {
		if keys != nil {
			dm.LostAt = append(dm.LostAt, fmt.Sprintf("line %d (key %s)", i, keys[i-from].Key))
		} else {
			dm.LostAt = append(dm.LostAt, fmt.Sprintf("line %d", i))
		}
	}
}

// readColumn reads a column chunk into c's field of rows but those skip
// marks (nil: none), page by page from the pages' bytes; a chunk that
// does not decode or does not hold one value per row is an error.
func readColumn(cc parquet.ColumnChunk, rows []segRow, c *segCol, skip []bool) (err error) {
	defer func() {
		if p := recover(); p != nil { // parquet-go panics on some damage
			err = fmt.Errorf("%v", p)
		}
	}()
	pages := cc.Pages()
	defer pages.Close()
	var dict []string // the strings of the chunk's dictionary
	var buf []parquet.Value
	at := 0
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n := int(p.NumValues())
		if at+n > len(rows) {
			parquet.Release(p)
			return fmt.Errorf("more values than the %d rows", len(rows))
		}
		def := p.DefinitionLevels()
		if p.Type().Kind() != parquet.ByteArray {
			buf = slices.Grow(buf[:0], n)[:n]
			k, err := p.Values().ReadValues(buf)
			if err != nil && err != io.EOF || k != n {
				parquet.Release(p)
				return fmt.Errorf("%d of a page's %d values: %v", k, n, err)
			}
			for i, v := range buf {
				if skip != nil && skip[at+i] {
					continue
				}
				switch f := c.field(&rows[at+i]).(type) {
				case *int:
					*f = int(v.Int64())
				case *float64:
					*f = v.Double()
				case *bool:
					*f = v.Boolean()
				}
			}
		} else {
			data := p.Data()
			var idx []int32
			var vals []byte
			var offs []uint32
			if d := p.Dictionary(); d != nil {
				if dict == nil {
					dd := d.Page().Data()
					dv, do := dd.ByteArray()
					for j := range d.Len() {
						dict = append(dict, string(dv[do[j]:do[j+1]]))
					}
				}
				idx = data.Int32()
			} else {
				vals, offs = data.ByteArray()
			}
			j := 0 // the page's non-null values read
			for i := range n {
				if def != nil && def[i] == 0 {
					continue
				}
				if skip != nil && skip[at+i] {
					j++
					continue
				}
				switch f := c.field(&rows[at+i]).(type) {
				case *string:
					if idx != nil {
						*f = dict[idx[j]]
					} else {
						*f = string(vals[offs[j]:offs[j+1]])
					}
				case *[]byte:
					if idx != nil {
						*f = []byte(dict[idx[j]])
					} else {
						*f = bytes.Clone(vals[offs[j]:offs[j+1]])
					}
				}
				j++
			}
		}
		parquet.Release(p)
		at += n
	}
	if at != len(rows) {
		return fmt.Errorf("%d values for %d rows", at, len(rows))
	}
	return nil
}

// columns are the columns decodeGroup reads for o.
func (s *pqSegment) columns(o StreamOptions) []string {
	cols := []string{"key", "status", "error", "response", "line"}
	if o.WithRequests {
		cols = append(cols, "request")
	}
	if o.strict {
		return append(cols, "request_sha256", "identity", "simulated")
	}
	if o.TextsOnly {
		return cols
	}
	if !s.digest.KeyFields {
		cols = append(cols, "fields")
	}
	cols = append(cols, "kind", "served_model", "reasoning", "finish_reason", "prompt_tokens",
		"completion_tokens", "latency_ms", "attempts", "endpoint", "cached", "logprobs", "prompt_logprobs",
		"refusal", "tool_calls", "empty_response", "identity", "simulated")
	if !o.SkipDigests {
		cols = append(cols, "cache_key", "request_sha256")
	}
	if !o.SkipExtracted {
		cols = append(cols, "extracted")
	}
	return cols
}

// decodeGroup reads the columns o needs of row group g, whose chunks hold
// by the digest (the lines' seals hold), into rows and recs (reused), and
// gives each record to each with its 0-based row in the group.
func (s *pqSegment) decodeGroup(g int, o StreamOptions, dc *decoder, rows []segRow, recs []engine.Record, each func(i int, r *engine.Record) error) ([]segRow, []engine.Record, error) {
	rows, skip, err := s.groupRows(g, s.columns(o), rows, o.Want)
	if err != nil {
		return rows, recs, fmt.Errorf("reading %s, row group %d, %w", s.path, g+1, err)
	}
	recs = slices.Grow(recs[:0], len(rows))[:len(rows)]
	for i := range rows {
		var err error
		if skip != nil && skip[i] {
			recs[i] = engine.Record{Key: rows[i].Key}
			keyOf(rows[i].Key, nil, &recs[i].Fields)
		} else if rows[i].Line != "" {
			err = decodeLine([]byte(rows[i].Line), o, &recs[i])
		} else if err = dc.recordOf(&rows[i], s.digest.KeyFields, &recs[i]); err == nil {
			trim(&recs[i], o)
			if o.strict {
				err = knownStatus(recs[i].Status)
			}
		}
		if err != nil {
			return rows, recs, fmt.Errorf("%s line %d: %w", s.path, s.starts[g]+int64(i)+1, err)
		}
		if err := each(i, &recs[i]); err != nil {
			return rows, recs, err
		}
	}
	return rows, recs, nil
}
