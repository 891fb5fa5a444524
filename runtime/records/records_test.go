package records

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

func line(key, status string) string {
	return `{"key":"` + key + `","status":"` + status + `","response":"x"}` + "\n"
}

func TestPrepare(t *testing.T) {
	cases := []struct {
		name                  string
		content               string
		kept, failed, dup     int
		torn                  bool
		wantErr               string
		wantKeys, wantMissing []string
	}{
		{name: "empty", content: ""},
		{name: "clean", content: line("a", "ok") + line("b", "ok"), kept: 2, wantKeys: []string{"a", "b"}},
		{name: "failed retried", content: line("a", "ok") + line("b", "failed"), kept: 1, failed: 1, wantKeys: []string{"a"}, wantMissing: []string{"b"}},
		{name: "duplicate", content: line("a", "ok") + line("a", "ok"), kept: 1, dup: 1},
		{name: "torn tail", content: line("a", "ok") + `{"key":"b","sta`, kept: 1, torn: true, wantMissing: []string{"b"}},
		{name: "complete but malformed last line", content: line("a", "ok") + "{\"key\":\"b\"\n", wantErr: "line 2"},
		{name: "bad middle line", content: line("a", "ok") + "not json\n" + line("b", "ok"), wantErr: "line 2"},
		{name: "missing status", content: `{"key":"a"}` + "\n" + line("b", "ok"), wantErr: `line 1: field "status" is missing`},
		{name: "bad status", content: line("a", "maybe") + line("b", "ok"), wantErr: `line 1: field "status": "maybe"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.content != "" {
				os.WriteFile(filepath.Join(dir, FileName), []byte(c.content), 0o644)
			}
			done, rep, err := Prepare(dir)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), FileName) {
					t.Fatalf("error %v, want one naming the file and %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Kept != c.kept || rep.DroppedFailed != c.failed || rep.DroppedDup != c.dup || rep.TornTail != c.torn {
				t.Fatalf("report %+v", rep)
			}
			for _, k := range c.wantKeys {
				if !done.Has(k) {
					t.Errorf("%s not done", k)
				}
			}
			for _, k := range c.wantMissing {
				if done.Has(k) {
					t.Errorf("%s done", k)
				}
			}
			// After Prepare the file holds exactly the kept records.
			n := 0
			if c.content != "" {
				if err := Read(dir, func(r *engine.Record) error { n++; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			if n != c.kept {
				t.Errorf("file has %d records after prepare, want %d", n, c.kept)
			}
		})
	}
}

func TestWriterAppends(t *testing.T) {
	dir := t.TempDir()
	for round := range 2 {
		w, err := Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			k := engine.Key{Experiment: "e", Model: "m", Item: string(rune('a' + 3*round + i))}
			if err := w.Write(&engine.Record{Key: k.String(), Fields: k, Status: engine.StatusOK, Response: "héllo | <b>"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	Read(dir, func(r *engine.Record) error { got = append(got, r.Fields.Item+":"+r.Response); return nil })
	if strings.Join(got, ",") != "a:héllo | <b>,b:héllo | <b>,c:héllo | <b>,d:héllo | <b>,e:héllo | <b>,f:héllo | <b>" {
		t.Fatalf("read back %q", got)
	}
	done, _, _ := Prepare(dir)
	if done.Len() != 6 {
		t.Fatalf("%d done", done.Len())
	}
}
