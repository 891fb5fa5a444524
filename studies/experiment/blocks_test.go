package experiment_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
	"github.com/bhashalab/bhasha/studies/indicquest"
)

// The blocks prompt: and scoring: are written once in a file whatever its
// study, and each of their keys is one study's option: read by it, refused
// at its line for another study (naming the study it applies to), left
// alone when zero (the copies of older runs write every key), and unknown
// when no study declares it.
func TestOptionBlocks(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join("..", "..", "testdata", p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	dir := t.TempDir()
	reqs := write(t, dir, "r.jsonl", `{"item":"1","kind":"completion","prompt":"p"}`+"\n")
	const model = "models: [{name: m, served_name: M}]\n"
	var (
		klar  = "name: k\nstudy: indicklar\ndataset: {path: " + abs("indicklar/project_page_demo_hin_excerpt.json") + "}\nlanguages: [hin]\n"
		mdi   = "name: d\nstudy: mdi\ndataset: {path: " + abs("triviaqa/triviaqa_small.jsonl") + "}\nconditions: [clean]\n"
		quest = "name: q\nstudy: indicquest\ndataset: {path: " + abs("indicquest-v1") + "}\njudge: {name: j, served_name: J}\n"
		req   = "name: r\nrequests: " + reqs + "\n\n\n"
	)
	klarOpts := func(e *experiment.Experiment) any { return *experiment.OptionsOf[indicklar.Options](e) }
	mdiOpts := func(e *experiment.Experiment) any { return experiment.OptionsOf[distractors.Options](e).Scoring }
	cases := []struct {
		name, yaml string
		want       []string                         // the problems ("" for none)
		read       func(*experiment.Experiment) any // what the study read, when valid
		got        any
	}{
		{"indicklar's scoring", klar + "scoring: {lenient_json: true}\n" + model, nil, klarOpts,
			indicklar.Options{Scoring: indicklar.ScoringOptions{LenientJSON: true}}},
		{"indicklar's prompt", klar + "prompt: {shots: 5, chat: true}\n" + model, nil, klarOpts,
			indicklar.Options{Prompt: indicklar.PromptOptions{Shots: 5, Chat: true}}},
		{"mdi's scoring", mdi + "scoring: {multilingual_abstain: true, unpaired_tests: true}\n" + model, nil, mdiOpts,
			distractors.ScoringOptions{MultilingualAbstain: true, UnpairedTests: true}},
		{"another study's keys left at zero", mdi + "scoring: {lenient_json: false, multilingual_abstain: true, normalized_lexical: false}\nprompt: {chat: false, shots: 0}\n" + model, nil, mdiOpts,
			distractors.ScoringOptions{MultilingualAbstain: true}},
		{"an older run's copy (every key of both blocks)", mdi + "prompt:\n  chat: false\n  readme_cm_names: false\n  script_names: false\n  paper_wording: false\n  shuffle_candidates: false\n  shots: 0\n  max_tokens: 0\n" +
			"scoring:\n  lenient_json: false\n  multilingual_abstain: true\n  normalized_lexical: false\n  unpaired_tests: false\n" + model, nil, mdiOpts,
			distractors.ScoringOptions{MultilingualAbstain: true}},
		{"indicquest's scoring", quest + "scoring: {normalized_lexical: true}\n" + model + "languages: [hi]\n", nil,
			func(e *experiment.Experiment) any { return experiment.OptionsOf[indicquest.Options](e).Scoring },
			indicquest.ScoringOptions{NormalizedLexical: true}},
		{"indicklar's scoring on mdi", mdi + "scoring: {lenient_json: true}\n" + model,
			[]string{"line 5: scoring.lenient_json does not apply to study mdi (it applies to indicklar)"}, nil, nil},
		{"indicklar's prompt on mdi", mdi + "prompt: {shots: 5}\n" + model,
			[]string{"line 5: prompt.shots does not apply to study mdi (it applies to indicklar)"}, nil, nil},
		{"mdi's scoring on indicklar, at its own line", klar + "scoring:\n  lenient_json: true\n  multilingual_abstain: true\n" + model,
			[]string{"line 7: scoring.multilingual_abstain does not apply to study indicklar (it applies to mdi)"}, nil, nil},
		{"mdi's scoring on indicquest", quest + "scoring: {unpaired_tests: true, normalized_lexical: true}\n" + model + "languages: [hi]\n",
			[]string{"line 5: scoring.unpaired_tests does not apply to study indicquest (it applies to mdi)"}, nil, nil},
		{"two studies' keys on requests", req + "scoring: {lenient_json: true}\nprompt:\n  paper_wording: true\n" + model, []string{
			"line 5: scoring.lenient_json does not apply to study requests (it applies to indicklar)",
			"line 7: prompt.paper_wording does not apply to study requests (it applies to indicklar)"}, nil, nil},
		{"mistyped, in the study's block", klar + "scoring: {lenient_jsn: true}\n" + model,
			[]string{`line 5: unknown key "lenient_jsn": did you mean "lenient_json"? (scoring takes lenient_json)`}, nil, nil},
		{"mistyped, in a block the study does not declare", req + "scoring: {unpaired_test: true}\n" + model,
			[]string{`line 5: unknown key "unpaired_test": did you mean "unpaired_tests"? (scoring takes lenient_json, normalized_lexical, multilingual_abstain, rerun_abstain, unpaired_tests)`}, nil, nil},
		{"a block on a study without it", req + "prompt: {shots: 0, max_tokens: 10}\n" + model,
			[]string{"line 5: prompt.max_tokens does not apply to study requests (it applies to indicklar)"}, nil, nil},
	}
	for _, c := range cases {
		e, err := experiment.Parse(context.Background(), []byte(c.yaml), filepath.Join(dir, "x.yaml"), experiment.LoadOptions{Studies: studies.Builtin()})
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if got := c.read(e); !reflect.DeepEqual(got, c.got) {
				t.Errorf("%s: read %+v, want %+v", c.name, got, c.got)
			}
			continue
		}
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
	}
}

