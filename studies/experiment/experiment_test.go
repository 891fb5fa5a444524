package experiment_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// load reads an experiment file with the built-in studies.
func load(p string) (*experiment.Experiment, error) {
	return experiment.Load(context.Background(), p, experiment.LoadOptions{Studies: studies.Builtin()})
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidationReportsEverythingWithLines(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "bad.yaml", `name: bad|name
requests: missing.jsonl
modles: []
models:
  - name: a
    endpoints: [ftp://x]
    max_concurrency: -1
  - name: a
    served_name: m
    endpoints: [http://h/v1]
    api_key_env: BHASHA_TEST_UNSET_VAR
decoding: {max_tokens: -2}
engine: {attempt_timeout: soon}
`)
	_, err := load(p)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"bad.yaml",
		`line 1: name "bad|name"`,
		"line 2: requests: stat",
		"line 3: unknown key \"modles\": did you mean \"models\"?",
		"line 5: models[0] (a): served_name is required",
		`line 6: models[0] (a): endpoint ftp://x is not an http(s) URL`,
		"line 7: models[0] (a): max_concurrency",
		`line 8: models[1]: name "a" is used twice`,
		"line 11: models[1] (a): environment variable BHASHA_TEST_UNSET_VAR is not set",
		"line 12: decoding.max_tokens",
		"line 13: cannot unmarshal !!str `soon` into time.Duration",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

// YAML syntax errors name the line of the problem; empty and non-UTF-8
// files say so, with a line.
func TestYAMLErrorsNameTheLine(t *testing.T) {
	head := "name: x\nsynthetic: {count: 3}\nmodels:\n"
	cases := []struct{ name, yaml, want string }{
		{"unclosed flow list", head + "  - {name: a, served_name: b, endpoints: [http://h/v1}\ndecoding: {max_tokens: 4}\n", "line 4: did not find expected ',' or ']'"},
		{"unclosed list in a block", head + "  - name: a\n    served_name: b\n    endpoints: [http://h/v1\n  - name: c\n", "line 6: did not find expected ',' or ']'"},
		{"unclosed flow mapping", head + "  - {name: a, served_name: b\n", "line 4: did not find expected ',' or '}'"},
		{"bad indentation", "name: x\n  synthetic: 3\nmodels: []\n", "line 2: mapping values are not allowed"},
		{"empty", "", "the file is empty"},
		{"comments only", "# nothing\n", "the file is empty"},
		{"latin-1", head + "  - {name: \"caf\xe9\", served_name: b, endpoints: [http://h/v1]}\n", "line 4: invalid UTF-8"},
	}
	for _, c := range cases {
		_, err := experiment.Parse(context.Background(), []byte(c.yaml), "e.yaml", experiment.LoadOptions{Studies: studies.Builtin()})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "line 0") {
			t.Errorf("%s: %v (want %q)", c.name, err, c.want)
		}
	}
}

func TestStream(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "r.jsonl", `{"item":"1","language":"hin","form":"native","kind":"chat","messages":[{"role":"user","content":"q1"}]}

{"item":"2","kind":"completion","prompt":"p2","decoding":{"max_tokens":3,"echo":true}}
`)
	p := write(t, dir, "e.yaml", "name: e\nrequests: r.jsonl\nmodels:\n  - {name: a, served_name: A, endpoints: [http://h/v1]}\n  - {name: b, served_name: B, endpoints: [http://h/v1]}\ndecoding: {max_tokens: 7}\n")
	e, err := load(p)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var maxTok []int
	for r, err := range e.StreamStage(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, r.Key.String())
		maxTok = append(maxTok, r.Decoding.MaxTokens)
	}
	want := []string{"e|a|1|hin|native|||", "e|a|2|||||", "e|b|1|hin|native|||", "e|b|2|||||"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("keys %q", keys)
	}
	if maxTok[0] != 7 || maxTok[1] != 3 {
		t.Errorf("decoding %v", maxTok)
	}
	hashes, err := e.InputHashes()
	if err != nil || len(hashes) != 1 || e.Hash == "" {
		t.Errorf("hashes %v %v (the experiment's own: %q)", hashes, err, e.Hash)
	}
	for p := range hashes {
		if !filepath.IsAbs(p) || filepath.Base(p) != "r.jsonl" {
			t.Errorf("input keyed by %q, want the requests file's absolute path", p)
		}
	}
}

