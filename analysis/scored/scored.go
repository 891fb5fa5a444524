// Package scored keeps a run's scored answers on disk, in columns, so that
// a later reader builds its tables without scoring the records again. It
// is a cache: deleting the file loses nothing (the records are scored
// again), and a file that does not match the records and options it was
// made from is never read as theirs (Key).
//
// File grammar: one Parquet file (FileName in the run directory), one row
// per scored answer in scoring order, in row groups of 16,384 rows, the
// columns in the order below, every column Snappy-compressed, every
// number and flag column required, every text column optional: NULL where
// the text is empty (a missing strategy, condition, domain, verdict,
// detail, an empty answer), as an empty cell is in the CSV tables and the
// workbook. Bhasha reads a NULL text back as "".
//
//   - the row columns, named as the answer schema's common fields:
//     experiment, model, item, language, form, strategy, condition, role
//     (engine.Role's text form: "", translation, judge:<model>,
//     choice:<n>), domain, gold, prediction, method, verdict, script
//     (UTF-8 strings, dictionary-encoded but for the free texts gold,
//     prediction and detail, which are plain, their pages without min
//     and max bounds); prompt_tokens, offline_tokens (int64); latency_ms
//     (double); correct, abstain, switched, failed, withheld, cached,
//     empty_response (boolean); marks (int64: bit i is the study's mark
//     i, score.Marks); detail (the JSON of score.Detail, a NaN or an
//     infinity as the string strconv.FormatFloat gives; "" without one).
//   - the study's columns: each field of the study's answer schema
//     (score.Schema.Study) whose name is not a row column, under its name,
//     as boolean, string (optional, dictionary-encoded) or int64, the
//     flags first, then the texts, then the ints, each in the schema's
//     order, for other readers (DuckDB, pandas); Bhasha reads the row
//     columns. At most 16 text and 16 int fields are stored.
//   - key-value metadata: "bhasha.scored" the format version (Version);
//     "bhasha.key" a JSON object naming what the rows were made from
//     (Key); "bhasha.notes" a JSON array of the notes scoring made;
//     "bhasha.lines" the number of record lines read; "bhasha.schema" a
//     JSON array of the study's fields (name, type, description); and the
//     footer's and the whole file's XXH64 (package parquetseal).
//
// Checks: ReadMeta checks the footer's digest before it parses the
// footer; Read and Open check it, then the whole file's (one XXH64 pass
// over the file) before any row is decoded. A file with a byte changed
// anywhere, or without the digests, is an error wrapping ErrFormat, and
// nothing of it is returned. Write replaces the file atomically (package
// atomicfile).
package scored

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/parallel"
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

// A column is one row column as Read takes it back into a Row (s is a
// text column's value, interned).
type column struct {
	name string
	set  func(r *score.Row, v parquet.Value, s string) error
}

func textCol(name string, f func(*score.Row) *string) column {
	return column{name, func(r *score.Row, _ parquet.Value, s string) error { *f(r) = s; return nil }}
}

func flagCol(name string, f func(*score.Row) *bool) column {
	return column{name, func(r *score.Row, v parquet.Value, _ string) error { *f(r) = v.Boolean(); return nil }}
}

func intCol(name string, f func(*score.Row) *int) column {
	return column{name, func(r *score.Row, v parquet.Value, _ string) error { *f(r) = int(v.Int64()); return nil }}
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
		{"role", func(r *score.Row, _ parquet.Value, s string) (err error) {
			r.Key.Role, err = engine.ParseRole(s)
			return err
		}},
		textCol("domain", func(r *score.Row) *string { return &r.Domain }),
		textCol("gold", func(r *score.Row) *string { return &r.Gold }),
		textCol("prediction", func(r *score.Row) *string { return &r.Prediction }),
		{"method", func(r *score.Row, _ parquet.Value, s string) error { r.Method = extract.Method(s); return nil }},
		textCol("verdict", func(r *score.Row) *string { return &r.Verdict }),
		textCol("script", func(r *score.Row) *string { return &r.Script }),
		intCol("prompt_tokens", func(r *score.Row) *int { return &r.PromptTokens }),
		intCol("offline_tokens", func(r *score.Row) *int { return &r.OfflineTokens }),
		{"latency_ms", func(r *score.Row, v parquet.Value, _ string) error { r.LatencyMS = v.Double(); return nil }},
		flagCol("correct", func(r *score.Row) *bool { return &r.Correct }),
		flagCol("abstain", func(r *score.Row) *bool { return &r.Abstain }),
		flagCol("switched", func(r *score.Row) *bool { return &r.Switched }),
		flagCol("failed", func(r *score.Row) *bool { return &r.Failed }),
		flagCol("withheld", func(r *score.Row) *bool { return &r.Withheld }),
		flagCol("cached", func(r *score.Row) *bool { return &r.Cached }),
		flagCol("empty_response", func(r *score.Row) *bool { return &r.EmptyResponse }),
		{"marks", func(r *score.Row, v parquet.Value, _ string) error { r.Marks = score.Marks(v.Int64()); return nil }},
		{"detail", func(r *score.Row, _ parquet.Value, s string) (err error) { r.Detail, err = parseDetail(s); return err }},
	}
}

