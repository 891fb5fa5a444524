package experiment_test

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// A job carries what the runtime needs of the experiment: provenance,
// models, stages, the same request stream and the study's extraction.
func TestJob(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "r.jsonl", `{"item":"1","kind":"chat","cues":["translate-first"],"messages":[{"role":"user","content":"q1"}]}
{"item":"2","kind":"completion","prompt":"p2"}
`)
	p := write(t, dir, "e.yaml", "name: e\nrequests: r.jsonl\nmodels:\n  - {name: a, served_name: A, endpoints: [http://h/v1], max_concurrency: 3}\ndecoding: {max_tokens: 7}\nengine: {max_attempts: 2}\n")
	e, err := load(p)
	if err != nil {
		t.Fatal(err)
	}
	j, err := e.Job(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	portable, _ := e.Portable()
	inputs, _ := e.InputHashes()
	if j.Name != "e" || j.Path != p || j.Hash != e.Hash || !bytes.Equal(j.Copy, portable) || !maps.Equal(j.Inputs, inputs) || j.Decoding.MaxTokens != 7 {
		t.Errorf("provenance: %+v", j)
	}
	if len(j.Models) != 1 || j.Models[0].ServedName != "A" || j.Models[0].MaxConcurrency != 3 || j.Engine.MaxAttempts != 2 || j.Stages != 1 || j.Dataset != nil {
		t.Errorf("models %+v, engine %+v, stages %d, dataset %+v", j.Models, j.Engine, j.Stages, j.Dataset)
	}
	var got, want []string
	for r, err := range j.Requests(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Key.String()+" "+strings.Join(r.Cues, ","))
	}
	for r := range e.StreamStage(1, nil, nil) {
		want = append(want, r.Key.String()+" "+strings.Join(r.Cues, ","))
	}
	if strings.Join(got, ";") != strings.Join(want, ";") || len(got) != 2 || !strings.HasSuffix(got[0], " translate-first") {
		t.Errorf("requests %q, want %q (the first with its cue)", got, want)
	}
	rec := &engine.Record{Status: engine.StatusOK, Response: "  an answer \n"}
	j.Extract(rec)
	if rec.Extracted == nil || rec.Extracted.Value != "an answer" {
		t.Errorf("extracted %+v", rec.Extracted)
	}
}
