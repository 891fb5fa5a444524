// Package scored keeps a run's scored answers on disk, in columns, so that
// a later reader builds its tables without scoring the records again. It
// is a cache: deleting the file loses nothing (the records are scored
// again), and a file that does not match the records and options it was
// made from is never read as theirs (Key).
//
// File grammar: one Parquet file (FileName in the run directory), one row
// per scored answer in scoring order, every number and flag column
// required, every text column optional: NULL where the text is empty (a
// missing strategy, condition, domain, verdict, detail, an empty answer),
// as an empty cell is in the CSV tables and the workbook, so that a
// reader joining them on a key column meets one kind of missing value.
// Bhasha reads a NULL text back as "".
//
//   - the row columns, named as the answer schema's common fields:
//     experiment, model, item, language, form, strategy, condition, role
//     (engine.Role's text form: "", translation, judge:<model>,
//     choice:<n>), domain, gold, prediction, method, verdict, script
//     (UTF-8 strings, dictionary-encoded but for the free texts gold and
//     prediction, which are plain, their pages without min and max
//     bounds, as detail's); prompt_tokens, offline_tokens
//     (int64); latency_ms (double); correct, abstain, switched, failed,
//     withheld, cached, empty_response (boolean); marks (int64: bit i is
//     the study's mark i, score.Marks); detail (string: the JSON of
//     score.Detail, the multiple-choice log-likelihoods and a graded
//     judge's scores, "" for a row without one).
//   - the study's columns: each field of the study's answer schema
//     (score.Schema.Study) whose name is not a row column, under its name,
//     as boolean, string or int64: for other readers (DuckDB, pandas);
//     Bhasha reads the row columns.
//   - key-value metadata: "bhasha.scored" the format version (Version);
//     "bhasha.key" a JSON object naming what the rows were made from
//     (Key: the records' fingerprint, the scoring options' hashes);
//     "bhasha.notes" a JSON array of the notes scoring made (duplicates,
//     conflicts, edited records); "bhasha.lines" the number of record
//     lines read; "bhasha.schema" a JSON array of the study's fields
//     (name, type, description); "bhasha.footer.xxh64" and
//     "bhasha.xxh64", the XXH64 (16 hex digits) of the footer, taken
//     with its own value written as 16 zeros, and of the whole file,
//     taken with both values written so (internal/parquetseal).
//
// Checks. A reader trusts no byte it has not checked: ReadMeta checks the
// footer's digest (one XXH64 pass over the footer) before it parses the
// footer; Read and Open check it, then the whole file's (one XXH64 pass
// over the file, read sequentially before any row is decoded). A file
// with a byte changed anywhere, or without the digests, is an error
// wrapping ErrFormat, and nothing of it is returned.
//
// Write replaces the file atomically (a temporary file in the same
// directory, synced, renamed): a reader sees the previous file or the
// new one, never a part; a crash leaves at worst a ".scored.parquet-*.tmp".
package scored

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/parquetseal"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// FileName is the store inside a run directory.
const FileName = "scored.parquet"

// Version is the file format's version, and the scoring rules': bump it
// when a rule changes the rows the same records and options give (a
// store of another version is scored again).
const Version = "3"

// Key names what a store's rows were made from: component → value (a
// hash, a version). Two keys that differ in any component make the rows
// stale.
type Key map[string]string