// answer is a Row as Write writes it: the row columns, then slots for the
// study's columns, each named after a study field or left out (slots).
type answer struct {
	Experiment    string  `parquet:"experiment,optional,dict,snappy"`
	Model         string  `parquet:"model,optional,dict,snappy"`
	Item          string  `parquet:"item,optional,dict,snappy"`
	Language      string  `parquet:"language,optional,dict,snappy"`
	Form          string  `parquet:"form,optional,dict,snappy"`
	Strategy      string  `parquet:"strategy,optional,dict,snappy"`
	Condition     string  `parquet:"condition,optional,dict,snappy"`
	Role          string  `parquet:"role,optional,dict,snappy"`
	Domain        string  `parquet:"domain,optional,dict,snappy"`
	Gold          string  `parquet:"gold,optional,snappy"`
	Prediction    string  `parquet:"prediction,optional,snappy"`
	Method        string  `parquet:"method,optional,dict,snappy"`
	Verdict       string  `parquet:"verdict,optional,dict,snappy"`
	Script        string  `parquet:"script,optional,dict,snappy"`
	PromptTokens  int64   `parquet:"prompt_tokens,snappy"`
	OfflineTokens int64   `parquet:"offline_tokens,snappy"`
	LatencyMS     float64 `parquet:"latency_ms,snappy"`
	Correct       bool    `parquet:"correct,snappy"`
	Abstain       bool    `parquet:"abstain,snappy"`
	Switched      bool    `parquet:"switched,snappy"`
	Failed        bool    `parquet:"failed,snappy"`
	Withheld      bool    `parquet:"withheld,snappy"`
	Cached        bool    `parquet:"cached,snappy"`
	EmptyResponse bool    `parquet:"empty_response,snappy"`
	Marks         int64   `parquet:"marks,snappy"`
	Detail        string  `parquet:"detail,optional,snappy"`

	F0, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13, F14, F15, F16, F17, F18, F19           bool   `parquet:"-"`
	F20, F21, F22, F23, F24, F25, F26, F27, F28, F29, F30, F31, F32, F33, F34, F35, F36, F37, F38, F39 bool   `parquet:"-"`
	F40, F41, F42, F43, F44, F45, F46, F47, F48, F49, F50, F51, F52, F53, F54, F55, F56, F57, F58, F59 bool   `parquet:"-"`
	F60, F61, F62, F63                                                                                 bool   `parquet:"-"`
	T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15                               string `parquet:"-"`
	I0, I1, I2, I3, I4, I5, I6, I7, I8, I9, I10, I11, I12, I13, I14, I15                               int64  `parquet:"-"`
}

// slotsOf names an answer's study slots of each type (their names' prefix,
// their count): as many flags as a schema may have (score.MaxFlags), 16
// texts, 16 ints; a study of more texts or ints is not stored.
var slotsOf = map[score.FieldType]struct {
	prefix string
	n      int
}{score.FlagField: {"F", score.MaxFlags}, score.TextField: {"T", 16}, score.IntField: {"I", 16}}

// A slot is where an answer holds a study column: its offset in answer.
type slot struct {
	field score.Field
	off   uintptr
}

// slots places the study's fields that are not row columns in answer's
// slots, in order, and returns the writer options that name each slot's
// column and leave the others out.
func slots(study []score.Field) ([]slot, []parquet.WriterOption, error) {
	taken := map[string]bool{}
	for _, c := range rowColumns() {
		taken[c.name] = true
	}
	t := reflect.TypeFor[answer]()
	var out []slot
	var opts []parquet.WriterOption
	used := map[score.FieldType]int{}
	for _, f := range study {
		if taken[f.Name] {
			continue
		}
		of := slotsOf[f.Type]
		if used[f.Type] == of.n {
			return nil, nil, fmt.Errorf("the study has more than %d %s fields", of.n, typeName(f.Type))
		}
		name := fmt.Sprintf("%s%d", of.prefix, used[f.Type])
		used[f.Type]++
		sf, _ := t.FieldByName(name)
		tag := f.Name + ",snappy"
		if f.Type == score.TextField {
			tag = f.Name + ",optional,dict,snappy"
		}
		out = append(out, slot{f, sf.Offset})
		opts = append(opts, parquet.StructTag(reflect.StructTag(`parquet:"`+tag+`"`), name))
	}
	return out, opts, nil
}

