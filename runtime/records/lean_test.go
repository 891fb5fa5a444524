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
	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// Every field of engine.Record but the request body survives the lean
// encoding: a field added to Record and not to appendLean fails here.
func TestLeanKeepsEveryField(t *testing.T) {
	full := engine.Record{Key: "e|m|1", Fields: engine.Key{Experiment: "e", Model: "m", Item: "1", Language: "hin", Form: "native", Strategy: "s", Condition: "c", Role: engine.Judge("m|x")},
		Kind: "chat", ServedModel: "sm", Status: engine.StatusOK, Error: "err", Response: "उत्तर \"q\"\n", Reasoning: "why", FinishReason: "stop",
		PromptTokens: -3, CompletionTokens: 1 << 40, LatencyMS: 1.25e-7, Attempts: 2, Endpoint: "http://x", Cached: true, CacheKey: "ck",
		Logprobs: json.RawMessage(`{"a":1}`), PromptLogprobs: json.RawMessage(`null`), Refusal: "no", ToolCalls: json.RawMessage(`[]`), EmptyResponse: true,
		RequestSHA256: "d", Identity: &engine.Identity{ID: "i", Root: "r", Revision: "v"}, Simulated: true,
		Extracted: &extract.Result{Value: "v", Method: extract.MethodJSON, Fields: map[string]string{"a": "b"}, Numbers: map[string]float64{"n": 0.1}, Fallback: "f", Note: "n"}}
	// Every exported field but Request is set (non-zero), so that a
	// field the encoding forgot comes back different.
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.IsExported() && f.Name != "Request" && v.Field(i).IsZero() {
			t.Fatalf("the test's record leaves %s zero: set it", f.Name)
		}
	}
	full.Request = json.RawMessage(`{"prompt":"p"}`)
	roles := []engine.Role{{}, engine.Translation(), engine.Choice(3), engine.Judge("m")}
	for i, r := range []engine.Record{full, {Key: "k"}, {Key: "k", Fields: engine.Key{Role: roles[1]}}, {Key: "k", Fields: engine.Key{Role: roles[2]}}} {
		b, err := appendLean([]byte("x"), &r)
		if err != nil {
			t.Fatal(err)
		}
		for _, withExtracted := range []bool{true, false} {
			l := leanReader{b: b[1:], in: new(interner)}
			var got engine.Record
			got.Response = "left over"
			if err := l.record(withExtracted, &got); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			want := r
			want.Request = nil
			if !withExtracted {
				want.Extracted = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("record %d (extracted %v):\n got %+v\nwant %+v", i, withExtracted, got, want)
			}
			if len(l.b) != 0 {
				t.Errorf("record %d: %d bytes left", i, len(l.b))
			}
		}
		for cut := 1; cut < len(b)-1; cut += 7 { // a record cut short is an error, not a panic
			l := leanReader{b: b[1 : len(b)-cut], in: new(interner)}
			var got engine.Record
			if err := l.record(true, &got); err == nil {
				t.Errorf("record %d cut by %d bytes: no error", i, cut)
			}
		}
	}
}

// leanDir is a run directory of several sealed segments (each with its
// lean copy) and a live file: duplicates, a conflict, failed records
// answered later, another experiment's record, varied fields, and with
// withConflict two ok records of one key that disagree.
func leanDir(t *testing.T, withConflict bool) string {
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
	rs = append(rs, failed, segRec(3, engine.StatusOK), other, segRec(5000, engine.StatusOK))
	if withConflict {
		rs = append(rs, conflict)
	}
	dir := t.TempDir()
	writeRecs(t, dir, 200<<10, 1, rs)
	segs, _ := filepath.Glob(filepath.Join(dir, "records-*.jsonl.zst"))
	leans, _ := filepath.Glob(filepath.Join(dir, "records-*"+leanSuffix))
	if len(segs) < 3 || len(leans) != len(segs) {
		t.Fatalf("%d segments, %d lean copies: want several, one each", len(segs), len(leans))
	}
	return dir
}

// uniqueOf is Unique's whole answer on dir, the records copied.
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

