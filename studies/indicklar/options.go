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
	// second-stage demonstration pool (Bhasha's fix). By default the pool
	// is the authors' (PROTOCOLS.md §1.5, §1.15 item 11): their code drops
	// the element whose position in the (relation, language) list equals
	// the item's KLAR index, not the item, so an item can be its own
	// demonstration, gold included. The other strategies always leave the
	// item out, as the authors' code does.
	DemosExcludeItem bool `yaml:"demos_exclude_item"`
	// DemosFromEnglish draws the demonstrations from the English split of
	// the test item's relation (the paper's §4.3) instead of the same
	// relation and language (Appendix F.1 and the authors' code, the
	// default). The ablations keep their native demonstrations, which
	// they ablate as they ablate the question; a relation without English
	// questions has none to show (the study refuses a dataset without
	// any English question).
	DemosFromEnglish bool `yaml:"demos_from_english"`
	// MaxTokens, when positive, replaces every strategy's token limit (the
	// paper's §4.3 states max_new_tokens=10 for all; the code uses 10 for
	// the baselines and 60-160 for the JSON strategies).
	MaxTokens int `yaml:"max_tokens"`
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
