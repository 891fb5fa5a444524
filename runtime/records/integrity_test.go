package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// fullFile accepts room bytes, then fails as a full disk does: a short
// write, then ENOSPC.
type fullFile struct {
	bytes.Buffer
	room int
}

func (f *fullFile) Write(b []byte) (int, error) {
	n := min(len(b), f.room)
	f.room -= n
	f.Buffer.Write(b[:n])
	if n < len(b) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

func (f *fullFile) Close() error { return nil }

func rec(i int, status string) *engine.Record {
	return &engine.Record{Key: fmt.Sprintf("e|m|%d|||||", i), Status: status, Response: strings.Repeat("x", 50+i%7)}
}

// On a full disk the writer counts exactly the records whole in the file:
// neither those handed to it nor the torn one.
func TestWriterCountsWhatReachedTheFile(t *testing.T) {
	for _, room := range []int{0, 1, 500, 4096, 20000, 1 << 20} {
		t.Run(fmt.Sprint(room), func(t *testing.T) {
			f := &fullFile{room: room}
			w := newWriter(f, "records.jsonl")
			w.FlushEvery = 0 // flush every record, as a slow run does
			var werr error
			for i := range 160 {
				status := engine.StatusOK
				if i%10 == 3 {
					status = engine.StatusFailed
				}
				if werr = w.Write(rec(i, status)); werr != nil {
					break
				}
			}
			cerr := w.Close()
			whole := bytes.Count(f.Bytes(), []byte("\n"))
			got := w.Written()
			if got.Records != whole || got.OK+got.Failed != whole {
				t.Errorf("written %+v, %d whole lines in the file", got, whole)
			}
			wantErr := room < 1<<20 // 160 records take about 60 KB
			if gotErr := werr != nil || cerr != nil; gotErr != wantErr {
				t.Errorf("errors %v %v (want an error: %v)", werr, cerr, wantErr)
			}
			if werr != nil && !errors.Is(werr, syscall.ENOSPC) {
				t.Errorf("error %v does not say the disk is full", werr)
			}
			// Later writes fail the same way.
			if werr != nil {
				if err := w.Write(rec(999, engine.StatusOK)); err == nil {
					t.Error("a write after ENOSPC succeeded")
				}
			}
		})
	}
}

// Records are never split across write(2) calls: two writers appending
// large records to one file concurrently leave only whole lines (the old
// 256 KiB buffered writer spliced records mid-line).
func TestRecordsAreWrittenWhole(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	big := strings.Repeat("अ", 40<<10) // 120 KB per record
	for g := range 2 {
		w, err := Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				if err := w.Write(&engine.Record{Key: fmt.Sprintf("w%d|%d", g, i), Status: engine.StatusOK, Response: big}); err != nil {
					t.Error(err)
					return
				}
			}
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	if err := Read(dir, func(r *engine.Record) error {
		n++
		if r.Response != big {
			return fmt.Errorf("%s: response spliced", r.Key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 120 {
		t.Errorf("%d records, want 120", n)
	}
}

func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	lk, err := LockDir(dir, Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Mode{Exclusive, Shared} {
		_, err := LockDir(dir, m)
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
			t.Errorf("mode %d while held: %v", m, err)
		}
	}
	lk.Unlock()
	s1, err := LockDir(dir, Shared)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := LockDir(dir, Shared)
	if err != nil {
		t.Fatalf("two readers: %v", err)
	}
	if _, err := LockDir(dir, Exclusive); err == nil {
		t.Error("exclusive beside readers")
	}
	s1.Unlock()
	s2.Unlock()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Error(err)
	}
}

func TestReadUnique(t *testing.T) {
	dir := t.TempDir()
	content := line("a", "failed") + line("b", "ok") + line("a", "ok") + line("b", "ok") + line("c", "ok")
	os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644)
	recs, d, err := ReadUnique(dir, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Key != "a" || recs[0].Status != engine.StatusOK || d.Records != 2 || len(d.Keys) != 2 {
		t.Errorf("%d records, first %+v, duplicates %+v", len(recs), recs[0], d)
	}
	if !strings.Contains(d.String(), "2 duplicate record(s)") {
		t.Errorf("%q", d.String())
	}
}

// realRec is record i as a run writes it: a request body as the engine
// marshals it (Hindi, HTML characters, a float), a server's logprobs in
// Python's number format, a latency with a fraction.
func realRec(t *testing.T, i int) *engine.Record {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": "m", "temperature": 0.7, "messages": []map[string]string{
		{"role": "user", "content": fmt.Sprintf("प्रश्न %d: <b>\"राजधानी\"</b> & café\n", i)}}})
	if err != nil {
		t.Fatal(err)
	}
	return &engine.Record{Key: fmt.Sprintf("e|m|%d|||||", i), Status: engine.StatusOK, Response: fmt.Sprintf("उत्तर %d <ok> \"é\"\t", i),
		PromptTokens: 12 + i, LatencyMS: float64(i)/3 + 0.25, Logprobs: json.RawMessage(`{"content": [{"token": "उ", "logprob": -1.2e-05}]}`),
		Request: body, RequestSHA256: engine.RequestDigest(body), Identity: &engine.Identity{ID: "m", Root: "org/m"}}
}