// set writes r, with the study's fields in slots, into a.
func (a *answer) set(r *score.Row, slots []slot) {
	*a = answer{Experiment: r.Key.Experiment, Model: r.Key.Model, Item: r.Key.Item, Language: r.Key.Language, Form: r.Key.Form,
		Strategy: r.Key.Strategy, Condition: r.Key.Condition, Role: r.Key.Role.String(), Domain: r.Domain, Gold: r.Gold,
		Prediction: r.Prediction, Method: string(r.Method), Verdict: r.Verdict, Script: r.Script,
		PromptTokens: int64(r.PromptTokens), OfflineTokens: int64(r.OfflineTokens), LatencyMS: r.LatencyMS,
		Correct: r.Correct, Abstain: r.Abstain, Switched: r.Switched, Failed: r.Failed, Withheld: r.Withheld,
		Cached: r.Cached, EmptyResponse: r.EmptyResponse, Marks: int64(r.Marks), Detail: detailText(r.Detail)}
	for _, s := range slots {
		p := unsafe.Add(unsafe.Pointer(a), s.off)
		switch s.field.Type {
		case score.FlagField:
			*(*bool)(p) = s.field.Flag(r)
		case score.IntField:
			*(*int64)(p) = int64(s.field.Int(r))
		default:
			*(*string)(p) = s.field.Text(r)
		}
	}
}

// number is a Detail's float in JSON: a number, or a string where JSON
// has none (NaN, ±Inf: a choice the model cannot produce).
type number float64

func (x number) MarshalJSON() ([]byte, error) {
	if b, err := json.Marshal(float64(x)); err == nil {
		return b, nil
	}
	return json.Marshal(strconv.FormatFloat(float64(x), 'g', -1, 64))
}

func (x *number) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*float64)(x)); err == nil {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s is not a number", b)
	}
	f, err := strconv.ParseFloat(s, 64)
	*x = number(f)
	return err
}

// detailJSON is score.Detail as the detail column holds it.
type detailJSON struct {
	ChoiceLogprobs []number
	Chosen         int
	JudgeScores    map[string]number
}

// detailText is the JSON of d ("" for nil).
func detailText(d *score.Detail) string {
	if d == nil {
		return ""
	}
	b, _ := json.Marshal(detailJSON{ChoiceLogprobs: convert[number](d.ChoiceLogprobs), Chosen: d.Chosen, JudgeScores: convertMap[number](d.JudgeScores)})
	return string(b)
}

// parseDetail reads a detail column's text back.
func parseDetail(s string) (*score.Detail, error) {
	if s == "" {
		return nil, nil
	}
	var d detailJSON
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return nil, fmt.Errorf("column detail: %w", err)
	}
	return &score.Detail{ChoiceLogprobs: convert[float64](d.ChoiceLogprobs), Chosen: d.Chosen, JudgeScores: convertMap[float64](d.JudgeScores)}, nil
}

func convert[T, F ~float64](xs []F) []T {
	if xs == nil {
		return nil
	}
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}

func convertMap[T, F ~float64](m map[string]F) map[string]T {
	if m == nil {
		return nil
	}
	out := make(map[string]T, len(m))
	for k, x := range m {
		out[k] = T(x)
	}
	return out
}

// groupRows is the rows of one row group.
const groupRows = 1 << 14

