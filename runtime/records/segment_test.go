package records

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/klauspost/compress/zstd"
)

// fullRecord sets every exported field of engine.Record.
func fullRecord(t *testing.T) engine.Record {
	full := engine.Record{Key: "e|m|1", Fields: engine.Key{Experiment: "e", Model: "m", Item: "1", Language: "hin", Form: "native", Strategy: "s", Condition: "c", Role: engine.Judge("m|x")},
		Kind: "chat", ServedModel: "sm", Status: engine.StatusOK, Error: "err", Response: "उत्तर \"q\"\n<b>", Reasoning: "why", FinishReason: "stop",
		PromptTokens: -3, CompletionTokens: 1 << 40, LatencyMS: 1.25e-7, Attempts: 2, Endpoint: "http://x", Cached: true, CacheKey: "ck",
		Logprobs: json.RawMessage(`{"a":1}`), PromptLogprobs: json.RawMessage(`null`), Refusal: "no", ToolCalls: json.RawMessage(`[]`), EmptyResponse: true,
		Request: json.RawMessage(`{"prompt":  "p <b>"}`), RequestSHA256: "d", Identity: &engine.Identity{ID: "i", Root: "r", Revision: "v"}, Simulated: true,
		Extracted: &extract.Result{Value: "v", Method: extract.MethodJSON, Fields: map[string]string{"a": "b"}, Numbers: map[string]float64{"n": 0.1}, Fallback: "f", Note: "n"}}
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && v.Field(i).IsZero() {
			t.Fatalf("the test's record leaves %s zero: set it", f.Name)
		}
	}
	return full
}

