package gridrun

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
)

// recorded is what the comparison reads of one record.
type recorded struct {
	sha, response, status, served string
	extracted                     string
	identity                      engine.Identity
	simulated                     bool
}

func readRecords(t *testing.T, dir string) map[string]recorded {
	t.Helper()
	out := map[string]recorded{}
	err := records.Read(dir, func(r *engine.Record) error {
		if _, dup := out[r.Key]; dup {
			t.Errorf("%s: key %s recorded twice", dir, r.Key)
		}
		x, _ := json.Marshal(r.Extracted)
		rec := recorded{sha: r.RequestSHA256, response: r.Response, status: r.Status, served: r.ServedModel, extracted: string(x), simulated: r.Simulated}
		if r.Identity != nil {
			rec.identity = *r.Identity
		}
		if engine.RequestDigest(r.Request) != r.RequestSHA256 {
			t.Errorf("%s: %s: request_sha256 is not the digest of its request", dir, r.Key)
		}
		out[r.Key] = rec
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriteIsARun: the grid Write writes for a small spec is the run
// `bhasha.Run` writes of the same experiment on the simulator (every
// language form, all nine strategies, both stages of the two-step ones):
// the same keys, each with the same request_sha256, response, status,
// extraction and identity, the same manifest counts, inputs, templates,
// decodings and dataset, and it opens with bhasha.Open to the same number
// of scored answers and the same accuracy table.
func TestWriteIsARun(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Facts: 4, Relations: 1, Models: 2} // four facts of one relation: each has three demonstrations
	l := Layout{Root: t.TempDir()}
	sum, err := Write(ctx, l, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := spec.Facts * spec.Models * PerFact; sum.Records != want || sum.OK != want || sum.Withheld != 0 {
		t.Fatalf("wrote %+v, want %d ok records", sum, want)
	}
	if want := spec.Facts * spec.Models * (PerFact - 54); sum.Answers != want {
		t.Errorf("%d answers, want %d", sum.Answers, want)
	}
	var respBytes int64
	records.Read(l.Run(), func(r *engine.Record) error { respBytes += int64(len(r.Response)); return nil })
	if respBytes != sum.ResponseBytes || respBytes == 0 {
		t.Errorf("the records hold %d bytes of responses, Write counted %d", respBytes, sum.ResponseBytes)
	}

	exp, err := bhasha.Load(ctx, l.Experiment())
	if err != nil {
		t.Fatal(err)
	}
	realDir := filepath.Join(t.TempDir(), "run")
	if _, err := bhasha.Run(ctx, exp, bhasha.Out(realDir), bhasha.NoCache(), bhasha.CacheDir(t.TempDir())); err != nil {
		t.Fatal(err)
	}
	got, want := readRecords(t, l.Run()), readRecords(t, realDir)
	if len(got) != len(want) {
		t.Errorf("the grid has %d records, the real run %d", len(got), len(want))
	}
	differ := 0
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			differ++
			t.Errorf("the grid lacks %s", k)
		case g != w:
			differ++
			t.Errorf("%s:\n grid %+v\n run  %+v", k, g, w)
		}
		if differ == 5 {
			t.Fatal("and maybe more")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Fatalf("the grid has %s, which the real run does not", k)
		}
	}

	gm, err := run.ReadManifest(l.Run())
	if err != nil {
		t.Fatal(err)
	}
	wm, err := run.ReadManifest(realDir)
	if err != nil {
		t.Fatal(err)
	}
	if gm.Status != "complete" || !gm.Simulated || gm.Counts.Records != wm.Counts.Records || gm.Counts.OK != wm.Counts.OK || gm.Requests != wm.Requests {
		t.Errorf("manifest: status %s simulated %t counts %+v requests %d; the real run's: counts %+v requests %d", gm.Status, gm.Simulated, gm.Counts, gm.Requests, wm.Counts, wm.Requests)
	}
	if !maps.Equal(gm.Inputs, wm.Inputs) || !maps.Equal(gm.Templates, wm.Templates) || gm.CopyHash != wm.CopyHash || gm.ExperimentHash != wm.ExperimentHash {
		t.Errorf("manifest provenance differs from the real run's")
	}
	gj, _ := json.Marshal(gm.Decodings)
	wj, _ := json.Marshal(wm.Decodings)
	if string(gj) != string(wj) {
		t.Errorf("decodings:\n grid %s\n run  %s", gj, wj)
	}
	gd, _ := json.Marshal(gm.Dataset)
	wd, _ := json.Marshal(wm.Dataset)
	if string(gd) != string(wd) {
		t.Errorf("dataset:\n grid %s\n run  %s", gd, wd)
	}
	copyGot, _ := os.ReadFile(filepath.Join(l.Run(), run.ExperimentFile))
	copyWant, _ := os.ReadFile(filepath.Join(realDir, run.ExperimentFile))
	if string(copyGot) != string(copyWant) {
		t.Errorf("the run's copy of the experiment differs")
	}

	acc := func(dir string) (int, string) {
		r, err := bhasha.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		n, err := r.Scored()
		if err != nil {
			t.Fatal(err)
		}
		tb, err := r.Table("accuracy")
		if err != nil {
			t.Fatal(err)
		}
		var csv bytes.Buffer
		if err := tb.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		if len(tb.Rows) == 0 {
			t.Errorf("%s: the accuracy table is empty", dir)
		}
		return n, csv.String()
	}
	gn, grows := acc(l.Run())
	wn, wrows := acc(realDir)
	if gn != sum.Answers || gn != wn {
		t.Errorf("bhasha.Open scores %d answers of the grid (written %d), %d of the real run", gn, sum.Answers, wn)
	}
	if grows != wrows {
		t.Errorf("accuracy tables differ:\n%s\n%s", grows, wrows)
	}
}

// TestWriteRefusesARunDirectory: Write never writes into a run directory
// that exists.
func TestWriteRefusesARunDirectory(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	os.MkdirAll(l.Run(), 0o755)
	os.WriteFile(filepath.Join(l.Run(), records.FileName), []byte("x\n"), 0o644)
	if _, err := Write(context.Background(), l, Spec{Facts: 2, Relations: 1, Models: 1}, nil); err == nil {
		t.Fatal("Write wrote into an existing run directory")
	}
	if b, _ := os.ReadFile(filepath.Join(l.Run(), records.FileName)); string(b) != "x\n" {
		t.Errorf("the existing records changed: %q", b)
	}
}

// TestFactsFor: the facts for a record count come nearest to it.
func TestFactsFor(t *testing.T) {
	for _, c := range []struct{ records, models, want int }{
		{6364170, 9, 2946}, {640000, 9, 296}, {1, 9, 1}, {240, 1, 1}, {359, 1, 1}, {361, 1, 2},
	} {
		if got := FactsFor(c.records, c.models); got != c.want {
			t.Errorf("FactsFor(%d, %d) = %d, want %d", c.records, c.models, got, c.want)
		}
	}
}