// Changed lists the components of k whose values differ from old (added,
// removed or changed), sorted.
func (k Key) Changed(old Key) []string {
	var out []string
	for c, v := range k {
		if ov, ok := old[c]; !ok || ov != v {
			out = append(out, c)
		}
	}
	for c := range old {
		if _, ok := k[c]; !ok {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Meta is what a store says besides its rows.
type Meta struct {
	Version string
	Key     Key
	Notes   []string // the notes scoring made, in order
	Lines   int      // record lines read
	Rows    int
}

// column is one row column: its name, its Parquet node and how it is read
// from and written to a Row.
type column struct {
	name string
	kind kind
	str  func(*score.Row) string
	num  func(*score.Row) int64
	dbl  func(*score.Row) float64
	flag func(*score.Row) bool

	setStr  func(*score.Row, string) error
	setNum  func(*score.Row, int64)
	setDbl  func(*score.Row, float64)
	setFlag func(*score.Row, bool)

	// free: a free-text column (an answer, a gold, a detail), of
	// thousands of distinct texts a row group: stored plain, not through
	// a dictionary, and its pages carry no min and max (a query selects
	// rows by their keys and flags, not by where an answer sorts), which
	// spares the writer both for a somewhat larger file.
	free bool

	// at is 1 + the offset in a Row of the field a text or flag column
	// holds as it is (0: read through str or flag).
	at uintptr
}

type kind uint8

const (
	kindString kind = iota
	kindInt
	kindDouble
	kindBool
)

func textCol(name string, get func(*score.Row) *string) column {
	return column{name: name, kind: kindString, str: func(r *score.Row) string { return *get(r) },
		setStr: func(r *score.Row, s string) error { *get(r) = s; return nil }, at: offset(get)}
}

func flagCol(name string, get func(*score.Row) *bool) column {
	return column{name: name, kind: kindBool, flag: func(r *score.Row) bool { return *get(r) },
		setFlag: func(r *score.Row, b bool) { *get(r) = b }, at: offset(get)}
}

// freeText is c, a free-text column.
func freeText(c column) column {
	c.free = true
	return c
}

// offset is 1 + the offset in a Row of the field get gives the address
// of, which must be in the Row.
func offset[F any](get func(*score.Row) *F) uintptr {
	var r score.Row
	off := uintptr(unsafe.Pointer(get(&r))) - uintptr(unsafe.Pointer(&r))
	if off >= unsafe.Sizeof(r) {
		panic("scored: a column's field is not in the Row")
	}
	return 1 + off
}

// rowColumns are the columns that hold a Row, every field of it.
func rowColumns() []column {
	return []column{
		textCol("experiment", func(r *score.Row) *string { return &r.Key.Experiment }),
		textCol("model", func(r *score.Row) *string { return &r.Key.Model }),
		textCol("item", func(r *score.Row) *string { return &r.Key.Item }),
		textCol("language", func(r *score.Row) *string { return &r.Key.Language }),
		textCol("form", func(r *score.Row) *string { return &r.Key.Form }),
		textCol("strategy", func(r *score.Row) *string { return &r.Key.Strategy }),
		textCol("condition", func(r *score.Row) *string { return &r.Key.Condition }),
		{name: "role", kind: kindString, str: func(r *score.Row) string { return r.Key.Role.String() },
			setStr: func(r *score.Row, s string) error {
				role, err := engine.ParseRole(s)
				r.Key.Role = role
				return err
			}},
		textCol("domain", func(r *score.Row) *string { return &r.Domain }),
		freeText(textCol("gold", func(r *score.Row) *string { return &r.Gold })),
		freeText(textCol("prediction", func(r *score.Row) *string { return &r.Prediction })),
		{name: "method", kind: kindString, str: func(r *score.Row) string { return string(r.Method) },
			setStr: func(r *score.Row, s string) error { r.Method = extract.Method(s); return nil }},
		textCol("verdict", func(r *score.Row) *string { return &r.Verdict }),
		textCol("script", func(r *score.Row) *string { return &r.Script }),
		{name: "prompt_tokens", kind: kindInt, num: func(r *score.Row) int64 { return int64(r.PromptTokens) },
			setNum: func(r *score.Row, n int64) { r.PromptTokens = int(n) }},
		{name: "offline_tokens", kind: kindInt, num: func(r *score.Row) int64 { return int64(r.OfflineTokens) },
			setNum: func(r *score.Row, n int64) { r.OfflineTokens = int(n) }},
		{name: "latency_ms", kind: kindDouble, dbl: func(r *score.Row) float64 { return r.LatencyMS },
			setDbl: func(r *score.Row, x float64) { r.LatencyMS = x }},
		flagCol("correct", func(r *score.Row) *bool { return &r.Correct }),
		flagCol("abstain", func(r *score.Row) *bool { return &r.Abstain }),
		flagCol("switched", func(r *score.Row) *bool { return &r.Switched }),
		flagCol("failed", func(r *score.Row) *bool { return &r.Failed }),
		flagCol("withheld", func(r *score.Row) *bool { return &r.Withheld }),
		flagCol("cached", func(r *score.Row) *bool { return &r.Cached }),
		flagCol("empty_response", func(r *score.Row) *bool { return &r.EmptyResponse }),
		{name: "marks", kind: kindInt, num: func(r *score.Row) int64 { return int64(r.Marks) },
			setNum: func(r *score.Row, n int64) { r.Marks = score.Marks(n) }},
		{name: "detail", kind: kindString, str: detailText, setStr: setDetail, free: true},
	}
}

// detailText is the JSON of a row's Detail ("" without one).
func detailText(r *score.Row) string {
	if r.Detail == nil {
		return ""
	}
	b, err := json.Marshal(r.Detail)
	if err != nil { // a NaN or an infinite log-likelihood
		b, _ = json.Marshal(detailJSON(r.Detail))
	}
	return string(b)
}

// detailJSON writes a Detail's floats as strings where JSON has no number
// for them (NaN, ±Inf: a choice the model cannot produce).
func detailJSON(d *score.Detail) map[string]any {
	f := func(x float64) any {
		b, err := json.Marshal(x)
		if err != nil {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return json.RawMessage(b)
	}
	lp := make([]any, len(d.ChoiceLogprobs))
	for i, x := range d.ChoiceLogprobs {
		lp[i] = f(x)
	}
	js := map[string]any{}
	for k, x := range d.JudgeScores {
		js[k] = f(x)
	}
	out := map[string]any{"ChoiceLogprobs": lp, "Chosen": d.Chosen}
	if d.ChoiceLogprobs == nil {
		out["ChoiceLogprobs"] = nil
	}
	if d.JudgeScores != nil {
		out["JudgeScores"] = js
	} else {
		out["JudgeScores"] = nil
	}
	return out
}

// setDetail reads a detail column's text back.
func setDetail(r *score.Row, s string) error {
	if s == "" {
		r.Detail = nil
		return nil
	}
	var raw struct {
		ChoiceLogprobs []json.RawMessage
		Chosen         int
		JudgeScores    map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return fmt.Errorf("column detail: %w", err)
	}
	num := func(m json.RawMessage) (float64, error) {
		var x float64
		if err := json.Unmarshal(m, &x); err == nil {
			return x, nil
		}
		var t string
		if err := json.Unmarshal(m, &t); err != nil {
			return 0, fmt.Errorf("column detail: %s is not a number", m)
		}
		return strconv.ParseFloat(t, 64)
	}
	d := &score.Detail{Chosen: raw.Chosen}
	if raw.ChoiceLogprobs != nil {
		d.ChoiceLogprobs = make([]float64, len(raw.ChoiceLogprobs))
		for i, m := range raw.ChoiceLogprobs {
			x, err := num(m)
			if err != nil {
				return err
			}
			d.ChoiceLogprobs[i] = x
		}
	}
	if raw.JudgeScores != nil {
		d.JudgeScores = make(map[string]float64, len(raw.JudgeScores))
		for k, m := range raw.JudgeScores {
			x, err := num(m)
			if err != nil {
				return err
			}
			d.JudgeScores[k] = x
		}
	}
	r.Detail = d
	return nil
}

// studyColumns are the schema's study fields that are not row columns.
func studyColumns(s *score.Schema, taken map[string]bool) []score.Field {
	var out []score.Field
	if s == nil {
		return nil
	}
	for _, f := range s.Study() {
		if !taken[f.Name] {
			out = append(out, f)
		}
	}
	return out
}

func leaf(k kind) parquet.Node {
	var n parquet.Node
	switch k {
	case kindString:
		n = parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	case kindInt:
		n = parquet.Int(64)
	case kindDouble:
		n = parquet.Leaf(parquet.DoubleType)
	default:
		n = parquet.Leaf(parquet.BooleanType)
	}
	if k == kindString {
		return parquet.Compressed(parquet.Optional(n), &parquet.Snappy)
	}
	return parquet.Compressed(parquet.Required(n), &parquet.Snappy)
}

// textValue is a text column's value in column col: NULL for "", the
// text's bytes (not copied: view) otherwise, with the definition level
// its optional column needs.
func textValue(s string, col int) parquet.Value {
	if s == "" {
		return parquet.NullValue().Level(0, 0, col)
	}
	return parquet.ByteArrayValue(view(s)).Level(0, 1, col)
}

func fieldKind(t score.FieldType) kind {
	switch t {
	case score.FlagField:
		return kindBool
	case score.IntField:
		return kindInt
	}
	return kindString
}

// Write stores rows, made as m says, at path (atomically; see the
// package comment). schema is the study's answer schema (its study
// fields become columns; nil for none). It hashes the file as it writes
// it (XXH64), then reads its footer back once to write the digests in
// place, before the file takes its name.
func Write(path string, rows []score.Row, schema *score.Schema, m Meta) error {
	cols := rowColumns()
	taken := map[string]bool{}
	g := parquet.Group{}
	var options []parquet.WriterOption
	for _, c := range cols {
		g[c.name] = leaf(c.kind)
		if c.free {
			g[c.name] = parquet.Compressed(parquet.Optional(parquet.String()), &parquet.Snappy)
			options = append(options, parquet.SkipPageBounds(c.name))
		}
		taken[c.name] = true
	}
	extra := studyColumns(schema, taken)
	var fields []map[string]string
	for _, f := range extra {
		g[f.Name] = leaf(fieldKind(f.Type))
	}
	if schema != nil {
		for _, f := range schema.Study() {
			fields = append(fields, map[string]string{"name": f.Name, "type": typeName(f.Type), "description": f.Description})
		}
	}
	sch := parquet.NewSchema("scored", g)
	index := map[string]int{}
	for i, p := range sch.Columns() {
		index[p[0]] = i
	}
	key, _ := json.Marshal(m.Key)
	if m.Notes == nil {
		m.Notes = []string{}
	}
	if fields == nil {
		fields = []map[string]string{}
	}
	notes, _ := json.Marshal(m.Notes)
	fj, _ := json.Marshal(fields)
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("storing scored answers: %w", err)
	}
	defer f.Abort()
	sw := parquetseal.NewHasher(f)
	w := parquet.NewWriter(sw, append(options, sch,
		parquet.KeyValueMetadata("bhasha.scored", Version),
		parquet.KeyValueMetadata("bhasha.key", string(key)),
		parquet.KeyValueMetadata("bhasha.notes", string(notes)),
		parquet.KeyValueMetadata("bhasha.lines", strconv.Itoa(m.Lines)),
		parquet.KeyValueMetadata("bhasha.schema", string(fj)),
		parquet.MaxRowsPerRowGroup(groupRows))...)
	// The digests' places, last of the metadata, filled in once the file
	// is written (Seal).
	parquetseal.Reserve(w)
	at := make([]int, len(cols)) // each column's index in the schema
	for i, c := range cols {
		at[i] = index[c.name]
	}
	extraAt := make([]int, len(extra))
	for i, fd := range extra {
		extraAt[i] = index[fd.Name]
	}
	// fill encodes rows (one row group's) into rg a column at a time, a
	// chunk of rows at a time: each column's values are made by one
	// loop over the rows, with no row of values between. No column is
	// repeated: a required one's values need no levels, an optional
	// (text) one's only their definition level (textValue).
	fill := func(rg *parquet.ConcurrentRowGroupWriter, rows []score.Row) error {
		const chunk = 4096
		cws := rg.ColumnWriters()
		vals := make([]parquet.Value, 0, chunk)
		for from := 0; from < len(rows); from += chunk {
			part := rows[from:min(len(rows), from+chunk)]
			for j := range cols {
				c, at := &cols[j], at[j]
				vals = vals[:0]
				switch {
				case c.at != 0 && c.kind == kindString: // the field itself, read in place
					for i := range part {
						vals = append(vals, textValue(*(*string)(unsafe.Add(unsafe.Pointer(&part[i]), c.at-1)), at))
					}
				case c.at != 0 && c.kind == kindBool:
					for i := range part {
						vals = append(vals, parquet.BooleanValue(*(*bool)(unsafe.Add(unsafe.Pointer(&part[i]), c.at-1))))
					}
				default:
					for i := range part {
						vals = append(vals, value(c, &part[i], at))
					}
				}
				if _, err := cws[at].WriteRowValues(vals); err != nil {
					return err
				}
			}
			for j, fd := range extra {
				at := extraAt[j]
				vals = vals[:0]
				for i := range part {
					r := &part[i]
					var v parquet.Value
					switch fd.Type {
					case score.FlagField:
						v = parquet.BooleanValue(fd.Flag(r))
					case score.IntField:
						v = parquet.Int64Value(int64(fd.Int(r)))
					default:
						v = textValue(fd.Text(r), at)
					}
					vals = append(vals, v)
				}
				if _, err := cws[at].WriteRowValues(vals); err != nil {
					return err
				}
			}
		}
		return rg.Flush()
	}
	if err := writeGroups(w, rows, fill); err != nil {
		return fmt.Errorf("storing scored answers in %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("storing scored answers in %s: %w", path, err)
	}
	if err := parquetseal.Seal(f.File, sw); err != nil {
		return fmt.Errorf("storing scored answers in %s: writing its digests: %w", path, err)
	}
	return f.Commit()
}

// groupRows is the rows of one row group.
const groupRows = 1 << 14

// writeGroups writes rows into w as row groups of groupRows, each encoded
// by fill on one of GOMAXPROCS goroutines and committed in order; at most
// two groups per goroutine are held encoded at once. The first error
// stops it.
func writeGroups(w *parquet.Writer, rows []score.Row, fill func(*parquet.ConcurrentRowGroupWriter, []score.Row) error) error {
	ngroups := (len(rows) + groupRows - 1) / groupRows
	workers := min(runtime.GOMAXPROCS(0), ngroups)
	type group struct {
		rg   *parquet.ConcurrentRowGroupWriter
		err  error
		done chan struct{}
	}
	groups := make(chan *group, workers)    // in order, for the committer
	todo := make(chan int, 2*workers)       // group numbers, for the workers
	slots := make(chan struct{}, 2*workers) // groups encoded, not yet committed
	stop := make(chan struct{})
	var wg sync.WaitGroup
	work := make([]*group, ngroups)
	for i := range work {
		work[i] = &group{done: make(chan struct{})}
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range todo {
				g := work[i]
				g.rg = w.BeginRowGroup()
				g.err = fill(g.rg, rows[i*groupRows:min(len(rows), (i+1)*groupRows)])
				close(g.done)
			}
		}()
	}
	go func() { // hand out groups in order, as slots free
		defer close(todo)
		defer close(groups)
		for i := range ngroups {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			todo <- i
			groups <- work[i]
		}
	}()
	var err error
	for g := range groups {
		<-g.done
		if err == nil {
			if err = g.err; err == nil {
				_, err = g.rg.Commit()
			}
			if err != nil {
				close(stop)
			}
		}
		g.rg = nil // committed: its pages are written
		<-slots
	}
	wg.Wait()
	return err
}

// value is c's value of row r, in column col.
func value(c *column, r *score.Row, col int) parquet.Value {
	switch c.kind {
	case kindString:
		return textValue(c.str(r), col)
	case kindInt:
		return parquet.Int64Value(c.num(r))
	case kindDouble:
		return parquet.DoubleValue(c.dbl(r))
	}
	return parquet.BooleanValue(c.flag(r))
}

// view is s's bytes without a copy, for the writer, which copies what it
// keeps and writes nothing into them.
func view(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func typeName(t score.FieldType) string {
	switch t {
	case score.FlagField:
		return "boolean"
	case score.IntField:
		return "int64"
	}
	return "string"
}

// ErrFormat wraps every error of a file that is not a store Bhasha can
// read (truncated, damaged: a digest does not hold, another version): the
// caller scores again.
var ErrFormat = errors.New("not a readable store of scored answers")

// open opens the store at path and reads its metadata, its footer's
// digest checked first, and the whole file's too when whole is true.
func open(path string, whole bool) (*os.File, *parquet.File, Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, Meta{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, Meta{}, err
	}
	if err := parquetseal.Check(f, st.Size(), whole); err != nil {
		f.Close()
		return nil, nil, Meta{}, fmt.Errorf("%s: %w: %v", path, ErrFormat, err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, nil, Meta{}, fmt.Errorf("%s: %w: %v", path, ErrFormat, err)
	}
	var m Meta
	m.Version, _ = pf.Lookup("bhasha.scored")
	if m.Version != Version {
		f.Close()
		return nil, nil, m, fmt.Errorf("%s: %w: format version %q, not %q", path, ErrFormat, m.Version, Version)
	}
	bad := func(what string, err error) (*os.File, *parquet.File, Meta, error) {
		f.Close()
		return nil, nil, m, fmt.Errorf("%s: %w: metadata %s: %v", path, ErrFormat, what, err)
	}
	k, _ := pf.Lookup("bhasha.key")
	if err := json.Unmarshal([]byte(k), &m.Key); err != nil {
		return bad("bhasha.key", err)
	}
	n, _ := pf.Lookup("bhasha.notes")
	if err := json.Unmarshal([]byte(n), &m.Notes); err != nil {
		return bad("bhasha.notes", err)
	}
	l, _ := pf.Lookup("bhasha.lines")
	if m.Lines, err = strconv.Atoi(l); err != nil {
		return bad("bhasha.lines", err)
	}
	m.Rows = int(pf.NumRows())
	return f, pf, m, nil
}

// ReadMeta reads only the store's metadata (its footer), once its
// digest holds: it reads the footer twice (once hashed, once parsed),
// none of the rows. Errors are as Read's, but a damaged byte outside the
// footer is found by Read and Open, not here.
func ReadMeta(path string) (Meta, error) {
	f, _, m, err := open(path, false)
	if err != nil {
		return m, err
	}
	f.Close()
	return m, nil
}

// Read reads the store's rows and metadata. A file that is not a store
// of this Version (truncated, damaged, written by another version) is an
// error wrapping ErrFormat, and no row of it is returned; a missing file
// is os.ErrNotExist. It checks the file's digests first (see Checks in
// the package comment: one XXH64 pass over the file), then decodes it.
func Read(path string) ([]score.Row, Meta, error) {
	rd, err := Open(path)
	if err != nil {
		return nil, Meta{}, err
	}
	defer rd.Close()
	m, cols := rd.meta, rd.cols
	if n := rd.starts[len(rd.starts)-1]; n != m.Rows {
		return nil, m, fmt.Errorf("%s: %w: %d rows in the row groups, %d in the footer", path, ErrFormat, n, m.Rows)
	}
	rows := make([]score.Row, m.Rows)
	// Row groups are read concurrently, each whole by one reader: every
	// column of its rows in turn, so that its rows (a few MB) stay in the
	// cache while they are filled, and no two readers write into the
	// same rows.
	groups := rd.pf.RowGroups()
	var wg sync.WaitGroup
	errs := make([]error, len(groups))
	next := make(chan int)
	go func() {
		defer close(next)
		for g := range groups {
			next <- g
		}
	}()
	for range min(runtime.GOMAXPROCS(0), max(1, len(groups))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			intern := make([]map[string]string, len(cols))
			for i := range intern {
				intern[i] = map[string]string{}
			}
			buf := make([]parquet.Value, 4096)
			for g := range next {
				part := rows[rd.starts[g]:rd.starts[g+1]]
				for i, c := range cols {
					if err := readChunk(groups[g].ColumnChunks()[rd.at[i]], c, part, intern[i], buf); err != nil {
						errs[g] = fmt.Errorf("%s: %w: column %s, row group %d: %v", path, ErrFormat, c.name, g, err)
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, m, err
		}
	}
	return rows, m, nil
}

// readChunk fills column c of rows from one row group's column chunk
// (exactly len(rows) values), its strings interned through intern (at
// most 1<<16 of them) and read through buf.
func readChunk(cc parquet.ColumnChunk, c column, rows []score.Row, intern map[string]string, buf []parquet.Value) error {
	at := 0
	// A column's value is often the one before it (a model, a language, a
	// strategy row after row): found by comparing with it, not hashing.
	last, held := "", false
	pages := cc.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		vr := p.Values()
		for {
			k, err := vr.ReadValues(buf)
			if at+k > len(rows) {
				parquet.Release(p)
				return fmt.Errorf("more values than the %d rows", len(rows))
			}
			for _, v := range buf[:k] {
				r := &rows[at]
				at++
				switch c.kind {
				case kindString:
					b := v.ByteArray() // nil for a NULL: ""
					s := last
					if !held || string(b) != last {
						var ok bool
						if s, ok = intern[string(b)]; !ok {
							s = string(b)
							if len(intern) < 1<<16 {
								intern[s] = s
							}
						}
						last, held = s, true
					}
					if err := c.setStr(r, s); err != nil {
						parquet.Release(p)
						return err
					}
				case kindInt:
					c.setNum(r, v.Int64())
				case kindDouble:
					c.setDbl(r, v.Double())
				default:
					c.setFlag(r, v.Boolean())
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(p)
				return err
			}
		}
		parquet.Release(p)
	}
	if at != len(rows) {
		return fmt.Errorf("%d values for %d rows", at, len(rows))
	}
	return nil
}

// A Reader reads a store's rows a row group at a time (groupRows rows
// each, the last fewer), for a reader that needs some of them in turn and
// not all at once (a report's samples sheet): Group gives one group's
// rows in a buffer the next call reuses.
type Reader struct {
	path   string
	f      *os.File
	pf     *parquet.File
	meta   Meta
	cols   []column
	at     []int // the file's column of each of cols
	starts []int // the first row of each group, then the rows
	intern []map[string]string
	buf    []parquet.Value
	rows   []score.Row
	only   []int // the indices in cols that Group reads (nil: all)
}

// KeyColumns are the columns that hold a row's Key.
func KeyColumns() []string {
	return []string{"experiment", "model", "item", "language", "form", "strategy", "condition", "role"}
}

// Only has Group read only the named row columns, the others' fields left
// zero (none named: every column again). A name that is not a row column
// is an error.
func (rd *Reader) Only(names ...string) error {
	if len(names) == 0 {
		rd.only = nil
		return nil
	}
	only := make([]int, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(rd.cols, func(c column) bool { return c.name == n })
		if i < 0 {
			return fmt.Errorf("%s: no row column %s", rd.path, n)
		}
		only = append(only, i)
	}
	rd.only = only
	return nil
}

// Open opens the store at path for reading by group, once its digests
// hold (one XXH64 pass over the file: Group then reads only what it
// decodes). Errors are as Read's.
func Open(path string) (*Reader, error) {
	f, pf, m, err := open(path, true)
	if err != nil {
		return nil, err
	}
	rd := &Reader{path: path, f: f, pf: pf, meta: m, cols: rowColumns(), buf: make([]parquet.Value, 4096)}
	byName := map[string]int{}
	for i, p := range pf.Schema().Columns() {
		byName[p[0]] = i
	}
	for _, c := range rd.cols {
		i, ok := byName[c.name]
		if !ok {
			f.Close()
			return nil, fmt.Errorf("%s: %w: no column %s", path, ErrFormat, c.name)
		}
		rd.at = append(rd.at, i)
		rd.intern = append(rd.intern, map[string]string{})
	}
	n := 0
	for _, rg := range pf.RowGroups() {
		rd.starts = append(rd.starts, n)
		n += int(rg.NumRows())
	}
	rd.starts = append(rd.starts, n)
	return rd, nil
}

// Meta is the store's metadata.
func (rd *Reader) Meta() Meta { return rd.meta }

// Groups is the number of row groups.
func (rd *Reader) Groups() int { return len(rd.starts) - 1 }

// Group returns the rows of group g (rows first to first+len(rows) of
// the store), valid until the next call.
func (rd *Reader) Group(g int) (first int, rows []score.Row, err error) {
	if g < 0 || g >= rd.Groups() {
		return 0, nil, fmt.Errorf("%s: no row group %d of %d", rd.path, g, rd.Groups())
	}
	first, n := rd.starts[g], rd.starts[g+1]-rd.starts[g]
	if cap(rd.rows) < n {
		rd.rows = make([]score.Row, n)
	}
	rows = rd.rows[:n]
	clear(rows)
	rg := rd.pf.RowGroups()[g]
	for i, c := range rd.cols {
		if rd.only != nil && !slices.Contains(rd.only, i) {
			continue
		}
		if err := readChunk(rg.ColumnChunks()[rd.at[i]], c, rows, rd.intern[i], rd.buf); err != nil {
			return 0, nil, fmt.Errorf("%s: %w: column %s, row group %d: %v", rd.path, ErrFormat, c.name, g, err)
		}
	}
	return first, rows, nil
}

// GroupOf is the group holding row i (i in [0, Meta().Rows)).
func (rd *Reader) GroupOf(i int) int {
	g, found := slices.BinarySearch(rd.starts, i)
	if !found {
		g--
	}
	return g
}

// Close closes the file.
func (rd *Reader) Close() error { return rd.f.Close() }

// Keys lists a Key's components in order, for messages.
func (k Key) Keys() []string { return slices.Sorted(maps.Keys(k)) }
