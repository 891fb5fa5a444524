package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// Unique keeps, for every key, the record ReadUnique keeps, in the same
// order, and says the same of what it left out: duplicates, a failed
// record replaced by an ok one, disagreeing records, edited lines and
// another experiment's records, with the request bodies dropped or kept.
func TestUniqueMatchesReadUnique(t *testing.T) {
	ok := func(key, resp string) *engine.Record {
		return &engine.Record{Key: key, Status: engine.StatusOK, Response: resp + " \"रोम\"\n\t\u00e9",
			Fields: engine.Key{Experiment: "e", Model: "m", Item: key, Language: "hin", Form: "native", Strategy: "s", Condition: "c|d", Role: engine.Judge("m")},
			Kind:   "chat", ServedModel: "sm", FinishReason: "stop", PromptTokens: 12, CompletionTokens: 3, LatencyMS: 1.25e-3, Attempts: 2,
			Cached: true, CacheKey: "ck", RequestSHA256: "d", Identity: &engine.Identity{ID: "i", Root: "r"}, Simulated: true, Reasoning: "why",
			Extracted: &extract.Result{Value: "v", Method: extract.MethodJSON, Fields: map[string]string{"a": "b"}, Numbers: map[string]float64{"Overall": 4}, Fallback: "f"},
			Request:   []byte(`{"prompt":"asks \"request\": {\"request\":1}","request":[1,{"a":"}"}]}`),
			Logprobs:  []byte(`{"top_logprobs":[{"request":-0.5}]}`)}
	}
	failed := func(key string) *engine.Record {
		return &engine.Record{Key: key, Status: engine.StatusFailed, Error: "boom"}
	}
	var recs []*engine.Record
	for i := range 3000 { // more than one batch of lines
		recs = append(recs, ok(fmt.Sprintf("e|m|%d", i), fmt.Sprintf("answer %d", i)))
	}
	recs = append(recs, failed("e|m|f"), ok("e|m|3", "answer 3"), ok("e|m|f", "late"), ok("e|m|4", "another"), ok("e|m|4", "a third"),
		ok("other|m|1", "x"), failed("e|m|g"), ok("e|m|5", "answer 5"), ok("e|m|6", "other"))
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// One line edited by hand (its seal no longer matches), one appended unsealed.
	p := filepath.Join(dir, FileName)
	b, _ := os.ReadFile(p)
	b = []byte(strings.Replace(string(b), `"response":"answer 7"`, `"response":"answer 77"`, 1))
	b = append(b, []byte(`{"key":"e|m|h","status":"ok","response":"planted"}`+"\n")...)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The same records sealed into a segment, and records after it in a
	// new records.jsonl: a conflict across the two files, a failed record
	// answered in the live file.
	sealed := t.TempDir()
	if err := os.WriteFile(filepath.Join(sealed, FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	lk, err := LockDir(sealed, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if seg, err := Seal(lk, sealed, 0, nil); err != nil || seg != SegmentName(1) {
		t.Fatalf("sealing: %q, %v", seg, err)
	}
	lk.Unlock()
	w, err = Create(sealed)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*engine.Record{ok("e|m|5", "answer 5 again"), ok("e|m|g", "late g"), ok("e|m|7000", "new")} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir   string
		lines int
	}{{dir, len(recs) + 1}, {sealed, len(recs) + 4}} {
		dir := c.dir
		for _, withRequests := range []bool{false, true} {
			for _, exp := range []string{"", "e"} {
				t.Run(fmt.Sprintf("%s,requests=%v,experiment=%q", filepath.Base(dir), withRequests, exp), func(t *testing.T) {
					want, wd, err := ReadUnique(dir, exp, withRequests)
					if err != nil {
						t.Fatal(err)
					}
					got, lines, gd, n, err := Unique(context.Background(), dir, StreamOptions{Experiment: exp, WithRequests: withRequests, Workers: 3},
						func(line int, r *engine.Record) (*engine.Record, error) {
							c := *r
							c.Error += fmt.Sprint(line)
							return &c, nil
						})
					if err != nil {
						t.Fatal(err)
					}
					if n != c.lines {
						t.Errorf("%d lines, want %d", n, c.lines)
					}
					if len(got) != len(want) {
						t.Fatalf("%d records, want %d", len(got), len(want))
					}
					for i := range want {
						if !strings.HasSuffix(got[i].Error, fmt.Sprint(lines[i])) {
							t.Fatalf("record %d: made from line %s, said to be %d", i, got[i].Error, lines[i])
						}
						got[i].Error = strings.TrimSuffix(got[i].Error, fmt.Sprint(lines[i]))
						if !reflect.DeepEqual(got[i], want[i]) {
							t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
						}
					}
					if !reflect.DeepEqual(gd, wd) {
						t.Errorf("findings:\n got %+v\nwant %+v", gd, wd)
					}
				})
			}
		}
	}
}

func TestUniqueStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, `{"key":"e|m|%d","status":"ok","response":"%s"}`+"\n", i, strings.Repeat("x", 100))
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte(b.String()), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, _, _, _, err := Unique(ctx, dir, StreamOptions{Progress: func(read, total int64) {
		calls++
		if read <= 0 || read > total {
			t.Errorf("progress %d of %d", read, total)
		}
		cancel()
	}}, func(int, *engine.Record) (int, error) { return 0, nil })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("%v after %d progress calls", err, calls)
	}
}

