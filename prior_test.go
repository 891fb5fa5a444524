package bhasha_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// A two-step strategy's second stage is built from the first stage's
// answers, which the run looks up on disk instead of holding every record
// (records.LoadOK, the earlier way): the bodies it sent are those LoadOK
// gives, byte for byte, and a second run sends nothing and archives
// nothing.
func TestStageTwoBuiltAsFromLoadOK(t *testing.T) {
	dir := t.TempDir()
	sims := bhasha.SimulatedModels()
	exp := bhasha.IndicKLAR("testdata/indicklar/project_page_demo_hin_excerpt.json", bhasha.Languages("hin", "eng"), bhasha.SampleItems(6),
		bhasha.Strategies("2step-cm", "2step-en", "baseline"), bhasha.Models(sims[0], sims[1]))
	out := filepath.Join(dir, "run")
	opts := []bhasha.RunOption{bhasha.Out(out), bhasha.CacheDir(filepath.Join(dir, "cache"))}
	if _, err := bhasha.Run(context.Background(), exp, opts...); err != nil {
		t.Fatal(err)
	}
	sent := map[string]*engine.Record{}
	if err := records.Read(out, func(r *engine.Record) error { sent[r.Key] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	old, err := records.LoadOK(out)
	if err != nil {
		t.Fatal(err)
	}
	built := exp
	if err := built.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	served := map[string]string{}
	for _, m := range built.Models {
		served[m.Name] = m.ServedName
	}
	n := 0
	for r, err := range built.StreamStage(2, old.Lookup, nil) {
		if err != nil {
			t.Fatal(err)
		}
		body, err := r.Body(served[r.Key.Model])
		if err != nil {
			t.Fatal(err)
		}
		rec := sent[r.Key.String()]
		if rec == nil {
			t.Fatalf("stage 2 request %s was not sent", r.Key)
		}
		if string(rec.Request) != string(body) || rec.RequestSHA256 != engine.RequestDigest(body) {
			t.Errorf("%s: sent\n%s\nbuilt from LoadOK\n%s", r.Key, rec.Request, body)
		}
		n++
	}
	if n < 2*2*6 { // two models, two strategies, six items (hin native)
		t.Fatalf("%d stage 2 requests", n)
	}
	r, err := bhasha.Run(context.Background(), exp, opts...)
	if err != nil || r.Manifest().Counts.SentThisRun != 0 || r.Manifest().Counts.CachedThisRun != 0 || len(r.Manifest().Archived) != 0 {
		t.Fatalf("second run: %v %+v", err, r.Manifest())
	}
	if _, err := os.Stat(filepath.Join(out, records.ArchiveDir)); !os.IsNotExist(err) {
		t.Errorf("second run made %s: %v", records.ArchiveDir, err)
	}
	left, _ := filepath.Glob(filepath.Join(out, ".scratch-*"))
	if len(left) > 0 {
		t.Errorf("scratch files left: %v", left)
	}
}
