package indicklar

import (
	"github.com/bhashalab/bhasha/studies/experiment"
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
	// Scoring switches the scoring from the authors' rules (the
	// defaults) to Bhasha's named alternatives; the tables show the other
	// rule beside the one in force (YAML scoring:, a block other studies
	// declare with keys of their own).
	Scoring ScoringOptions `yaml:"scoring"`
	// Prompt switches the prompts between the authors' code (the
	// defaults) and the paper's wording (YAML prompt:).
	Prompt PromptOptions `yaml:"prompt"`
}

// PromptOptions switch the study between its authors' code (the defaults)
// and the paper's wording.
type PromptOptions struct {
	Chat              bool `yaml:"chat"`               // chat template instead of raw completion
	ReadmeCMNames     bool `yaml:"readme_cm_names"`    // Dogrish/Konglish/Urlish
	ScriptNames       bool `yaml:"script_names"`       // SOURCE_SCRIPT = script name
	PaperWording      bool `yaml:"paper_wording"`      // Appendix F prompt texts instead of the code's
	ShuffleCandidates bool `yaml:"shuffle_candidates"` // shuffle candidates with the seed (default: the authors' stored order, gold last)
	Shots             int  `yaml:"shots"`              // demonstrations (0: DefaultShots)
	// DemosExcludeItem leaves the test item out of the 2Step strategies'
	// second-stage demonstrations (Bhasha's fix; default: the authors'
	// pool, which can hold the item itself, gold included).
	DemosExcludeItem bool `yaml:"demos_exclude_item"`
	// DemosFromEnglish draws the demonstrations from the relation's
	// English split (the paper's §4.3; default: the same relation and
	// language, Appendix F.1 and the authors' code).
	DemosFromEnglish bool `yaml:"demos_from_english"`
	MaxTokens        int  `yaml:"max_tokens"` // one token limit for every strategy (the paper's §4.3: 10); 0 keeps the code's per-strategy limits
}

// Effective is p with the values in force where a field is left at its
// default: Shots is DefaultShots when not set. The report's provenance
// prints the block as Effective returns it (experiment.Effective).
func (p PromptOptions) Effective() any {
	p.Shots = shotsOrDefault(p.Shots)
	return p
}

// ScoringOptions are IndicKLAR's named alternatives to the authors'
// scoring rules. They change how recorded answers are read, never what
// is asked.
type ScoringOptions struct {
	// LenientJSON reads the JSON answers leniently (fenced, embedded,
	// single-quoted, truncated JSON: extract.Field) instead of the
	// authors' json.loads rule (extract.Authors).
	LenientJSON bool `yaml:"lenient_json"`
}

// Options is a new zero Options: the study's YAML keys.
func (Study) Options() any { return new(Options) }

// WithForms sets the question forms (YAML forms:).
func WithForms(forms ...string) experiment.Option {
	return experiment.Set(func(o *Options) { o.Forms = forms })
}

// WithStrategies sets the prompting strategies (YAML strategies:).
func WithStrategies(names ...string) experiment.Option {
	return experiment.Set(func(o *Options) { o.Strategies = names })
}

// WithPrompt sets the prompt options (YAML prompt:).
func WithPrompt(p PromptOptions) experiment.Option {
	return experiment.Set(func(o *Options) { o.Prompt = p })
}

// WithScoring sets the scoring options (YAML scoring:).
func WithScoring(s ScoringOptions) experiment.Option {
	return experiment.Set(func(o *Options) { o.Scoring = s })
}