func TestUniqueNamesABadLine(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte(line("a", "ok")+`{"key":"b","status":`+"\n"+line("c", "ok")), 0o644)
	_, _, _, _, err := Unique(context.Background(), dir, StreamOptions{}, func(int, *engine.Record) (int, error) { return 0, nil })
	if err == nil || !strings.Contains(err.Error(), "records.jsonl line 2") {
		t.Errorf("%v", err)
	}
}

// uniq tells keys apart by their two hashes: keys whose first hashes
// collide (every key here, with a colliding hash) are told apart by the
// second, and give what the seeded hashes give: duplicates, a failed
// record answered later, a conflict, another experiment's record.
func TestUniqFirstHashCollisions(t *testing.T) {
	f := &recordFile{path: filepath.Join(t.TempDir(), FileName), name: FileName}
	var lines []lineResult[int]
	var file strings.Builder
	for i := range 500 {
		k := fmt.Sprintf("e|m|%d", i%170) // a key met up to three times
		ok := i%170 != 3 || i > 340       // key 3: failed twice, then ok
		resp := uint64(7)
		if i == 180 || i == 350 { // key 10: its ok records disagree
			resp = uint64(i)
		}
		lines = append(lines, lineResult[int]{line: i + 1, file: f, local: i + 1, key: k, ok: ok, seal: sealOK, exp: "e", response: resp, v: i})
		fmt.Fprintf(&file, `{"key":%q,"response":"r%d"}`+"\n", k, resp)
	}
	lines = append(lines, lineResult[int]{line: 501, file: f, local: 501, key: "x|m|1", ok: true, seal: sealOK, exp: "x", v: 501})
	file.WriteString(`{"key":"x|m|1"}` + "\n")
	if err := os.WriteFile(f.path, []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(hash func(string) [2]uint64) ([]int, []int32, Findings) {
		u := &uniq[int]{experiment: "e", at: map[[2]uint64]int32{}}
		for i := range lines {
			r := lines[i]
			r.h = hash(r.key)
			u.add(&r)
		}
		out, kept, d, err := u.finish(streamed{files: []recordFile{*f}, starts: []int{0}, lines: len(lines)})
		if err != nil {
			t.Fatal(err)
		}
		return out, kept, d
	}
	seed, seed2 := maphash.MakeSeed(), maphash.MakeSeed()
	wo, wk, wd := run(func(k string) [2]uint64 { return [2]uint64{maphash.String(seed, k), maphash.String(seed2, k)} })
	go_, gk, gd := run(func(k string) [2]uint64 { return [2]uint64{42, maphash.String(seed, k)} })
	if !reflect.DeepEqual(go_, wo) || !reflect.DeepEqual(gk, wk) || !reflect.DeepEqual(gd, wd) {
		t.Fatalf("colliding first hashes:\n got %v %v %+v\nwant %v %v %+v", go_, gk, gd, wo, wk, wd)
	}
	if len(wo) != 169 || wo[3] != 343 || wd.Records != 328 || len(wd.Conflicts) != 1 || !reflect.DeepEqual(wd.Conflicts[0].Lines, []int{11, 181, 351}) ||
		!reflect.DeepEqual(wd.Conflicts[0].Responses, []string{"r7", "r180", "r350"}) || len(wd.Foreign) != 1 ||
		!reflect.DeepEqual(wd.Keys, []string{"e|m|0", "e|m|1", "e|m|2", "e|m|3", "e|m|4"}) {
		t.Fatalf("%d kept, key 3's value %d, %d duplicates, conflicts %+v, foreign %v, keys %v", len(wo), wo[3], wd.Records, wd.Conflicts, wd.Foreign, wd.Keys)
	}
}

// Unique keeps what ReadUnique keeps on a run of random duplicates:
// failed records answered later, ok records that agree and that
// disagree, across Parquet segments and the live file, each segment read
// by its projected columns and (its digest removed) as lines.
func TestUniqueRandomDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 20))
	var rs []*engine.Record
	for range 3000 {
		k := rng.IntN(700)
		r := segRec(k, engine.StatusOK)
		if rng.IntN(4) == 0 {
			r.Status, r.Response, r.Error = engine.StatusFailed, "", "boom"
		} else if rng.IntN(40) == 0 {
			r.Response = "another answer"
		}
		rs = append(rs, r)
	}
	dir := t.TempDir()
	writeRecs(t, dir, 150<<10, 1<<30, rs) // segments, and a live file left
	for _, lean := range []bool{true, false} {
		if !lean {
			for _, p := range must2(filepath.Glob(filepath.Join(dir, "*"+segExt))) {
				b, _ := os.ReadFile(p)
				i := bytes.LastIndex(b, []byte(`"sealed":true`))
				copy(b[i:], `"sealed":fals`) // a digest that does not parse
				os.WriteFile(p, b, 0o644)
			}
		}
		want, wd, err := ReadUnique(dir, "", false)
		if err != nil {
			t.Fatal(err)
		}
		got := runUnique(t, dir, StreamOptions{Workers: 2})
		if len(wd.Conflicts) == 0 || wd.Records == 0 {
			t.Fatalf("the run has %d conflicts, %d duplicates: want some of each", len(wd.Conflicts), wd.Records)
		}
		if !reflect.DeepEqual(got.d, wd) || len(got.recs) != len(want) {
			t.Fatalf("lean %v: %d records, findings %+v\nReadUnique: %d, %+v", lean, len(got.recs), got.d, len(want), wd)
		}
		for i := range want {
			if !reflect.DeepEqual(got.recs[i], *want[i]) {
				t.Fatalf("lean %v, record %d:\n got %+v\nwant %+v", lean, i, got.recs[i], *want[i])
			}
		}
	}
}
