package bhasha_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// The distractor study from Go against the simulator: progress reaches
// the total, samples carry prompt, response and verdicts, tables list
// what they mirror, and a bad experiment fails before anything runs.
func TestDistractorsFromGo(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var last []bhasha.Progress
	exp := bhasha.Distractors("testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(5))
	var log strings.Builder
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")),
		bhasha.Log(&log), bhasha.OnProgress(func(p bhasha.Progress) { mu.Lock(); last = append(last, p); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(log.String(), "SIMULATED (no endpoint given)") || !r.Simulated() {
		t.Errorf("not labelled simulated: %q", log.String())
	}
	if len(last) == 0 || !last[len(last)-1].Final || last[0].Stage != 1 {
		t.Fatalf("progress %+v", last)
	}
	for _, p := range last {
		if p.Final && p.Stage == 1 && (p.Done != p.Total || p.Total != 3*5*2) {
			t.Errorf("stage 1 ended at %+v", p)
		}
	}
	samples, err := r.Samples()
	if err != nil || len(samples) != 3*5*2 {
		t.Fatalf("%d samples, %v", len(samples), err)
	}
	for _, s := range samples {
		if s.Prompt == "" || !strings.Contains(s.Prompt, "user: ") || s.Response == "" || !s.Simulated || s.Method != "text" {
			t.Errorf("sample %+v", s)
		}
	}
	infos, err := r.Tables()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, in := range infos {
		names[in.Name] = true
	}
	if !names["script_decomposition"] || !names["condition_tests"] || names["clc"] {
		t.Errorf("tables %v", names)
	}
	if _, err := r.Table("clc"); err == nil || !strings.Contains(err.Error(), "no table \"clc\"") {
		t.Errorf("missing table: %v", err)
	}

	bad := bhasha.IndicKLAR("testdata/indicklar/project_page_demo_hin_excerpt.json", bhasha.Languages("hinn"), bhasha.Strategies("tint"))
	if probs := bad.Validate(); len(probs) != 2 {
		t.Errorf("Validate: %v", probs)
	}
	_, err = bhasha.Run(context.Background(), bad, bhasha.Out(filepath.Join(dir, "bad")))
	if err == nil || !strings.Contains(err.Error(), `unknown language "hinn"`) || !strings.Contains(err.Error(), `unknown strategy "tint"`) {
		t.Errorf("bad experiment: %v", err)
	}
}

// Open says when the dataset changed since the run.
func TestOpenNotesChangedInputs(t *testing.T) {
	dir := t.TempDir()
	data, b := tqaCopy(t, dir)
	exp := bhasha.Distractors(data, bhasha.Conditions("clean"), bhasha.SampleItems(3), bhasha.Models(bhasha.SimulatedModels()[0]))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := bhasha.Open(context.Background(), r.Dir()); err != nil || len(again.Notes()) != 0 {
		t.Fatalf("unchanged: %v %v", err, again.Notes())
	}
	os.WriteFile(data, append(b, '\n'), 0o644)
	again, err := bhasha.Open(context.Background(), r.Dir())
	if err != nil || len(again.Notes()) != 1 || !strings.Contains(again.Notes()[0], "tqa.jsonl changed since the run") {
		t.Errorf("changed: %v %v", err, again.Notes())
	}
}

// Running the same experiment value twice (a notebook cell run again)
// resumes: the first run's simulator address does not stick to it.
func TestRunTwiceResumes(t *testing.T) {
	dir := t.TempDir()
	exp := bhasha.IndicKLAR("testdata/indicklar/project_page_demo_hin_excerpt.json", bhasha.Languages("hin"), bhasha.SampleItems(3),
		bhasha.Models(bhasha.SimulatedModels()[0]))
	opts := []bhasha.RunOption{bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache"))}
	if _, err := bhasha.Run(context.Background(), exp, opts...); err != nil {
		t.Fatal(err)
	}
	if len(exp.Models[0].Endpoints) != 0 {
		t.Errorf("the run changed the caller's experiment: %v", exp.Models[0].Endpoints)
	}
	// The run's copy of the experiment does not keep the simulator's
	// address either (it would be dead when the run is reopened).
	if opened, err := bhasha.Open(context.Background(), filepath.Join(dir, "run")); err != nil || len(opened.Experiment().Models[0].Endpoints) != 0 {
		t.Errorf("reopened experiment: %v %v", err, opened.Experiment().Models)
	}
	var log strings.Builder
	r, err := bhasha.Run(context.Background(), exp, append(opts, bhasha.Log(&log))...)
	if err != nil || r.Manifest().Counts.SentThisRun != 0 || !strings.Contains(log.String(), "nothing to do") {
		t.Errorf("second run: %v %+v %s", err, r.Manifest().Counts, log.String())
	}
}

// A request file is a study too: its run has the requests table (no gold,
// so no accuracy), one sample per answer, and the role a line names.
func TestRequestFileRun(t *testing.T) {
	dir := t.TempDir()
	lines := `{"item": "1", "kind": "chat", "messages": [{"role": "user", "content": "Capital of France?"}]}
{"item": "1", "role": "translation", "kind": "chat", "messages": [{"role": "user", "content": "Translate: Capital of France?"}]}
{"item": "2", "strategy": "s", "kind": "completion", "prompt": "The capital of India is"}
`
	file := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := bhasha.Run(context.Background(), bhasha.Requests(file, bhasha.WithDecoding(bhasha.Decoding{MaxTokens: 8})),
		bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	req, err := r.Table("requests")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range req.Rows {
		n += int(req.Num(row, "n"))
		if req.Num(row, "failed") != 0 {
			t.Errorf("failed requests: %v", row)
		}
	}
	if n != 3*3 {
		t.Errorf("requests table counts %d answers, want 9", n)
	}
	if _, err := r.Table("accuracy"); err == nil {
		t.Error("a request file has an accuracy table")
	}
	samples, err := r.Samples()
	if err != nil || len(samples) != 9 {
		t.Fatalf("%d samples, %v", len(samples), err)
	}
	roles := map[string]int{}
	for _, s := range samples {
		roles[s.Role]++
	}
	if roles["translation"] != 3 || roles[""] != 6 {
		t.Errorf("roles %v", roles)
	}
}

// TruthfulQA MC1 samples carry the option the model ranks first and
// every option's log-likelihood.
func TestMC1Samples(t *testing.T) {
	dir := t.TempDir()
	exp := bhasha.Distractors("testdata/truthfulqa/mc_task.json", bhasha.Conditions("clean"), bhasha.SampleItems(2), bhasha.Models(bhasha.SimulatedModels()[2]))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := r.Samples()
	if err != nil || len(samples) != 2 {
		t.Fatalf("%d samples, %v", len(samples), err)
	}
	for _, s := range samples {
		if s.Strategy != "mc1" || s.Chosen < 0 || s.Chosen >= len(s.ChoiceLogprobs) || len(s.ChoiceLogprobs) < 2 || s.Answer == "" {
			t.Errorf("mc1 sample %+v", s)
		}
		best := 0
		for i, lp := range s.ChoiceLogprobs {
			if lp > s.ChoiceLogprobs[best] {
				best = i
			}
		}
		if best != s.Chosen {
			t.Errorf("chosen %d, best log-likelihood at %d", s.Chosen, best)
		}
	}
}

// One variable points a notebook's experiment at a server: with
// BHASHA_ENDPOINT set and no models named, the run asks the models the
// server lists (the judge too), and says so; unset, the simulator answers.
func TestEndpointFromEnv(t *testing.T) {
	url := simtest.Start(t, sim.Config{Models: []sim.ModelSpec{{ID: "org/real-7b", ParamsB: 7, MaxModelLen: 4096}}})
	t.Setenv("BHASHA_ENDPOINT", url)
	t.Setenv("VLLM_API_KEY", "")
	dir := t.TempDir()
	var log strings.Builder
	exp := bhasha.IndicQuest("testdata/indicquest-v1", bhasha.Languages("en", "hi"), bhasha.SampleItems(2))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")),
		bhasha.EndpointFromEnv(), bhasha.Log(&log))
	if err != nil {
		t.Fatal(err)
	}
	m := r.Manifest()
	var names []string
	for _, mi := range m.Models {
		names = append(names, mi.Name+"="+mi.ServedName)
	}
	if strings.Join(names, " ") != "real-7b=org/real-7b judge=org/real-7b" {
		t.Errorf("models %v; want the served model, and it as the judge", names)
	}
	if !strings.Contains(log.String(), "asking the models "+url+" serves: org/real-7b") {
		t.Errorf("log: %s", log.String())
	}
	t.Setenv("BHASHA_ENDPOINT", "")
	r, err = bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "sim")), bhasha.CacheDir(filepath.Join(dir, "cache")), bhasha.EndpointFromEnv())
	if err != nil || !r.Manifest().Simulated {
		t.Errorf("without BHASHA_ENDPOINT: %v, simulated %v", err, r != nil && r.Manifest().Simulated)
	}
}

// A refusal from Go names the Go options that resolve it, not the command
// line's flags (a notebook user has no --out).
func TestRefusalNamesGoOptions(t *testing.T) {
	dir := t.TempDir()
	data, _ := tqaCopy(t, dir)
	out, cache := bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache"))
	exp := bhasha.Distractors(data, bhasha.Conditions("clean"), bhasha.SampleItems(3), bhasha.Models(bhasha.SimulatedModels()[0]))
	if _, err := bhasha.Run(context.Background(), exp, out, cache); err != nil {
		t.Fatal(err)
	}
	changed := bhasha.Distractors(data, bhasha.Conditions("clean"), bhasha.SampleItems(3), bhasha.Models(bhasha.SimulatedModels()[0]),
		bhasha.WithDecoding(bhasha.Decoding{MaxTokens: 7}))
	_, err := bhasha.Run(context.Background(), changed, out, cache)
	if err == nil || !strings.Contains(err.Error(), "bhasha.ArchiveChanged()") || !strings.Contains(err.Error(), "bhasha.Out") || strings.Contains(err.Error(), "--") {
		t.Errorf("refusal: %v", err)
	}
}

// tqaCopy copies the small TriviaQA sample into dir and returns its path
// and bytes.
func tqaCopy(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	data := filepath.Join(dir, "tqa.jsonl")
	b, err := os.ReadFile("testdata/triviaqa/triviaqa_small.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return data, b
}

// A later open of a run whose table is kept serves it without reading the
// dataset: a dataset that no longer parses opens (with the note that it
// changed) and fails only what needs its items, naming it; restored, the
// experiment is built on demand.
func TestOpenReadsTheDatasetOnlyToScore(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/indicklar/project_page_demo_hin_excerpt.json")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "page.json")
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	exp := bhasha.IndicKLAR(data, bhasha.Languages("hin"), bhasha.SampleItems(3), bhasha.Models(bhasha.SimulatedModels()[0]))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Table("accuracy")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		dataset []byte
		err     string // the error of a table that needs the items ("" none)
	}{
		{name: "unchanged", dataset: b},
		{name: "no longer parses", dataset: []byte(`{"langs": {"hin": {"facts": [`), err: "page.json"},
		{name: "restored", dataset: b},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(data, c.dataset, 0o644); err != nil {
				t.Fatal(err)
			}
			again, err := bhasha.Open(context.Background(), r.Dir())
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			got, err := again.Table("accuracy")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || again.Experiment().Items() != nil {
					t.Fatalf("Table: %v, want an error naming %s", err, c.err)
				}
				if notes := again.Notes(); len(notes) == 0 || !strings.Contains(notes[0], "page.json changed since the run") {
					t.Errorf("notes: %v", notes)
				}
				return
			}
			if err != nil || got.Markdown() != want.Markdown() {
				t.Fatalf("Table: %v\n%s\nwant\n%s", err, got.Markdown(), want.Markdown())
			}
			if set := again.Experiment().Items(); set == nil || len(set.Items) != 3 {
				t.Errorf("the experiment's items after a kept table: %v", set)
			}
		})
	}
}