// Write stores rows, made as m says, at path (atomically; see the
// package comment). schema is the study's answer schema (its study
// fields become columns; nil for none; a study of more than 16 text or
// 16 int fields is an error). It hashes the file as it writes it,
// then reads its footer back once to write the digests in place, before
// the file takes its name.
func Write(path string, rows []score.Row, schema *score.Schema, m Meta) error {
	var study []score.Field
	if schema != nil {
		study = schema.Study()
	}
	placed, options, err := slots(study)
	if err != nil {
		return fmt.Errorf("storing scored answers: %w", err)
	}
	fields := []map[string]string{}
	for _, f := range study {
		fields = append(fields, map[string]string{"name": f.Name, "type": typeName(f.Type), "description": f.Description})
	}
	if m.Notes == nil {
		m.Notes = []string{}
	}
	options = append(options, parquet.MaxRowsPerRowGroup(groupRows), parquet.SkipPageBounds("gold"),
		parquet.SkipPageBounds("prediction"), parquet.SkipPageBounds("detail"), parquet.KeyValueMetadata("bhasha.scored", Version))
	for _, kv := range []struct {
		k string
		v any
	}{{"bhasha.key", m.Key}, {"bhasha.notes", m.Notes}, {"bhasha.lines", m.Lines}, {"bhasha.schema", fields}} {
		b, _ := json.Marshal(kv.v)
		options = append(options, parquet.KeyValueMetadata(kv.k, string(b)))
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("storing scored answers: %w", err)
	}
	defer f.Abort()
	sw := parquetseal.NewHasher(f)
	w := parquet.NewGenericWriter[answer](sw, options...)
	parquetseal.Reserve(w)
	buf := make([]answer, 4096)
	for from := 0; from < len(rows) && err == nil; from += len(buf) {
		part := rows[from:min(len(rows), from+len(buf))]
		for i := range part {
			buf[i].set(&part[i], placed)
		}
		_, err = w.Write(buf[:len(part)])
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return fmt.Errorf("storing scored answers in %s: %w", path, err)
	}
	if err := parquetseal.Seal(f.File, sw); err != nil {
		return fmt.Errorf("storing scored answers in %s: writing its digests: %w", path, err)
	}
	return f.Commit()
}

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
	var m Meta
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, m, err
	}
	fail := func(err error) (*os.File, *parquet.File, Meta, error) {
		f.Close()
		return nil, nil, m, fmt.Errorf("%s: %w: %v", path, ErrFormat, err)
	}
	pf, err := OpenSealed(f, whole)
	if err != nil {
		return fail(err)
	}
	if m.Version, _ = pf.Lookup("bhasha.scored"); m.Version != Version {
		return fail(fmt.Errorf("format version %q, not %q", m.Version, Version))
	}
	for k, into := range map[string]any{"bhasha.key": &m.Key, "bhasha.notes": &m.Notes, "bhasha.lines": &m.Lines} {
		if s, _ := pf.Lookup(k); json.Unmarshal([]byte(s), into) != nil {
			return fail(fmt.Errorf("metadata %s: %q is not a JSON %T", k, s, into))
		}
	}
	m.Rows = int(pf.NumRows())
	return f, pf, m, nil
}

