package scored

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// rowsForTest sets every field of a Row, a Detail of each kind among
// them, and marks in the low and the high bits.
func rowsForTest(n int) []score.Row {
	var rows []score.Row
	for i := range n {
		r := score.Row{
			Key: engine.Key{Experiment: "e", Model: []string{"m1", "m2"}[i%2], Item: string(rune('a' + i%26)), Language: "hin", Form: "native",
				Strategy: "tint-cm", Condition: []string{"", "c|1"}[i%2]},
			Domain: "capital", Gold: "रोम", Prediction: "रो म" + string(rune('0'+i%10)), Method: extract.MethodJSON, Verdict: score.VerdictCorrect,
			Script: "Devanagari", PromptTokens: 40 + i, OfflineTokens: i % 7, LatencyMS: float64(i) / 3,
			Correct: i%2 == 0, Abstain: i%3 == 0, Switched: i%5 == 0, Failed: i%7 == 0, Withheld: i%11 == 0, Cached: i%13 == 0, EmptyResponse: i%17 == 0,
		}
		r.Marks.Set(0, i%2 == 1)
		r.Marks.Set(63, i%3 == 1)
		switch i % 4 {
		case 1:
			r.Key.Role = engine.Judge("m1")
			r.Detail = &score.Detail{JudgeScores: map[string]float64{"Overall": 4, "fluency": 2.5}}
		case 2:
			r.Key.Role = engine.Choice(3)
			r.Detail = &score.Detail{ChoiceLogprobs: []float64{-1.5, math.Inf(-1), -0.25}, Chosen: 2}
		case 3:
			r.Key.Role = engine.Translation()
		}
		rows = append(rows, r)
	}
	return rows
}

// TestRoundTripKeepsEveryField writes one row group and several (encoded
// concurrently, committed in order: each row differs from the others, so a
// group out of place fails).
func TestRoundTripKeepsEveryField(t *testing.T) {
	for _, n := range []int{5000, 3*groupRows + 17} {
		t.Run(strconv.Itoa(n), func(t *testing.T) { roundTrip(t, n) })
	}
}

func roundTrip(t *testing.T, nrows int) {
	path := filepath.Join(t.TempDir(), FileName)
	rows := rowsForTest(nrows)
	schema := score.NewSchema(score.CorrectField("rule"), score.Mark("translit", "a mark", 0),
		score.Text("verdict", "judge", func(r *score.Row) string { return r.Verdict }),
		score.Int("chosen", "an int", func(r *score.Row) int { return r.PromptTokens % 3 }))
	m := Meta{Key: Key{"records": "sha256:x", "experiment.yaml scoring": "abc"}, Notes: []string{"3 duplicate record(s) ignored"}, Lines: 5003}
	if err := Write(path, rows, schema, m); err != nil {
		t.Fatal(err)
	}
	got, gm, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		if !reflect.DeepEqual(got[i], rows[i]) {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, got[i], rows[i])
		}
	}
	if !reflect.DeepEqual(gm.Key, m.Key) || !reflect.DeepEqual(gm.Notes, m.Notes) || gm.Lines != m.Lines || gm.Rows != len(rows) || gm.Version != Version {
		t.Errorf("meta %+v, want %+v", gm, m)
	}
	if ms, err := ReadMeta(path); err != nil || ms.Lines != 5003 {
		t.Errorf("ReadMeta: %+v, %v", ms, err)
	}
	// The study's own fields are columns too, for other readers.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(pf.RowGroups()), (nrows+groupRows-1)/groupRows; got != want {
		t.Errorf("%d row groups, want %d", got, want)
	}
	type study struct {
		Translit bool  `parquet:"translit"`
		Chosen   int64 `parquet:"chosen"`
	}
	got2 := make([]study, len(rows))
	n, err := parquet.NewGenericReader[study](pf).Read(got2)
	if err != nil && n != len(rows) {
		t.Fatal(err)
	}
	for i, r := range rows {
		if got2[i].Translit != r.Marks.Has(0) || got2[i].Chosen != int64(r.PromptTokens%3) {
			t.Fatalf("row %d: study columns %+v", i, got2[i])
		}
	}
}

func TestEmptyStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := Write(path, nil, nil, Meta{Key: Key{"records": "r"}}); err != nil {
		t.Fatal(err)
	}
	rows, m, err := Read(path)
	if err != nil || len(rows) != 0 || m.Key["records"] != "r" {
		t.Fatalf("%d rows, %+v, %v", len(rows), m, err)
	}
}

func TestDamagedStoreIsErrFormat(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := Write(path, rowsForTest(5000), nil, Meta{Key: Key{"records": "r"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"truncated": b[:len(b)/2],
		"empty":     nil,
		"garbage":   []byte("PAR1 not a parquet file at all PAR1"),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".parquet")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Read(p); !errors.Is(err, ErrFormat) {
				t.Errorf("Read: %v, want ErrFormat", err)
			}
		})
	}
	if _, _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

func TestKeyChanged(t *testing.T) {
	tests := []struct {
		now, old Key
		want     []string
	}{
		{Key{"a": "1", "b": "2"}, Key{"a": "1", "b": "2"}, nil},
		{Key{"a": "1", "b": "3"}, Key{"a": "1", "b": "2"}, []string{"b"}},
		{Key{"a": "1", "c": "2"}, Key{"a": "1", "b": "2"}, []string{"b", "c"}},
	}
	for _, tc := range tests {
		if got := tc.now.Changed(tc.old); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v vs %v: %v, want %v", tc.now, tc.old, got, tc.want)
		}
	}
}

// A Reader reads each row group as Read reads those rows, whatever order
// the groups are asked in; GroupOf finds each row's group.
func TestReaderGroups(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	rows := rowsForTest(2*groupRows + 5)
	if err := Write(path, rows, score.NewSchema(score.CorrectField("rule")), Meta{Key: Key{"records": "x"}}); err != nil {
		t.Fatal(err)
	}
	rd, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.Groups() != 3 || rd.Meta().Rows != len(rows) {
		t.Fatalf("%d groups of %d rows, want 3 of %d", rd.Groups(), rd.Meta().Rows, len(rows))
	}
	for _, g := range []int{2, 0, 1, 2} {
		first, got, err := rd.Group(g)
		if err != nil {
			t.Fatal(err)
		}
		if first != g*groupRows || len(got) != min(groupRows, len(rows)-first) {
			t.Fatalf("group %d: rows %d to %d", g, first, first+len(got))
		}
		for j := range got {
			if !reflect.DeepEqual(got[j], rows[first+j]) {
				t.Fatalf("row %d:\n got %+v\nwant %+v", first+j, got[j], rows[first+j])
			}
		}
	}
	for _, i := range []int{0, groupRows - 1, groupRows, 2*groupRows + 4} {
		if g := rd.GroupOf(i); g != i/groupRows {
			t.Errorf("GroupOf(%d) = %d, want %d", i, g, i/groupRows)
		}
	}
	if _, _, err := rd.Group(3); err == nil {
		t.Error("Group(3) of 3 groups read something")
	}
}