// Unique reading the lean copies gives what it gives reading the
// segments, and what ReadUnique gives; a lean copy that is damaged,
// stale or another segment's is passed over; MakeLean makes again what
// is missing.
func TestUniqueReadsLeanCopies(t *testing.T) {
	dir := leanDir(t, true)
	noLean := t.TempDir()
	copyDir(t, dir, noLean, func(name string) bool { return !strings.HasSuffix(name, leanSuffix) })
	for _, o := range []StreamOptions{{Workers: 3}, {Experiment: "e", Workers: 1}, {SkipExtracted: true, Workers: 2}} {
		want := runUnique(t, noLean, o)
		got := runUnique(t, dir, o)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v: with lean copies\n got %+v\nwant %+v", o, got.d, want.d)
		}
		rd, rdd, err := ReadUnique(dir, o.Experiment, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rd) != len(got.recs) || !reflect.DeepEqual(rdd, got.d) {
			t.Fatalf("%+v: %d records, findings %+v; ReadUnique: %d, %+v", o, len(got.recs), got.d, len(rd), rdd)
		}
		for i := range rd {
			if !o.SkipExtracted && !reflect.DeepEqual(got.recs[i], *rd[i]) {
				t.Fatalf("record %d:\n got %+v\nwant %+v", i, got.recs[i], rd[i])
			}
		}
	}

	// The lean copy is what is read: one altered (and sealed again, as
	// its writer would) changes Unique's answer, and not ReadUnique's.
	seg1 := filepath.Join(dir, SegmentName(1))
	seg, _ := os.ReadFile(seg1)
	frames := loadLean(seg1, seg)
	if frames == nil {
		t.Fatal("segment 1's lean copy is not read")
	}
	altered := alterLean(t, seg1, seg, func(r *engine.Record) { r.Response = "ALTERED " + r.Response })
	got := runUnique(t, dir, StreamOptions{})
	if !strings.HasPrefix(got.recs[0].Response, "ALTERED ") {
		t.Fatalf("the altered lean copy was not read: %q", got.recs[0].Response)
	}
	// Passed over: damaged (a byte flipped), stale (another segment's),
	// cut short, and the altered one once its segment is rewritten.
	want := runUnique(t, noLean, StreamOptions{})
	damaged := append([]byte(nil), altered...)
	damaged[len(damaged)/2] ^= 1
	lean2, _ := os.ReadFile(leanName(filepath.Join(dir, SegmentName(2))))
	for name, b := range map[string][]byte{"damaged": damaged, "another segment's": lean2, "cut short": altered[:len(altered)-1]} {
		if err := os.WriteFile(leanName(seg1), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := runUnique(t, dir, StreamOptions{}); !reflect.DeepEqual(got, want) {
			t.Errorf("a %s lean copy was read", name)
		}
	}
	// MakeLean makes the one missing and the one damaged, and only them.
	os.Remove(leanName(seg1))
	seg3 := filepath.Join(dir, SegmentName(3))
	b3 := must2(os.ReadFile(leanName(seg3)))
	b3[len(b3)-40] ^= 1
	os.WriteFile(leanName(seg3), b3, 0o644)
	lk, err := LockDir(dir, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	for _, wantMade := range []int{2, 0} {
		if made, err := MakeLean(context.Background(), lk, dir); err != nil || made != wantMade {
			t.Fatalf("MakeLean: %d made, %v; want %d", made, err, wantMade)
		}
	}
	if got := runUnique(t, dir, StreamOptions{}); !reflect.DeepEqual(got, want) {
		t.Error("after MakeLean, Unique differs")
	}
}

// A segment rewritten (a duplicate dropped by Prepare) has a lean copy of
// what it now holds, read as the segment is.
func TestRewrittenSegmentsLeanCopy(t *testing.T) {
	dir := leanDir(t, false)
	noLean := t.TempDir()
	before := runUnique(t, dir, StreamOptions{})
	if _, rep, err := Prepare(dir); err != nil || rep.DroppedFailed != 1 || rep.DroppedDup != 1 {
		t.Fatalf("Prepare: %+v, %v; want one failed and one duplicate record dropped", rep, err)
	}
	after := runUnique(t, dir, StreamOptions{})
	if after.nlines != before.nlines-2 {
		t.Fatalf("%d lines after Prepare, want %d", after.nlines, before.nlines-2)
	}
	copyDir(t, dir, noLean, func(name string) bool { return !strings.HasSuffix(name, leanSuffix) })
	for _, e := range must2(os.ReadDir(noLean)) {
		if strings.HasSuffix(e.Name(), leanSuffix) {
			os.Remove(filepath.Join(noLean, e.Name()))
		}
	}
	if plain := runUnique(t, noLean, StreamOptions{}); !reflect.DeepEqual(after, plain) {
		t.Errorf("after Prepare, with lean copies: %d records, %+v; without: %d, %+v", len(after.recs), after.d, len(plain.recs), plain.d)
	}
	for _, s := range must2(filepath.Glob(filepath.Join(dir, "records-*.jsonl.zst"))) {
		if loadLean(s, must2(os.ReadFile(s))) == nil {
			t.Errorf("%s: no lean copy to read after Prepare", filepath.Base(s))
		}
	}
}

// alterLean writes segment segPath's lean copy again, its records
// changed by edit, as its writer would (named digest, sealed).
func alterLean(t *testing.T, segPath string, seg []byte, edit func(*engine.Record)) []byte {
	t.Helper()
	want, _ := sealDigest(seg[len(seg)-segSealFrame:])
	frames := parseLean(must2(os.ReadFile(leanName(segPath))), want)
	lb, err := newLeanBuilder()
	if err != nil {
		t.Fatal(err)
	}
	defer lb.close()
	var li leanInflater
	defer li.close()
	for _, f := range frames {
		content, err := li.inflate(f.data)
		if err != nil {
			t.Fatal(err)
		}
		l := leanReader{b: content, in: new(interner)}
		for range f.records {
			var r engine.Record
			if err := l.record(true, &r); err != nil {
				t.Fatal(err)
			}
			edit(&r)
			if lb.frame, err = appendLean(lb.frame, &r); err != nil {
				t.Fatal(err)
			}
			lb.count++
		}
		lb.flush()
	}
	digest := make([]byte, 32)
	if _, err := fmt.Sscanf(string(want), "%x", &digest); err != nil {
		t.Fatal(err)
	}
	data, ok := lb.file(digest, xxhash.Sum64(seg[:len(seg)-segSealFrame]))
	if !ok {
		t.Fatal("no lean copy made")
	}
	if err := os.WriteFile(leanName(segPath), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// copyDir copies the files of src whose names keep says into dst (emptied
// first).
func copyDir(t *testing.T, src, dst string, keep func(string) bool) {
	t.Helper()
	os.RemoveAll(dst)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range must2(os.ReadDir(src)) {
		if !e.Type().IsRegular() || !keep(e.Name()) || e.Name() == LockFile {
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), must2(os.ReadFile(filepath.Join(src, e.Name()))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A segment edited after its lean copy was made (a line changed, the old
// seal kept at its end) is read as a segment, its edit named: the lean
// copy no longer names its bytes.
func TestLeanCopyOfEditedSegmentPassedOver(t *testing.T) {
	dir := leanDir(t, false)
	seg2 := filepath.Join(dir, SegmentName(2))
	comp := must2(os.ReadFile(seg2))
	dec, err := newDecoder(bytes.NewReader(comp))
	if err != nil {
		t.Fatal(err)
	}
	plain := must2(io.ReadAll(dec))
	dec.Close()
	at := bytes.Index(plain, []byte(`"response":"`))
	if at < 0 {
		t.Fatal("no response in segment 2")
	}
	edited := slices.Concat(plain[:at+12], []byte("EDITED "), plain[at+12:])
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Concat(enc.EncodeAll(edited, nil), comp[len(comp)-segSealFrame:]) // the old seal kept
	enc.Close()
	if err := os.WriteFile(seg2, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if loadLean(seg2, out) != nil {
		t.Fatal("the lean copy of the edited segment is read")
	}
	got := runUnique(t, dir, StreamOptions{})
	if len(got.d.Edited) != 1 {
		t.Fatalf("edited lines %+v, want the one edited", got.d.Edited)
	}
}

// A lean copy with any one byte flipped (its magic, the digests that name
// its segment, its frames, its count, its own XXH64) is passed over, and
// Unique gives what it gives without it.
func TestLeanCopyFlippedByte(t *testing.T) {
	dir := leanDir(t, false)
	seg2 := filepath.Join(dir, SegmentName(2))
	seg := must2(os.ReadFile(seg2))
	lean := leanName(seg2)
	orig := must2(os.ReadFile(lean))
	if loadLean(seg2, seg) == nil {
		t.Fatal("the lean copy as written is passed over")
	}
	want := runUnique(t, dir, StreamOptions{Workers: 2})
	cases := []int{0, len(leanMagic) - 1, len(leanMagic) + 10, len(leanMagic) + 64, len(leanMagic) + 70, leanHead - 1, leanHead, len(orig) - 9, len(orig) - 1}
	for at := 0; at < len(orig); at += len(orig) / 101 {
		cases = append(cases, at)
	}
	for i, at := range cases {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			b := slices.Clone(orig)
			b[at] ^= 0x02
			if err := os.WriteFile(lean, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if loadLean(seg2, seg) != nil {
				t.Fatalf("a lean copy with byte %d of %d flipped is read", at, len(orig))
			}
			if i%10 == 0 {
				if got := runUnique(t, dir, StreamOptions{Workers: 2}); !reflect.DeepEqual(got, want) {
					t.Fatalf("Unique with byte %d of the lean copy flipped: %d records, want %d", at, len(got.recs), len(want.recs))
				}
			}
		})
	}
}