// roundTrip re-serialises lines with Python's json module, as a pandas or
// jq round trip does: every line when which is "all", else line which
// (0-based); line edit (-1: none) gets another answer, and with unseal
// every rewritten line loses its record_sha256.
const roundTrip = `import json, sys
which, edit, unseal = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
for i, line in enumerate(sys.stdin):
    if which == "all" or i == int(which):
        r = json.loads(line)
        if i == edit:
            r["response"] = "the gold answer"
        if unseal:
            r.pop("record_sha256")
        line = json.dumps(r) + "\n"
    sys.stdout.write(line)
`

func pythonRoundTrip(t *testing.T, lines []byte, which string, edit int, unseal bool) []byte {
	t.Helper()
	u := "0"
	if unseal {
		u = "1"
	}
	c := exec.Command("/usr/bin/python3", "-c", roundTrip, which, fmt.Sprint(edit), u)
	c.Stdin = bytes.NewReader(lines)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("python: %v: %s", err, stderr.String())
	}
	if bytes.Equal(out, lines) {
		t.Fatal("the round trip changed nothing")
	}
	return out
}

// flagged is what every reader of dir (ScanDir, ReadUnique, Unique) flags
// as edited, as "line: why" (they must agree), and the records
// ReadUnique keeps.
func flagged(t *testing.T, dir string) ([]string, []*engine.Record) {
	t.Helper()
	s, err := ScanDir(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	recs, d, err := ReadUnique(dir, "", true)
	if err != nil {
		t.Fatal(err)
	}
	_, _, du, _, err := Unique(context.Background(), dir, StreamOptions{}, func(int, *engine.Record) (int, error) { return 0, nil })
	if err != nil {
		t.Fatal(err)
	}
	str := func(fs []Flag) []string {
		var out []string
		for _, f := range fs {
			out = append(out, fmt.Sprintf("%s: %s", f.At, f.Why))
		}
		return out
	}
	got := str(s.Edited)
	if !slices.Equal(got, str(d.Edited)) || !slices.Equal(got, str(du.Edited)) {
		t.Errorf("readers disagree:\nScanDir    %q\nReadUnique %q\nUnique     %q", got, str(d.Edited), str(du.Edited))
	}
	return got, recs
}

// A records file re-serialised by another tool (Python's json.dumps: a
// space after every colon, non-ASCII as \u escapes) is checked over its
// canonical form: an edited answer is flagged as an edited sealed line
// is, whether only its line or every line was rewritten, in records.jsonl
// or in a sealed segment; a round trip that edits nothing reads as the
// records written. A line whose seal was removed is flagged wherever it
// is when the manifest says the run's records were sealed, and accepted
// as an older Bhasha's without that.
func TestReformattedRecords(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 to re-serialise the records with")
	}
	const n = 6
	const edited = "edited after it was written (its record_sha256 does not match the line)"
	cases := []struct {
		name      string
		segment   bool   // the records sealed into segments; the first segment is round-tripped
		which     string // the lines rewritten: "all" or one (0-based)
		edit      int    // the line whose answer is changed (-1: none)
		unseal    bool
		manifest  string // manifest.json ("": none)
		want      []string
		wantKept  int
		wantFirst string // the first kept response ("": the written one)
	}{
		{name: "first line rewritten and edited", which: "0", edit: 0,
			want: []string{"line 1: " + edited}, wantKept: n - 1},
		{name: "first line rewritten and edited, run sealed", which: "0", edit: 0, manifest: `{"records_sealed": true}`,
			want: []string{"line 1: " + edited}, wantKept: n - 1},
		{name: "every line rewritten, one edited", which: "all", edit: 3,
			want: []string{"line 4: " + edited}, wantKept: n - 1},
		{name: "every line rewritten, none edited", which: "all", edit: -1, wantKept: n},
		{name: "every line rewritten, the first edited, run sealed", which: "all", edit: 0, manifest: `{"tool":"bhasha","records_sealed":true}`,
			want: []string{"line 1: " + edited}, wantKept: n - 1},
		{name: "every seal removed, one edited, run sealed", which: "all", edit: 2, unseal: true, manifest: `{"records_sealed": true}`,
			want: func() []string {
				var out []string
				for i := range n {
					out = append(out, fmt.Sprintf("line %d: %s", i+1, editedWhy(unsealed, true, 0)))
				}
				return out
			}(), wantKept: 0},
		{name: "every seal removed, one edited, older manifest", which: "all", edit: 2, unseal: true, manifest: `{"tool":"bhasha"}`,
			wantKept: n, wantFirst: "the gold answer"},
		{name: "segment rewritten, one edited", segment: true, which: "all", edit: 1, manifest: `{"records_sealed": true}`,
			want: []string{SegmentName(1) + " line 2: " + edited}},
		{name: "segment rewritten, none edited", segment: true, which: "all", edit: -1, manifest: `{"records_sealed": true}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var rs []*engine.Record
			count := n
			if c.segment {
				count = 40
			}
			for i := range count {
				rs = append(rs, realRec(t, i))
			}
			if c.segment {
				writeRecs(t, dir, 4<<10, -1, rs)
				if ns := names(t, dir); len(ns) < 2 || ns[0] != SegmentName(1) {
					t.Fatalf("files %v", ns)
				}
				editSegment(t, dir, 1, func(ls []string) []string {
					out := pythonRoundTrip(t, []byte(strings.Join(ls, "")), c.which, c.edit, c.unseal)
					return strings.SplitAfter(strings.TrimSuffix(string(out), "\n")+"\n", "\n")[:len(ls)]
				})
			} else {
				writeRecs(t, dir, 0, 0, rs)
				p := filepath.Join(dir, FileName)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, pythonRoundTrip(t, b, c.which, c.edit, c.unseal), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.manifest != "" {
				if err := os.WriteFile(filepath.Join(dir, manifestFile), []byte(c.manifest), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, resp := flagged(t, dir)
			if !slices.Equal(got, c.want) {
				t.Errorf("flagged\n%q\nwant\n%q", got, c.want)
			}
			if c.segment {
				c.wantKept = count - len(c.want)
			}
			if len(resp) != c.wantKept {
				t.Errorf("%d records kept, want %d", len(resp), c.wantKept)
			}
			if c.wantFirst != "" && !slices.ContainsFunc(resp, func(r *engine.Record) bool { return r.Response == c.wantFirst }) {
				t.Errorf("no record answers %q", c.wantFirst)
			}
			written := map[string]*engine.Record{}
			for _, r := range rs {
				written[r.Key] = r
			}
			for _, r := range resp {
				w := written[r.Key]
				if r.Response == "the gold answer" && c.wantFirst == "" {
					t.Errorf("%s: the edited answer is kept", r.Key)
				} else if r.Response != w.Response && r.Response != c.wantFirst || r.PromptTokens != w.PromptTokens || r.LatencyMS != w.LatencyMS || r.RequestSHA256 != w.RequestSHA256 {
					t.Errorf("%s: read %+v, written %+v", r.Key, r, w)
				}
			}
		})
	}
}

// A manifest that is not JSON is an error naming it, not a run read as
// unsealed.
func TestRunSealedManifestErrors(t *testing.T) {
	for _, m := range []string{`{`, `{"records_sealed": "yes"}`} {
		dir := t.TempDir()
		writeRecs(t, dir, 0, 0, []*engine.Record{realRec(t, 1)})
		os.WriteFile(filepath.Join(dir, manifestFile), []byte(m), 0o644)
		if _, err := ScanDir(dir, ""); err == nil || !strings.Contains(err.Error(), manifestFile) {
			t.Errorf("%s: ScanDir: %v", m, err)
		}
		if _, _, err := ReadUnique(dir, "", false); err == nil || !strings.Contains(err.Error(), manifestFile) {
			t.Errorf("%s: ReadUnique: %v", m, err)
		}
	}
}