// A store with any one byte flipped (its magic, its pages, its page
// headers and indexes, its footer and its metadata, its tail) is not
// read: Read and Open return an ErrFormat error and no rows; ReadMeta
// either returns the metadata as written (the byte is outside the
// footer, which it alone reads) or an ErrFormat error, always the latter
// for a byte of the footer or the tail.
func TestFlippedByteIsErrFormat(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	m := Meta{Key: Key{"records": "sha256:r"}, Notes: []string{"a note"}, Lines: 2*groupRows + 100}
	if err := Write(path, rowsForTest(2*groupRows+100), nil, m); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(orig)
	footerStart := n - 8 - int(binary.LittleEndian.Uint32(orig[n-8:]))
	type flip struct {
		name string
		at   int
	}
	cases := []flip{{"magic", 0}, {"magic", 3}, {"first page", 4}, {"footer's length", n - 8}, {"tail magic", n - 1}}
	for _, key := range []string{"bhasha.key", "bhasha.notes", "bhasha.lines", "bhasha.footer.xxh64", "bhasha.xxh64"} {
		i := bytes.LastIndex(orig, []byte(key))
		if i < footerStart {
			t.Fatalf("no metadata %s in the footer", key)
		}
		cases = append(cases, flip{key + "'s name", i + 1}, flip{key + "'s value", i + len(key) + 4})
	}
	for at := 0; at < footerStart; at += footerStart / 97 { // pages, page headers, page indexes
		cases = append(cases, flip{"body", at})
	}
	for at := footerStart; at < n; at += 13 { // the footer: schema, row groups, metadata
		cases = append(cases, flip{"footer", at})
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %d", c.name, c.at), func(t *testing.T) {
			b := bytes.Clone(orig)
			b[c.at] ^= 0x10
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if rows, _, err := Read(path); !errors.Is(err, ErrFormat) || rows != nil || !strings.Contains(err.Error(), path) {
				t.Errorf("Read: %d rows, %v; want an ErrFormat error naming the file", len(rows), err)
			}
			if rd, err := Open(path); !errors.Is(err, ErrFormat) {
				if rd != nil {
					rd.Close()
				}
				t.Errorf("Open: %v, want ErrFormat", err)
			}
			got, err := ReadMeta(path)
			switch {
			case err == nil && c.at >= footerStart:
				t.Errorf("ReadMeta read a footer with byte %d flipped: %+v", c.at, got)
			case err == nil && !reflect.DeepEqual(got, want):
				t.Errorf("ReadMeta: %+v, want %+v", got, want)
			case err != nil && !errors.Is(err, ErrFormat):
				t.Errorf("ReadMeta: %v, want ErrFormat", err)
			}
		})
	}
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, _, err := Read(path); err != nil || len(rows) != 2*groupRows+100 {
		t.Fatalf("the store as written: %d rows, %v", len(rows), err)
	}
}

// An empty text is NULL in the file, as an empty cell is in the CSV
// tables and the workbook (a missing strategy, condition, domain, detail,
// an empty answer, a study's text), and reads back as ""; the numbers and
// flags stay required.
func TestEmptyTextIsNull(t *testing.T) {
	rows := rowsForTest(4)
	rows[1].Key.Strategy, rows[1].Domain, rows[1].Prediction, rows[1].Verdict = "", "", "", ""
	rows[2].Key.Condition = "c"
	path := filepath.Join(t.TempDir(), FileName)
	schema := score.NewSchema(score.Text("verdict_copy", "a study text", func(r *score.Row) string { return r.Verdict }))
	if err := Write(path, rows, schema, Meta{Key: Key{"records": "x"}}); err != nil {
		t.Fatal(err)
	}
	got, _, err := Read(path)
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("read back %+v %v\nwant %+v", got, err, rows)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pf.Schema().Fields() {
		text := c.Type().Kind() == parquet.ByteArray
		if c.Optional() != text || c.Required() == text {
			t.Errorf("column %s: optional %v, required %v; want optional only for texts", c.Name(), c.Optional(), c.Required())
		}
	}
	type texts struct {
		Strategy   *string `parquet:"strategy,optional"`
		Condition  *string `parquet:"condition,optional"`
		Domain     *string `parquet:"domain,optional"`
		Prediction *string `parquet:"prediction,optional"`
		Detail     *string `parquet:"detail,optional"`
		Study      *string `parquet:"verdict_copy,optional"`
	}
	read := make([]texts, len(rows))
	if n, err := parquet.NewGenericReader[texts](pf).Read(read); n != len(rows) {
		t.Fatal(n, err)
	}
	str := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return strconv.Quote(*p)
	}
	for i, r := range rows {
		for _, tc := range []struct {
			col  string
			got  *string
			want string
		}{
			{"strategy", read[i].Strategy, r.Key.Strategy},
			{"condition", read[i].Condition, r.Key.Condition},
			{"domain", read[i].Domain, r.Domain},
			{"prediction", read[i].Prediction, r.Prediction},
			{"detail", read[i].Detail, detailText(rows[i].Detail)},
			{"verdict_copy", read[i].Study, r.Verdict},
		} {
			want := "NULL"
			if tc.want != "" {
				want = strconv.Quote(tc.want)
			}
			if str(tc.got) != want {
				t.Errorf("row %d column %s: %s, want %s", i, tc.col, str(tc.got), want)
			}
		}
	}
}

