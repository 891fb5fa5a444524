package indicklar

import (
	"github.com/bhashalab/bhasha/study"
)

// Options are IndicKLAR's own options (top-level keys of the experiment
// file); languages and the dataset are shared fields of the experiment.
type Options struct {
	// Forms are the question forms asked: native, code-mixed, english
	// (default native).
	Forms []string `yaml:"forms"`
	// Strategies are the prompting strategies (default baseline).
	Strategies []string `yaml:"strategies"`
	// Reference is the strategy the others are tested against (default
	// Baseline when run, else Obj-Baseline).
	Reference string `yaml:"reference"`
	// Scoring switches from the authors' scoring rules to Bhasha's.
	Scoring ScoringOptions `yaml:"scoring"`
	// Prompt switches from the authors' prompts to the paper's wording.
	Prompt PromptOptions `yaml:"prompt"`
}

// PromptOptions switch the study between its authors' code (the defaults)
// and the paper's wording.
type PromptOptions struct {
	// Chat sends each prompt as one user message through the model's chat
	// template (the paper's §4.3 wording) instead of a raw completion.
	Chat bool `yaml:"chat"`
	// ReadmeCMNames uses the README's code-mixed names (Dogrish, Konglish,
	// Urlish) instead of the automation script's (Dogrilish, Konklish,
	// Urglish).
	ReadmeCMNames bool `yaml:"readme_cm_names"`
	// ScriptNames fills SOURCE_SCRIPT with the script's name (Devanagari);
	// the authors' automation passes the language name (Hindi) there.
	ScriptNames bool `yaml:"script_names"`
	// PaperWording uses the prompt texts printed in the paper's Appendix F
	// instead of the (longer) texts of the authors' code.
	PaperWording bool `yaml:"paper_wording"`
	// ShuffleCandidates shuffles the candidates with the seed (default:
	// the authors' stored order, gold last).
	ShuffleCandidates bool `yaml:"shuffle_candidates"`
	// Shots is the number of demonstrations (0: DefaultShots).
	Shots int `yaml:"shots"`
	// DemosExcludeItem leaves the test item out of the 2Step strategies'
	// second-stage demonstrations; by default, as the authors' code does,
	// the pool element at the item's KLAR index is left out instead
	// (PROTOCOLS.md §1.5).
	DemosExcludeItem bool `yaml:"demos_exclude_item"`
	// DemosFromEnglish draws the demonstrations, but the ablations', from
	// the English split of the item's relation (the paper's §4.3) instead
	// of the same relation and language (the authors' code).
	DemosFromEnglish bool `yaml:"demos_from_english"`
	// MaxTokens, when positive, replaces every strategy's token limit.
	MaxTokens int `yaml:"max_tokens"`
}

// Effective is p with Shots in force (DefaultShots when not set), as the
// report's provenance prints it (experiment.Effective).
func (p PromptOptions) Effective() any {
	p.Shots = shotsOrDefault(p.Shots)
	return p
}

// ScoringOptions are IndicKLAR's named alternatives to the authors'
// scoring rules; they never change what is asked.
type ScoringOptions struct {
	// LenientJSON reads JSON answers by extract.Field instead of the
	// authors' rule (extract.Authors).
	LenientJSON bool `yaml:"lenient_json"`
}

// Options is a new zero Options: the study's YAML keys.
func (Study) Options() any { return new(Options) }

// WithForms sets the question forms (YAML forms:).
func WithForms(forms ...string) study.Option {
	return study.Set(func(o *Options) { o.Forms = forms })
}

// WithStrategies sets the prompting strategies (YAML strategies:).
func WithStrategies(names ...string) study.Option {
	return study.Set(func(o *Options) { o.Strategies = names })
}

// WithPrompt sets the prompt options (YAML prompt:).
func WithPrompt(p PromptOptions) study.Option {
	return study.Set(func(o *Options) { o.Prompt = p })
}

// WithScoring sets the scoring options (YAML scoring:).
func WithScoring(s ScoringOptions) study.Option {
	return study.Set(func(o *Options) { o.Scoring = s })
}