// A line comes back from its row byte for byte, in columns (every field
// of engine.Record a column: a field added to Record and not to segRow
// fails here), or whole in the line column when it is not the Writer's;
// projected reading gives what encoding/json gives of the line.
func TestSegmentRowsGiveBackTheirLines(t *testing.T) {
	full := fullRecord(t)
	sealedLine := func(r engine.Record) string {
		w := newWriter(nopCloser{}, "x")
		if _, err := w.encode(&r); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(w.buf.String(), "\n")
	}
	cases := []struct {
		name    string
		line    string
		inLines bool // kept whole in the line column
	}{
		{"every field", sealedLine(full), false},
		{"an empty record", sealedLine(engine.Record{Key: "k"}), false},
		{"a translation", sealedLine(engine.Record{Key: "k", Fields: engine.Key{Role: engine.Translation()}}), false},
		{"unsealed (an older Bhasha)", `{"key":"k","status":"ok","response":"r"}`, true},
		{"reformatted", `{"key": "k", "status": "ok"}`, true},
		{"an unknown member", strings.Replace(sealedLine(full), `"key":`, `"new":1,"key":`, 1), true},
	}
	e := newLineEncoder()
	for _, c := range cases {
		row, err := e.rowOf([]byte(c.line))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (row.Line != "") != c.inLines {
			t.Errorf("%s: kept whole %v, want %v", c.name, row.Line != "", c.inLines)
		}
		back, err := e.rowLine(&row)
		if err != nil || string(back) != c.line {
			t.Errorf("%s: gives back\n%s\nnot\n%s (%v)", c.name, back, c.line, err)
		}
	}
	// Through a segment file, projected.
	dir := t.TempDir()
	p := filepath.Join(dir, SegmentName(1))
	if err := writeSegment(p, "test", 2, func(add func([]byte) error) error {
		for _, c := range cases {
			if err := add([]byte(c.line)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s, err := openSegment(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if s.digest.Sealed || len(s.md.RowGroups) != 3 {
		t.Fatalf("sealed %v, %d row groups: want unsealed (some lines are), 3", s.digest.Sealed, len(s.md.RowGroups))
	}
	for _, o := range []StreamOptions{{}, {WithRequests: true}, {SkipExtracted: true, SkipDigests: true}, {TextsOnly: true, WithRequests: true}} {
		var got []engine.Record
		for g := range s.md.RowGroups {
			if _, _, err := s.decodeGroup(g, o, new(decoder), nil, nil, func(_ int, r *engine.Record) error { got = append(got, *r); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range cases {
			var want engine.Record
			if err := decodeLine([]byte(c.line), o, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("%+v, %s:\n got %+v\nwant %+v", o, c.name, got[i], want)
			}
		}
	}
}

// runUnique is Unique's whole answer on dir, the records copied.
type uniqueOf struct {
	recs   []engine.Record
	lines  []int32
	d      Findings
	nlines int
}

func runUnique(t *testing.T, dir string, o StreamOptions) uniqueOf {
	t.Helper()
	got, lines, d, n, err := Unique(context.Background(), dir, o, func(line int, r *engine.Record) (engine.Record, error) { return *r, nil })
	if err != nil {
		t.Fatal(err)
	}
	return uniqueOf{got, lines, d, n}
}

// segmentsDir is a run directory of several Parquet segments and a live
// file: duplicates, a conflict, failed records answered later, another
// experiment's record, varied fields.
func segmentsDir(t *testing.T) []*engine.Record {
	t.Helper()
	var rs []*engine.Record
	for i := range 4000 {
		r := segRec(i, engine.StatusOK)
		r.Fields = engine.Key{Experiment: "e", Model: "m", Item: fmt.Sprint(i), Language: "hin", Role: engine.Translation()}
		if i%7 == 0 {
			r.Identity = &engine.Identity{ID: "i", Root: "r"}
			r.Extracted = &extract.Result{Value: fmt.Sprint(i), Method: extract.MethodJSON}
			r.Logprobs = json.RawMessage(`[{"t":-0.5}]`)
		}
		rs = append(rs, r)
	}
	failed := segRec(5000, engine.StatusFailed)
	conflict := segRec(10, engine.StatusOK)
	conflict.Response = "another answer"
	other := segRec(6000, engine.StatusOK)
	other.Key = "other|m|1|||||"
	return append(rs, failed, segRec(3, engine.StatusOK), other, segRec(5000, engine.StatusOK), conflict)
}

// Unique reading the segments' projected columns gives what it gives
// reading the same records as lines, and what ReadUnique gives.
func TestUniqueReadsSegmentColumns(t *testing.T) {
	rs := segmentsDir(t)
	dir, plain := t.TempDir(), t.TempDir()
	writeRecs(t, dir, 200<<10, 1, rs)
	writeRecs(t, plain, 0, 0, rs)
	if segs, _ := filepath.Glob(filepath.Join(dir, "records-*"+segExt)); len(segs) < 3 {
		t.Fatalf("%d segments: want several", len(segs))
	}
	for _, o := range []StreamOptions{{Workers: 3}, {Experiment: "e", Workers: 1}, {SkipExtracted: true, Workers: 2}, {WithRequests: true}, {TextsOnly: true}} {
		want := runUnique(t, plain, o)
		got := runUnique(t, dir, o)
		// The findings name the lines in their files.
		for i := range want.d.Conflicts {
			want.d.Conflicts[i].At = got.d.Conflicts[i].At
		}
		for i := range want.d.Foreign {
			want.d.Foreign[i].At = got.d.Foreign[i].At
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v: from segments\n got %d %+v\nwant %d %+v", o, len(got.recs), got.d, len(want.recs), want.d)
		}
		rd, _, err := ReadUnique(dir, o.Experiment, o.WithRequests)
		if err != nil || len(rd) != len(got.recs) {
			t.Fatalf("ReadUnique: %d records, %v", len(rd), err)
		}
	}
}

// With Want, a sealed segment's record of a key asked for reads as it
// does without; another reaches work with its key and the fields read
// from it alone.
func TestWantReadsOnlyTheKeysAskedFor(t *testing.T) {
	rs := segmentsDir(t)
	dir := t.TempDir()
	writeRecs(t, dir, 200<<10, 1, rs) // every record sealed
	read := func(o StreamOptions) []engine.Record {
		var out []engine.Record
		if _, err := Each(context.Background(), dir, o, func(_ int, r *engine.Record) (engine.Record, error) { return *r, nil },
			func(_ int, _ string, _ bool, r engine.Record) error { out = append(out, r); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	o := StreamOptions{WithRequests: true, SkipExtracted: true, SkipDigests: true, TextsOnly: true}
	all := read(o)
	o.Want = func(key string) bool { return len(key)%3 == 0 }
	got := read(o)
	if len(got) != len(all) || len(all) < 4000 {
		t.Fatalf("%d records with Want, %d without", len(got), len(all))
	}
	skipped := 0
	for i, r := range got {
		switch {
		case o.Want(r.Key) && reflect.DeepEqual(r, all[i]):
		case o.Want(r.Key):
			t.Fatalf("record %d (%s), asked for:\n got %+v\nwant %+v", i, r.Key, r, all[i])
		case r.Key != all[i].Key || r.Fields.String() != r.Key || r.Status != "" || r.Response != "" || r.Request != nil:
			t.Fatalf("record %d (%s), not asked for: %+v, want its key and fields alone", i, r.Key, r)
		default:
			skipped++
		}
	}
	if skipped < 1000 {
		t.Fatalf("%d records not asked for: want more", skipped)
	}
}

// oldSegment writes lines as an older Bhasha's segment n of dir: zstd
// frames of whole lines ending in a skippable frame, and a lean copy.
func oldSegment(t *testing.T, dir string, n int, lines []byte) {
	t.Helper()
	var b bytes.Buffer
	zw, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	for part := range slices.Chunk(lines, 1000) {
		zw.Write(part)
		zw.Flush()
	}
	zw.Close()
	b.Write([]byte{0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 's', 'e', 'a', 'l'})
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("records-%06d.jsonl.zst", n)), b.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("records-%06d.lean", n)), []byte("lean"), 0o644)
}

// A directory of an older Bhasha (records-N.jsonl.zst segments with their
// lean copies) reads as it did; the next writer under the lock converts
// each segment to Parquet (said to its log), removing the older files,
// and the records read the same; a segment that cannot be converted is
// left as it was.
func TestOldSegmentsConvert(t *testing.T) {
	rs := segmentsDir(t)
	plain := t.TempDir()
	writeRecs(t, plain, 0, 0, rs)
	b, err := os.ReadFile(filepath.Join(plain, FileName))
	if err != nil {
		t.Fatal(err)
	}
	ls := bytes.SplitAfter(b, []byte("\n"))
	dir := t.TempDir()
	oldSegment(t, dir, 1, bytes.Join(ls[:1500], nil))
	oldSegment(t, dir, 2, bytes.Join(ls[1500:3000], nil))
	os.WriteFile(filepath.Join(dir, FileName), bytes.Join(ls[3000:], nil), 0o644)
	broken := t.TempDir()
	oldSegment(t, broken, 1, bytes.Join(ls[:10], nil))
	seg1 := filepath.Join(broken, "records-000001.jsonl.zst")
	zb, _ := os.ReadFile(seg1)
	os.WriteFile(seg1, zb[:len(zb)/2], 0o644)

	want := runUnique(t, plain, StreamOptions{})
	for _, stage := range []string{"before", "after"} {
		got := runUnique(t, dir, StreamOptions{})
		if len(got.recs) != len(want.recs) || !reflect.DeepEqual(got.recs, want.recs) || got.d.Records != want.d.Records || len(got.d.Edited) != 0 {
			t.Fatalf("%s: %d records (want %d), %+v", stage, len(got.recs), len(want.recs), got.d)
		}
		var all bytes.Buffer
		if err := Read(dir, func(r *engine.Record) error { fmt.Fprintln(&all, r.Key, len(r.Request)); return nil }); err != nil {
			t.Fatal(err)
		}
		if stage == "after" {
			break
		}
		var said []string
		lk, err := LockDir(dir, Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		w, err := CreateWith(dir, Options{Lock: lk, Log: func(s string) { said = append(said, s) }})
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		lk.Unlock()
		if got := names(t, dir); !reflect.DeepEqual(got, []string{SegmentName(1), SegmentName(2), FileName}) {
			t.Errorf("files %v", got)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.lean")); len(left) != 0 || len(said) != 2 || !strings.Contains(said[0], "records-000001.jsonl.zst converted to "+SegmentName(1)) {
			t.Errorf("lean copies left %v, log %q", left, said)
		}
	}
	// A segment that cannot be converted stays.
	lk, err := LockDir(broken, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	if _, err := Seal(lk, broken, 0, func(s string) { said = append(said, s) }); err != nil {
		t.Fatal(err)
	}
	lk.Unlock()
	if after, _ := os.ReadFile(seg1); !bytes.Equal(after, zb[:len(zb)/2]) || len(said) != 1 || !strings.Contains(said[0], "stays as it is") {
		t.Errorf("a failed conversion: log %q, file changed %v", said, !bytes.Equal(after, zb[:len(zb)/2]))
	}
	if tmp, _ := filepath.Glob(filepath.Join(broken, ".records*")); len(tmp) != 0 {
		t.Errorf("left %v", tmp)
	}
	_ = io.Discard
}

// A row built from a record is the row of its line, for records whose
// line gives them back and for those whose line does not.
func TestRowOfRecordIsRowOfItsLine(t *testing.T) {
	full := fullRecord(t)
	noRaw := full
	noRaw.Logprobs, noRaw.PromptLogprobs, noRaw.ToolCalls = nil, nil, nil
	bad := func(edit func(*engine.Record)) engine.Record { r := noRaw; edit(&r); return r }
	cases := map[string]engine.Record{
		"every field":              full,
		"no raw members":           noRaw,
		"an empty record":          {Key: "k"},
		"a translation":            {Key: "k", Fields: engine.Key{Role: engine.Translation()}},
		"a request":                *segRec(7, engine.StatusOK),
		"line separators":          bad(func(r *engine.Record) { r.Response = "a\u2028b\u2029c\x00" }),
		"invalid UTF-8 in a text":  bad(func(r *engine.Record) { r.Response = "a\xffb" }),
		"invalid UTF-8 in the key": bad(func(r *engine.Record) { r.Fields.Item = "\xc3" }),
		"invalid UTF-8 extracted":  bad(func(r *engine.Record) { r.Extracted = &extract.Result{Value: "\xff"} }),
		"invalid UTF-8 identity":   bad(func(r *engine.Record) { r.Identity = &engine.Identity{ID: "\xff"} }),
		"spaced logprobs":          bad(func(r *engine.Record) { r.Logprobs = json.RawMessage(`{ "a" : [1, 2] }`) }),
	}
	e := newLineEncoder()
	for name, r := range cases {
		w := newWriter(nopCloser{}, "x")
		if _, err := w.encode(&r); err != nil {
			t.Fatal(err)
		}
		line := bytes.TrimSuffix(w.buf.Bytes(), []byte("\n"))
		seal := string(line[len(line)-2-64 : len(line)-2])
		want, err := e.rowOf(bytes.Clone(line))
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.rowOfRecord(&r, seal)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v (%v)", name, got, want, err)
		}
	}
}

// A Writer's segment, built as its records are written, is byte for byte
// the conversion of its lines.
func TestShadowSegmentIsTheConversion(t *testing.T) {
	rs := recs(300)
	rs[5].Response = "a\xffb" // a line that does not give its record back
	a, b := t.TempDir(), t.TempDir()
	writeRecs(t, a, 16<<10, 1, rs)
	lk, err := LockDir(b, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	w, err := CreateWith(b, Options{Lock: lk, SealBytes: 16 << 10, CloseSealBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.FlushEvery = 0
	for _, r := range rs {
		if w.sh != nil { // convert from the lines instead
			w.sh.finish(false)
			w.sh = nil
		}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if w.sh != nil {
		w.sh.finish(false)
		w.sh = nil
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lk.Unlock()
	na, nb := names(t, a), names(t, b)
	if !slices.Equal(na, nb) || len(na) < 3 {
		t.Fatalf("segments %v and %v: want the same, 3 or more", na, nb)
	}
	for _, n := range na {
		if !bytes.Equal(must(os.ReadFile(filepath.Join(a, n))), must(os.ReadFile(filepath.Join(b, n)))) {
			t.Errorf("%s differs from the conversion of its lines", n)
		}
	}
	if content(t, a) != content(t, b) {
		t.Error("the records differ")
	}

	// A seal with a shadow of the file does not read the file.
	c := t.TempDir()
	plain := recordFile{path: filepath.Join(c, "records-000001.jsonl"), seg: 1, kind: kindPlain}
	if err := os.WriteFile(plain.path, []byte("not a record\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := newShadow(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, r := range rs {
		w := newWriter(nopCloser{}, "x")
		if _, err := w.encode(r); err != nil {
			t.Fatal(err)
		}
		want.Write(w.buf.Bytes())
		b := w.buf.Bytes()
		sh.recs = append(sh.recs, shadowRec{rec: *r, seal: string(b[len(b)-3-64 : len(b)-3])})
	}
	sh.handOver()
	if err := toParquet(plain, sh); err != nil {
		t.Fatal(err)
	}
	if got := content(t, c); got != want.String() || !slices.Equal(names(t, c), []string{SegmentName(1)}) {
		t.Errorf("the shadowed seal gives %d bytes in %v, want %d in %s", len(got), names(t, c), want.Len(), SegmentName(1))
	}
}