// BenchmarkWriteRead writes a store of 200,000 rows and reads it back,
// with Read and, beside it, with parquet-go's GenericReader into the
// struct Write writes (which allocates each text anew, where Read interns
// them).
func BenchmarkWriteRead(b *testing.B) {
	rows := rowsForTest(200_000)
	schema := score.NewSchema(score.CorrectField("rule"), score.Mark("translit", "a mark", 0))
	path := filepath.Join(b.TempDir(), FileName)
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := Write(path, rows, schema, Meta{Key: Key{"records": "x"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Read(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read with GenericReader", func(b *testing.B) {
		b.ReportAllocs()
		_, wo, _ := slots(schema.Study())
		var opts []parquet.ReaderOption
		for _, o := range wo {
			opts = append(opts, o.(parquet.ReaderOption))
		}
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			st, _ := f.Stat()
			pf, err := parquet.OpenFile(f, st.Size())
			if err != nil {
				b.Fatal(err)
			}
			out := make([]answer, pf.NumRows())
			if n, _ := parquet.NewGenericReader[answer](pf, opts...).Read(out); n != len(rows) {
				b.Fatalf("%d rows", n)
			}
			f.Close()
		}
	})
}

// A study with as many fields of a type as the store has slots for (as
// many flags as a schema may have) is stored, its fields as columns; one
// more text or int is refused, and the store already there is left as it
// was.
func TestStudySlots(t *testing.T) {
	fields := func(typ score.FieldType, n int) []score.Field {
		var out []score.Field
		for i := range n {
			name := fmt.Sprintf("%s_%d", typeName(typ), i)
			switch typ {
			case score.FlagField:
				out = append(out, score.Flag(name, "", func(r *score.Row) bool { return r.PromptTokens%(i+2) == 0 }))
			case score.IntField:
				out = append(out, score.Int(name, "", func(r *score.Row) int { return r.PromptTokens * i }))
			default:
				out = append(out, score.Text(name, "", func(r *score.Row) string { return fmt.Sprint(r.PromptTokens % (i + 2)) }))
			}
		}
		return out
	}
	for _, c := range []struct {
		typ   score.FieldType
		slots int
	}{{score.FlagField, score.MaxFlags}, {score.TextField, 16}, {score.IntField, 16}} {
		t.Run(typeName(c.typ), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			rows := rowsForTest(50)
			if err := Write(path, rows, score.NewSchema(fields(c.typ, c.slots)...), Meta{Key: Key{"records": "x"}}); err != nil {
				t.Fatal(err)
			}
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			pf, err := parquet.OpenFile(f, int64(len(orig)))
			if err != nil {
				t.Fatal(err)
			}
			for i, fd := range fields(c.typ, c.slots) {
				leaf, ok := pf.Schema().Lookup(fd.Name)
				if !ok {
					t.Fatalf("no column %s", fd.Name)
				}
				vals := make([]parquet.Value, len(rows))
				n, _ := parquet.NewColumnChunkValueReader(pf.RowGroups()[0].ColumnChunks()[leaf.ColumnIndex]).ReadValues(vals)
				for j, v := range vals[:n] {
					var want any = fd.Flag(&rows[j])
					got := any(v.Boolean())
					if c.typ == score.IntField {
						want, got = int64(fd.Int(&rows[j])), v.Int64()
					} else if c.typ == score.TextField {
						want, got = fd.Text(&rows[j]), string(v.ByteArray())
					}
					if n != len(rows) || got != want {
						t.Fatalf("column %d (%s) row %d: %v of %d values, want %v", i, fd.Name, j, got, n, want)
					}
				}
			}
			if c.typ == score.FlagField {
				return // score.NewSchema refuses more
			}
			err = Write(path, rows, score.NewSchema(fields(c.typ, c.slots+1)...), Meta{Key: Key{"records": "y"}})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d", c.slots)) {
				t.Errorf("%d fields: %v, want an error", c.slots+1, err)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, orig) {
				t.Error("the refused write changed the store")
			}
		})
	}
}
