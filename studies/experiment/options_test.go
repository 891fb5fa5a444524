package experiment_test

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha/examples/brevity"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
)

// withExample is the built-in studies and the example study (examples/brevity), as a program registers them.
func withExample(t *testing.T) *experiment.Registry {
	t.Helper()
	reg := studies.Builtin()
	if err := reg.Add(brevity.Study{}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// A study registered by a program declares its own YAML option: the file
// sets it where the built-in studies' options are (top level), Build reads
// it, a bad value is refused at its line, a mistyped key is named with the
// nearest one, and the option set for another study (or another study's
// option set for it) is refused naming the study it applies to.
func TestStudyOwnOption(t *testing.T) {
	const (
		own   = "name: t\nstudy: brevity\ndataset: {path: ../../testdata/triviaqa/triviaqa_small.jsonl}\n"
		klar  = "name: k\nstudy: indicklar\ndataset: {path: ../../testdata/indicklar/project_page_demo_hin_excerpt.json}\nlanguages: [hin]\n"
		model = "models: [{name: m, served_name: M, endpoints: [http://h/v1]}]\n"
	)
	cases := []struct {
		name, yaml string
		tokens     int      // the token limit of the requests built (0: refused)
		want       []string // the problems, when refused
	}{
		{"default", own + model, 16, nil},
		{"set", own + "answer_tokens: 4\n" + model, 4, nil},
		{"empty is not set", own + "answer_tokens:\n" + model, 16, nil},
		{"out of range", own + "answer_tokens: -3\n" + model, 0, []string{"line 4: answer_tokens -3: want 1 to 4096"}},
		{"not a number", own + "answer_tokens: lots\n" + model, 0, []string{"line 4: cannot unmarshal !!str `lots` into int"}},
		{"mistyped", own + "answer_token: 4\n" + model, 0, []string{`line 4: unknown key "answer_token": did you mean "answer_tokens"?`}},
		{"for another study", klar + "answer_tokens: 4\n" + model, 0, []string{"line 5: answer_tokens does not apply to study indicklar (it applies to brevity)"}},
		{"another study's option", own + model + "strategies: [tint-en]\nconditions: [hi]\n", 0, []string{
			"line 5: strategies does not apply to study brevity (it applies to indicklar)", "line 6: conditions does not apply to study brevity (it applies to mdi)"}},
		{"a shared field it does not read", own + "languages: [hin]\n" + model, 0, []string{"line 4: languages does not apply to study brevity (it applies to indicklar, indicquest)"}},
	}
	for _, c := range cases {
		e, err := experiment.Parse(context.Background(), []byte(c.yaml), "x.yaml", experiment.LoadOptions{Studies: withExample(t)})
		if c.want != nil {
			if err == nil {
				t.Errorf("%s: no error", c.name)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error lacks %q:\n%v", c.name, w, err)
				}
			}
			if n := strings.Count(err.Error(), "\n  "); n != len(c.want) {
				t.Errorf("%s: %d problems, want %d:\n%v", c.name, n, len(c.want), err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for r, err := range e.StreamStage(1, nil, nil) {
			if err != nil || r.Decoding.MaxTokens != c.tokens {
				t.Errorf("%s: max_tokens %d (%v), want %d", c.name, r.Decoding.MaxTokens, err, c.tokens)
			}
			break
		}
	}
}

// Options set in Go with a study's setters: the study's own are read, and
// another study's are refused naming the study, as in YAML (without lines).
func TestStudyOptionsInGo(t *testing.T) {
	ds := &experiment.Dataset{Path: "../../testdata/triviaqa/triviaqa_small.jsonl"}
	models := []experiment.Model{{Name: "m", ServedName: "M"}}
	cases := []struct {
		name  string
		study string
		opts  []experiment.Option
		want  string // "" when valid
	}{
		{"own", "brevity", []experiment.Option{brevity.AnswerTokens(5)}, ""},
		{"own, twice", "mdi", []experiment.Option{distractors.WithConditions("hi"), experiment.Set(func(o *distractors.Options) { o.Paragraph = "p" })}, ""},
		{"another study's first", "mdi", []experiment.Option{brevity.AnswerTokens(5), distractors.WithConditions("hi")}, "answer_tokens does not apply to study mdi (it applies to brevity)"},
		{"another study's after", "brevity", []experiment.Option{brevity.AnswerTokens(5), indicklar.WithStrategies("tint-en")}, "strategies does not apply to study brevity (it applies to indicklar)"},
		{"bad value", "brevity", []experiment.Option{brevity.AnswerTokens(5000)}, "answer_tokens 5000: want 1 to 4096 (or absent for 16)"},
	}
	for _, c := range cases {
		e := &experiment.Experiment{Name: "g", Study: c.study, Studies: withExample(t), Dataset: ds, Models: models}
		for _, o := range c.opts {
			o(e)
		}
		for range 2 { // a second validation says the same
			probs := e.Validate()
			switch {
			case c.want == "" && len(probs) > 0:
				t.Errorf("%s: %v", c.name, probs)
			case c.want != "" && (len(probs) != 1 || probs[0].Msg != c.want || probs[0].Line != 0):
				t.Errorf("%s: %v, want %q", c.name, probs, c.want)
			}
		}
		if err := e.Build(context.Background()); (err == nil) != (c.want == "") {
			t.Errorf("%s: Build: %v", c.name, err)
		}
	}
}

// The experiment.yaml copy of a run holds every option set, the study's
// own beside the shared ones, its files made absolute; read back, it is
// the same experiment.
func TestPortableKeepsOptions(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "r.jsonl", `{"item":"1","kind":"completion","prompt":"p"}`+"\n")
	for _, f := range []string{"smoke-indicklar.yaml", "smoke-mdi.yaml", "smoke-indicquest.yaml"} {
		t.Run(f, func(t *testing.T) {
			e, err := load(filepath.Join("..", "..", "testdata", "experiments", f))
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, e)
		})
	}
	t.Run("requests", func(t *testing.T) {
		e, err := load(write(t, dir, "e.yaml", "name: e\nrequests: r.jsonl\nmodels: [{name: a, served_name: A, endpoints: [http://h/v1]}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		b := roundTrip(t, e)
		if !strings.Contains(string(b), "requests: "+filepath.Join(dir, "r.jsonl")) {
			t.Errorf("the requests file is not absolute:\n%s", b)
		}
	})
	t.Run("blocks", func(t *testing.T) { // prompt: and scoring:, each study's own keys
		for _, c := range []struct{ yaml, want string }{
			{"name: k\nstudy: indicklar\ndataset: {path: ../../testdata/indicklar/project_page_demo_hin_excerpt.json}\nlanguages: [hin]\nprompt: {shots: 5, paper_wording: true}\nscoring: {lenient_json: true}\n",
				"lenient_json: true"},
			{"name: d\nstudy: mdi\ndataset: {path: ../../testdata/triviaqa/triviaqa_small.jsonl}\nscoring: {unpaired_tests: true}\n", "unpaired_tests: true"},
		} {
			e, err := experiment.Parse(context.Background(), []byte(c.yaml+"models: [{name: m, served_name: M}]\n"), "x.yaml", experiment.LoadOptions{Studies: studies.Builtin()})
			if err != nil {
				t.Fatal(err)
			}
			if b := roundTrip(t, e); !strings.Contains(string(b), c.want) || (e.Study == "indicklar" && !strings.Contains(string(b), "shots: 5")) {
				t.Errorf("the copy lacks the blocks:\n%s", b)
			}
		}
	})
	t.Run("example study", func(t *testing.T) {
		e, err := experiment.Parse(context.Background(), []byte("name: t\nstudy: brevity\ndataset: {path: ../../testdata/triviaqa/triviaqa_small.jsonl}\nanswer_tokens: 7\nmodels: [{name: m, served_name: M}]\n"),
			"t.yaml", experiment.LoadOptions{Studies: withExample(t)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Portable()
		if err != nil {
			t.Fatal(err)
		}
		back, err := experiment.Parse(context.Background(), b, "copy.yaml", experiment.LoadOptions{Studies: withExample(t)})
		if err != nil || experiment.OptionsOf[brevity.Options](back).AnswerTokens != 7 {
			t.Errorf("example study copy: %v\n%s", err, b)
		}
	})
}

// roundTrip checks that the portable copy of e parses to the same
// experiment (shared fields and options), and returns it.
func roundTrip(t *testing.T, e *experiment.Experiment) []byte {
	t.Helper()
	b, err := e.Portable()
	if err != nil {
		t.Fatal(err)
	}
	back, err := experiment.Parse(context.Background(), b, "/elsewhere/experiment.yaml", experiment.LoadOptions{Studies: studies.Builtin()})
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if back.Study != e.Study || !slices.Equal(back.Languages, e.Languages) || back.Sample != e.Sample {
		t.Errorf("shared fields differ: %+v vs %+v", back, e)
	}
	b2, err := back.Portable()
	if err != nil || string(b2) != string(b) {
		t.Errorf("the copy's copy differs (%v):\n%s\nvs\n%s", err, b2, b)
	}
	if !reflect.DeepEqual(back.OptionProvenance(), e.OptionProvenance()) {
		t.Errorf("option blocks %q, want %q", back.OptionProvenance(), e.OptionProvenance())
	}
	if reflect.TypeOf(back.Options) != reflect.TypeOf(e.Options) || reflect.ValueOf(e.Options).Elem().IsZero() != reflect.ValueOf(back.Options).Elem().IsZero() {
		t.Errorf("options %#v, want %#v", back.Options, e.Options)
	}
	return b
}

// sharedKeyStudy declares an option spelt as a shared field's key.
type sharedKeyStudy struct{ brevity.Study }

func (sharedKeyStudy) Name() string { return "clash" }
func (sharedKeyStudy) Options() any {
	return new(struct {
		Sample int `yaml:"sample"`
	})
}

// A study whose own option reuses a shared field's key is not registered.
func TestOptionKeyClash(t *testing.T) {
	if err := studies.Builtin().Add(sharedKeyStudy{}); err == nil || !strings.Contains(err.Error(), `its option "sample" is a shared field`) {
		t.Errorf("registered: %v", err)
	}
}

// An experiment read with yaml.v3 (UnmarshalYAML) gets its study's
// options and, when validated, the problems Parse reports: unknown keys
// (top level, nested, in a block) and other studies' options, at their
// lines.
func TestValidateAfterUnmarshal(t *testing.T) {
	const head = "name: t\nstudy: brevity\ndataset: {path: d.jsonl}\nmodels: [{name: m, served_name: M}]\n"
	for _, c := range []struct {
		name, yaml string
		want       []string // the problems
	}{
		{"valid", head + "answer_tokens: 4\n", nil},
		{"unknown key", head + "answer_token: 4\n", []string{`line 5: unknown key "answer_token": did you mean "answer_tokens"?`}},
		{"unknown nested key", head + "decoding: {max_token: 3}\n", []string{`line 5: unknown key "max_token": did you mean "max_tokens"?`}},
		{"another study's option", head + "strategies: [tint-en]\n", []string{"line 5: strategies does not apply to study brevity (it applies to indicklar)"}},
		{"a block key no study declares", head + "scoring:\n  zzz: true\n", []string{`line 6: unknown key "zzz" (scoring takes lenient_json, normalized_lexical,`}},
	} {
		var e experiment.Experiment
		if err := yaml.Unmarshal([]byte(c.yaml), &e); err != nil {
			t.Fatal(err)
		}
		e.Studies = withExample(t)
		probs := e.Validate()
		if len(probs) != len(c.want) {
			t.Errorf("%s: %v, want %q", c.name, probs, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(probs[i].String(), w) {
				t.Errorf("%s: %q, want %q", c.name, probs[i], w)
			}
		}
		if c.want == nil && experiment.OptionsOf[brevity.Options](&e).AnswerTokens != 4 {
			t.Errorf("%s: options %+v", c.name, e.Options)
		}
	}
}