// OpenSealed checks f's footer digest (and the whole file's too when
// whole is true: one XXH64 pass over the file; package parquetseal), then
// opens it as a Parquet file without its page index and bloom filters.
func OpenSealed(f *os.File, whole bool) (*parquet.File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := parquetseal.Check(f, st.Size(), whole); err != nil {
		return nil, err
	}
	return parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
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
// is os.ErrNotExist. It checks the file's digests first (one XXH64 pass
// over the file), then decodes its row groups on GOMAXPROCS goroutines,
// each column's texts interned within a goroutine's row groups.
func Read(path string) ([]score.Row, Meta, error) {
	rd, err := Open(path)
	if err != nil {
		return nil, Meta{}, err
	}
	defer rd.Close()
	rows := make([]score.Row, rd.meta.Rows)
	errs := make([]error, rd.Groups())
	states := sync.Pool{New: func() any { return newReadState(rd.text) }} // one a goroutine at a time
	parallel.For(rd.Groups(), func(g int) {
		st := states.Get().(*readState)
		errs[g] = rd.read(g, rows[rd.starts[g]:rd.starts[g+1]], st)
		states.Put(st)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, rd.meta, err
	}
	return rows, rd.meta, nil
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
	at     []int  // the file's column of each of cols
	text   []bool // whether each of cols is a text column
	starts []int  // the first row of each group, then the rows
	st     *readState
	rows   []score.Row
}

// readState is what reading a row group uses: each column's interned
// texts (at most 1<<16 a column), its last text, and a batch's values.
type readState struct {
	intern []map[string]string
	last   []string
	values [][]parquet.Value // per column, batchRows values
	texts  [][]string        // per text column, batchRows texts
}

// batchRows is the rows read at a time: every column's values for them
// first, then the rows filled one by one, so that the rows being filled
// stay in the processor's cache.
const batchRows = 512

// newReadState is a readState for columns of which text says which are
// text columns.
func newReadState(text []bool) *readState {
	n := len(text)
	st := &readState{intern: make([]map[string]string, n), last: make([]string, n), values: make([][]parquet.Value, n),
		texts: make([][]string, n)}
	for i := range n {
		st.intern[i] = map[string]string{}
		st.values[i] = make([]parquet.Value, batchRows)
		if text[i] {
			st.texts[i] = make([]string, batchRows)
		}
	}
	return st
}

// Open opens the store at path for reading by group, once its digests
// hold (one XXH64 pass over the file: Group then reads only what it
// decodes). Errors are as Read's.
func Open(path string) (*Reader, error) {
	f, pf, m, err := open(path, true)
	if err != nil {
		return nil, err
	}
	rd := &Reader{path: path, f: f, pf: pf, meta: m, cols: rowColumns()}
	for _, c := range rd.cols {
		leaf, ok := pf.Schema().Lookup(c.name)
		if !ok {
			f.Close()
			return nil, fmt.Errorf("%s: %w: no column %s", path, ErrFormat, c.name)
		}
		rd.at = append(rd.at, leaf.ColumnIndex)
		rd.text = append(rd.text, leaf.Node.Type().Kind() == parquet.ByteArray)
	}
	rd.st = newReadState(rd.text)
	n := 0
	for _, rg := range pf.RowGroups() {
		rd.starts = append(rd.starts, n)
		n += int(rg.NumRows())
	}
	if rd.starts = append(rd.starts, n); n != m.Rows {
		f.Close()
		return nil, fmt.Errorf("%s: %w: %d rows in the row groups, %d in the footer", path, ErrFormat, n, m.Rows)
	}
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
	n := rd.starts[g+1] - rd.starts[g]
	if cap(rd.rows) < n {
		rd.rows = make([]score.Row, n)
	}
	rows = rd.rows[:n]
	clear(rows)
	return rd.starts[g], rows, rd.read(g, rows, rd.st)
}

// read fills rows, those of group g, from its column chunks, batchRows
// rows at a time.
func (rd *Reader) read(g int, rows []score.Row, st *readState) error {
	ccs := rd.pf.RowGroups()[g].ColumnChunks()
	vrs := make([]parquet.ColumnChunkValueReader, len(rd.cols))
	for i := range rd.cols {
		vrs[i] = parquet.NewColumnChunkValueReader(ccs[rd.at[i]])
		defer vrs[i].Close()
	}
	fail := func(i int, err error) error {
		return fmt.Errorf("%s: %w: column %s, row group %d: %v", rd.path, ErrFormat, rd.cols[i].name, g, err)
	}
	for at := 0; at < len(rows); at += batchRows {
		batch := rows[at:min(at+batchRows, len(rows))]
		for i := range rd.cols {
			err := st.fill(i, vrs[i], rd.text[i], len(batch))
			if err == io.ErrUnexpectedEOF {
				err = fmt.Errorf("fewer values than the %d rows", len(rows))
			}
			if err != nil {
				return fail(i, err)
			}
		}
		for j := range batch {
			for i, c := range rd.cols {
				v, s := st.values[i][j], ""
				if rd.text[i] {
					v, s = parquet.Value{}, st.texts[i][j]
				}
				if err := c.set(&batch[j], v, s); err != nil {
					return fail(i, err)
				}
			}
		}
	}
	for i := range rd.cols {
		if k, err := vrs[i].ReadValues(st.values[i][:1]); k > 0 || err != io.EOF {
			return fail(i, fmt.Errorf("more values than the %d rows", len(rows)))
		}
	}
	return nil
}

// fill reads the next n values of column i from vr, a text column's as
// texts (interned), which stay valid when vr moves to its next page (its
// values' bytes do not); io.ErrUnexpectedEOF when vr has fewer.
func (st *readState) fill(i int, vr parquet.ValueReader, text bool, n int) error {
	values := st.values[i][:n]
	for got := 0; got < n; {
		k, err := vr.ReadValues(values[got:])
		if text {
			for j := got; j < got+k; j++ {
				st.texts[i][j] = st.text(i, values[j].ByteArray())
			}
		}
		if got += k; got == n {
			break
		}
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// text is b as a string, interned in column i's texts.
func (st *readState) text(i int, b []byte) string {
	last := &st.last[i]
	if string(b) == *last { // a text is often the one before it: found without hashing
		return *last
	}
	s, ok := st.intern[i][string(b)]
	if !ok {
		if s = string(b); len(st.intern[i]) < 1<<16 {
			st.intern[i][s] = s
		}
	}
	*last = s
	return s
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