// The studies' setters of the blocks, in Go: read by their own study,
// refused for another naming the study they apply to (without lines).
func TestOptionBlocksInGo(t *testing.T) {
	cases := []struct {
		name  string
		study string
		opts  []experiment.Option
		want  string // "" when valid
	}{
		{"indicklar's scoring", "indicklar", []experiment.Option{indicklar.WithScoring(indicklar.ScoringOptions{LenientJSON: true})}, ""},
		{"indicklar's prompt", "indicklar", []experiment.Option{indicklar.WithStrategies("tint-en"), indicklar.WithPrompt(indicklar.PromptOptions{Shots: 5})}, ""},
		{"mdi's scoring", "mdi", []experiment.Option{distractors.WithConditions("hi"), distractors.WithScoring(distractors.ScoringOptions{UnpairedTests: true})}, ""},
		{"indicklar's scoring on mdi", "mdi", []experiment.Option{indicklar.WithScoring(indicklar.ScoringOptions{LenientJSON: true}), distractors.WithConditions("hi")},
			"scoring.lenient_json does not apply to study mdi (it applies to indicklar)"},
		{"mdi's scoring on indicklar", "indicklar", []experiment.Option{indicklar.WithStrategies("tint-en"), distractors.WithScoring(distractors.ScoringOptions{MultilingualAbstain: true})},
			"scoring.multilingual_abstain does not apply to study indicklar (it applies to mdi)"},
		{"indicquest's scoring on indicklar", "indicklar", []experiment.Option{indicquest.WithScoring(indicquest.ScoringOptions{NormalizedLexical: true})},
			"scoring.normalized_lexical does not apply to study indicklar (it applies to indicquest)"},
		{"indicklar's prompt on mdi", "mdi", []experiment.Option{indicklar.WithPrompt(indicklar.PromptOptions{Shots: 5})},
			"prompt.shots does not apply to study mdi (it applies to indicklar)"},
		{"a zero block is not set", "mdi", []experiment.Option{indicklar.WithPrompt(indicklar.PromptOptions{})}, ""},
	}
	for _, c := range cases {
		e := &experiment.Experiment{Name: "g", Study: c.study, Studies: studies.Builtin(), Dataset: &experiment.Dataset{Path: "d"},
			Languages: []string{"hin"}, Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
		if c.study == "mdi" {
			e.Languages = nil
		}
		for _, o := range c.opts {
			o(e)
		}
		probs := e.Validate()
		switch {
		case c.want == "" && len(probs) > 0:
			t.Errorf("%s: %v", c.name, probs)
		case c.want != "" && (len(probs) != 1 || probs[0].Msg != c.want || probs[0].Line != 0):
			t.Errorf("%s: %v, want %q", c.name, probs, c.want)
		}
	}
	// The setters' values are read by the study.
	e := &experiment.Experiment{Name: "g", Study: "indicklar", Studies: studies.Builtin(), Languages: []string{"hin"}}
	indicklar.WithPrompt(indicklar.PromptOptions{Shots: 5})(e)
	indicklar.WithScoring(indicklar.ScoringOptions{LenientJSON: true})(e)
	if o := experiment.OptionsOf[indicklar.Options](e); o.Prompt.Shots != 5 || !o.Scoring.LenientJSON {
		t.Errorf("options %+v", o)
	}
}

// The report's provenance shows the study's blocks, each as JSON with
// the values in force: an unset shots is the study's default, never 0.
func TestOptionProvenance(t *testing.T) {
	for _, c := range []struct {
		name  string
		shots int
		want  string
	}{
		{"set", 5, `"Shots":5`},
		{"unset is the default", 0, fmt.Sprintf(`"Shots":%d`, indicklar.DefaultShots)},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := &experiment.Experiment{Options: &indicklar.Options{Scoring: indicklar.ScoringOptions{LenientJSON: true}, Prompt: indicklar.PromptOptions{Shots: c.shots}}}
			got := e.OptionProvenance()
			if len(got) != 2 || got[0] != [2]string{"scoring options", `{"LenientJSON":true}`} || got[1][0] != "prompt options" || !strings.Contains(got[1][1], c.want) {
				t.Errorf("provenance %q, want %s", got, c.want)
			}
		})
	}
	if got := (&experiment.Experiment{Options: &distractors.Options{}}).OptionProvenance(); len(got) != 1 || got[0][0] != "scoring options" {
		t.Errorf("mdi's provenance %q", got)
	}
	if got := (&experiment.Experiment{}).OptionProvenance(); got != nil {
		t.Errorf("no options: %q", got)
	}
}
