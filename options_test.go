package bhasha_test

import (
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
	"github.com/bhashalab/bhasha/studies/indicquest"
)

// A study's scoring and prompt setters, given to any constructor, set
// the study's own options: the study reads its own, and one of another
// study is refused naming the study it applies to.
func TestStudyOptionsForward(t *testing.T) {
	cases := []struct {
		name string
		exp  *bhasha.Experiment
		want string // the one problem, "" when valid
		read func(*bhasha.Experiment) bool
	}{
		{"lenient_json on indicklar", bhasha.IndicKLAR("d", bhasha.Languages("hin"), indicklar.WithScoring(indicklar.ScoringOptions{LenientJSON: true})), "",
			func(e *bhasha.Experiment) bool { return experiment.OptionsOf[indicklar.Options](e).Scoring.LenientJSON }},
		{"prompt on indicklar", bhasha.IndicKLAR("d", bhasha.Languages("hin"), indicklar.WithPrompt(indicklar.PromptOptions{Shots: 5, PaperWording: true})), "",
			func(e *bhasha.Experiment) bool {
				p := experiment.OptionsOf[indicklar.Options](e).Prompt
				return p.Shots == 5 && p.PaperWording
			}},
		{"mdi's on mdi", bhasha.Distractors("d", distractors.WithScoring(distractors.ScoringOptions{MultilingualAbstain: true, UnpairedTests: true})), "",
			func(e *bhasha.Experiment) bool {
				return experiment.OptionsOf[distractors.Options](e).Scoring == distractors.ScoringOptions{MultilingualAbstain: true, UnpairedTests: true}
			}},
		{"normalized_lexical on indicquest", bhasha.IndicQuest("d", indicquest.WithScoring(indicquest.ScoringOptions{NormalizedLexical: true})), "",
			func(e *bhasha.Experiment) bool {
				return experiment.OptionsOf[indicquest.Options](e).Scoring.NormalizedLexical
			}},
		{"lenient_json on mdi", bhasha.Distractors("d", indicklar.WithScoring(indicklar.ScoringOptions{LenientJSON: true})),
			"scoring.lenient_json does not apply to study mdi (it applies to indicklar)", nil},
		{"prompt on indicquest", bhasha.IndicQuest("d", indicklar.WithPrompt(indicklar.PromptOptions{Chat: true})),
			"prompt.chat does not apply to study indicquest (it applies to indicklar)", nil},
		{"mdi's on indicklar", bhasha.IndicKLAR("d", bhasha.Languages("hin"), indicklar.WithScoring(indicklar.ScoringOptions{LenientJSON: true}), distractors.WithScoring(distractors.ScoringOptions{UnpairedTests: true})),
			"scoring.unpaired_tests does not apply to study indicklar (it applies to mdi)", nil},
	}
	for _, c := range cases {
		probs := c.exp.Validate()
		switch {
		case c.want == "" && len(probs) > 0:
			t.Errorf("%s: %v", c.name, probs)
		case c.want == "" && !c.read(c.exp):
			t.Errorf("%s: the study does not read it: %+v", c.name, c.exp.Options)
		case c.want != "" && (len(probs) != 1 || probs[0].Msg != c.want):
			t.Errorf("%s: %v, want %q", c.name, probs, c.want)
		}
	}
}