func TestBadRequestLines(t *testing.T) {
	cases := []struct{ line, want string }{
		{`{"item":"1","kind":"chat"}`, `line 1: field "messages" is required`},
		{`{"item":"1","kind":"poem","prompt":"x"}`, `field "kind": "poem"`},
		{`{"kind":"completion","prompt":"x"}`, `field "item" is required`},
		{`{"item":"1","kind":"completion","prompt":"x","temprature":0}`, `unknown field "temprature"`},
		{`{"item":"1","kind":"completion","prompt":"x"}` + "\n" + `{"item":"1","kind":"completion","prompt":"y"}`, "line 2: same key as line 1"},
		{`{"item":`, "line 1"},
		{"{\"item\":\"1\",\"kind\":\"completion\",\"prompt\":\"caf\xe9?\"}", `line 1: field "prompt": invalid UTF-8`},
		{"\xff\xfe{\x00", "line 1: the text is UTF-16"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		write(t, dir, "r.jsonl", c.line)
		e, err := load(write(t, dir, "e.yaml", "name: e\nrequests: r.jsonl\nmodels: [{name: a, served_name: A, endpoints: [http://h/v1]}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		var got error
		for _, err := range e.StreamStage(1, nil, nil) {
			if err != nil {
				got = err
			}
		}
		if got == nil || !strings.Contains(got.Error(), c.want) || !strings.Contains(got.Error(), "r.jsonl") {
			t.Errorf("%s: error %v, want %q", c.line, got, c.want)
		}
	}
}

func TestStudyValidation(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "s.yaml", `name: s
study: indicklar
dataset: {path: ../../../testdata/indicklar/project_page_demo_hin_excerpt.json, format: klr}
languages: [hin, hinn]
forms: [native, cm, mixed]
strategies: [tint-cm, tint]
conditions: [hi]
models: [{name: m, served_name: M, endpoints: [http://h/v1]}]
`)
	_, err := load(p)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`line 3: unknown dataset format "klr"`,
		`line 4: unknown language "hinn"; nearest: hin (Hindi)`,
		`line 5: unknown form "mixed"`,
		`line 6: unknown strategy "tint"`,
		"line 7: conditions does not apply to study indicklar (it applies to mdi)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	q := write(t, dir, "q.yaml", "name: q\nstudy: indicquest\ndataset: {path: nowhere}\nmodels: [{name: m, served_name: M, endpoints: [http://h/v1]}]\n")
	if _, err := load(q); err == nil || !strings.Contains(err.Error(), "needs a judge") || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("indicquest without judge: %v", err)
	}
	// The strategy check is made whether or not conditions are set.
	for _, extra := range []string{"", "conditions: [hi]\n"} {
		m := write(t, dir, "m.yaml", "name: m\nstudy: mdi\ndataset: {path: ../../../testdata/triviaqa/triviaqa_small.jsonl}\nstrategies: [cot]\n"+extra+"models: [{name: m, served_name: M, endpoints: [http://h/v1]}]\n")
		if _, err := load(m); err == nil || !strings.Contains(err.Error(), "line 4: strategies does not apply to study mdi (it applies to indicklar)") {
			t.Errorf("mdi with strategies (%q): %v", extra, err)
		}
	}
	u := write(t, dir, "u.yaml", "name: u\nstudy: klar2\nmodels: [{name: m, served_name: M, endpoints: [http://h/v1]}]\n")
	if _, err := load(u); err == nil || !strings.Contains(err.Error(), `line 2: unknown study "klar2"`) {
		t.Errorf("unknown study: %v", err)
	}
}

func TestStudyStreams(t *testing.T) {
	e, err := load(filepath.Join("..", "..", "testdata", "experiments", "smoke-mdi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r, err := range e.StreamStage(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if r.Key.Condition == "hi_long" && !strings.Contains(r.Messages[1].Content, "करें। नोट:") {
			t.Errorf("hi_long repeats the note three times: %q", r.Messages[1].Content)
		}
	}
	if n != 10*8*2 || e.Stages() != 2 || len(e.Templates()) == 0 { // stage 2: the semantic judge
		t.Errorf("%d requests, %d stages", n, e.Stages())
	}
}

// An experiment built in Go validates without the disk (no line numbers,
// every problem at once) and builds with it.
func TestValidateAndBuildInGo(t *testing.T) {
	e := &experiment.Experiment{Name: "go", Study: "indicklar", Studies: studies.Builtin(), Dataset: &experiment.Dataset{Path: "/nowhere/klar"}, Languages: []string{"hin", "hinn"},
		Models: []experiment.Model{{Name: "m", ServedName: "sim-tiny-1b", Endpoints: []string{"http://127.0.0.1:1/v1"}}},
		Engine: experiment.EngineConfig{AttemptTimeout: -time.Second}}
	probs := e.Validate()
	if len(probs) != 2 || probs[0].Line != 0 || !strings.Contains(probs.Error(), `unknown language "hinn"`) ||
		!strings.Contains(probs.Error(), "engine.attempt_timeout: -1s is negative") || strings.Contains(probs.Error(), "line 0") || strings.Contains(probs.Error(), "nowhere") {
		t.Errorf("Validate: %v", probs)
	}
	e.Languages, e.Engine = []string{"hin"}, experiment.EngineConfig{AttemptTimeout: 30 * time.Second}
	if probs := e.Validate(); len(probs) != 0 {
		t.Errorf("valid: %v", probs)
	}
	if err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("Build with a missing dataset: %v", err)
	}
	e.Dataset.Path = "../../testdata/indicklar/project_page_demo_hin_excerpt.json"
	if err := e.Build(context.Background()); err != nil || e.Items() == nil || e.EngineOptions().AttemptTimeout != 30*time.Second {
		t.Fatalf("Build: %v", err)
	}
	n := 0
	for _, err := range e.StreamStage(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Error("no requests")
	}
}

// Withheld second-stage requests are counted over every model, as the
// stream is read (the count was once the last model's only: 24 of 48).
func TestWithheldCountedOverModels(t *testing.T) {
	e, err := load("../../testdata/experiments/smoke-indicklar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, sent := 0, 0
	for _, err := range e.StreamStage(2, func(engine.Key) (*engine.Record, bool) { return nil, false }, func(engine.Key) { n++ }) {
		if err != nil {
			t.Fatal(err)
		}
		sent++
	}
	// 8 items × 2 models × 3 two-step strategies, none answered in stage 1.
	if n != 48 || sent != 0 {
		t.Errorf("withheld %d, yielded %d; want 48 and 0", n, sent)
	}
}

// An experiment's description is one line of at most MaxDescription
// characters, checked with its line; it changes no scoring input.
func TestDescription(t *testing.T) {
	head := "name: x\nsynthetic: {count: 3}\nmodels:\n  - {name: a, served_name: b, endpoints: [http://h/v1]}\n"
	long := strings.Repeat("é", experiment.MaxDescription+1)
	cases := []struct{ name, description, want string }{
		{"one line", `"synthetic prompts to time the engine"`, ""},
		{"line break", `"two\nlines"`, "line 5: description must be one line"},
		{"too long", long, "line 5: description must be at most 200 characters (it has 201)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := experiment.Parse(context.Background(), []byte(head+"description: "+c.description+"\n"), "e.yaml", experiment.LoadOptions{Studies: studies.Builtin()})
			if c.want == "" {
				if err != nil || e.Description != "synthetic prompts to time the engine" {
					t.Fatalf("%v, description %q", err, e.Description)
				}
				plain, err := experiment.Parse(context.Background(), []byte(head), "e.yaml", experiment.LoadOptions{Studies: studies.Builtin()})
				if err != nil {
					t.Fatal(err)
				}
				a, errA := e.ScoringInputs(nil)
				b, errB := plain.ScoringInputs(nil)
				if errA != nil || errB != nil || !maps.Equal(a, b) {
					t.Errorf("the description changes the scoring inputs: %v %v\n%v\n%v", errA, errB, a, b)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want %q", err, c.want)
			}
		})
	}
}

// An experiment loaded lazily makes every check but the dataset's parse
// (a missing file is still reported), names its templates before its
// plan is built when its study can (Templater), and reads the dataset at
// Build; a study that cannot is built at once.
func TestLazyLoad(t *testing.T) {
	dir := t.TempDir()
	good, err := filepath.Abs("../../testdata/indicklar/project_page_demo_hin_excerpt.json")
	if err != nil {
		t.Fatal(err)
	}
	tqa, err := filepath.Abs("../../testdata/triviaqa/triviaqa_small.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	bad := write(t, dir, "bad.json", `{"langs": {"hin": {"facts": [`)
	klar := func(data string) string {
		return "name: k\nstudy: indicklar\ndataset: {path: " + data + ", format: indicklar-page}\nlanguages: [hin]\nstrategies: [baseline, tint-cm, 2step-cm]\n" +
			"models: [{name: m, served_name: M, endpoints: [http://h/v1]}]\n"
	}
	eager, err := load(write(t, dir, "eager.yaml", klar(good)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, yaml string
		loadErr    string // Load's error ("" none)
		unbuilt    bool   // Load leaves the plan to Build
		buildErr   string // Build's error ("" none)
	}{
		{name: "indicklar", yaml: klar(good), unbuilt: true},
		{name: "indicklar, a dataset that does not parse", yaml: klar(bad), unbuilt: true, buildErr: "bad.json"},
		{name: "indicklar, a missing dataset", yaml: klar(filepath.Join(dir, "none.json")), loadErr: "line 3: dataset: stat"},
		{name: "mdi: no Templater", yaml: "name: d\nstudy: mdi\ndataset: {path: " + tqa + "}\nmodels: [{name: m, served_name: M, endpoints: [http://h/v1]}]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, dir, "e.yaml", c.yaml)
			e, err := experiment.Load(context.Background(), p, experiment.LoadOptions{Studies: studies.Builtin(), Lazy: true})
			if c.loadErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.loadErr) {
					t.Fatalf("Load: %v, want %q", err, c.loadErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Plan() == nil; got != c.unbuilt {
				t.Fatalf("plan unbuilt after Load: %v, want %v", got, c.unbuilt)
			}
			if c.unbuilt && !maps.Equal(e.Templates(), eager.Templates()) {
				t.Errorf("templates before Build: %v, want %v", e.Templates(), eager.Templates())
			}
			err = e.Build(context.Background())
			if c.buildErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.buildErr) || e.Plan() != nil {
					t.Fatalf("Build: %v, want %q", err, c.buildErr)
				}
				return
			}
			if err != nil || e.Plan() == nil || e.Items() == nil {
				t.Fatalf("Build: %v", err)
			}
			if c.unbuilt && !maps.Equal(e.Templates(), eager.Templates()) {
				t.Errorf("templates after Build: %v, want %v", e.Templates(), eager.Templates())
			}
		})
	}
}
