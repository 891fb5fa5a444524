package study

import (
	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/datasets/item"
)

// Dataset items, as Experiment.LoadItems hands them to a study.
type (
	// Items is [item.Set]: items aligned across languages by ID.
	Items = item.Set
	// Item is [item.Item]: one item, its variants per language and form.
	Item = item.Item
	// Variant is [item.Variant]: one language and form of an item.
	Variant = item.Variant
	// Form is [item.Form]: the form of a variant.
	Form = item.Form
	// LangForm is [item.LangForm]: a language and a form.
	LangForm = item.LangForm
	// ItemOptions is [item.Options]: how a dataset is read
	// (Experiment.LoadItemsWith).
	ItemOptions = item.Options
)

// Forms of a variant.
const (
	// Native is [item.Native]: the language's own script and words.
	Native = item.Native
	// CodeMixed is [item.CodeMixed]: native grammar with English
	// content words.
	CodeMixed = item.CodeMixed
	// English is [item.English]: English.
	English = item.English
)

// ParseForm is [item.ParseForm]: the Form s names (a form's name or a
// common abbreviation: "na", "cm", "en", "rom").
func ParseForm(s string) (Form, error) { return item.ParseForm(s) }

// Pipeline is [normalize.Pipeline]: an ordered list of normalisation
// steps.
type Pipeline = normalize.Pipeline

// Normalize is s after every normalisation step ([normalize.Default]:
// NFC, joiners dropped, nukta, digits, punctuation, case folding, white
// space).
func Normalize(s string) string { return normalize.Default.String(s) }

// EdgePunctuation is [match.EdgePunctuation]: what [WordOverlap] strips
// from each word's edges.
const EdgePunctuation = match.EdgePunctuation

// ExactMatch is [match.ExactMatch]: TriviaQA's exact match of pred
// against some gold or alias.
func ExactMatch(pred string, golds []string) bool { return match.ExactMatch(pred, golds) }

// ExactMatchSQuAD is [match.ExactMatchSQuAD]: exact match under SQuAD's
// normalisation against any gold.
func ExactMatchSQuAD(pred string, golds []string) bool { return match.ExactMatchSQuAD(pred, golds) }

// Substring is [match.Substring]: after p, the gold occurs in the
// response; an empty gold never matches.
func Substring(response, gold string, p Pipeline) bool { return match.Substring(response, gold, p) }

// WordOverlap is [match.WordOverlap]: after p, every word of the gold
// occurs among the response's words; an empty gold never matches.
func WordOverlap(response, gold string, p Pipeline) bool { return match.WordOverlap(response, gold, p) }

// TranslitMatch is [match.Translit]: pred and some gold name the same
// thing once both are romanized, reported beside strict matching.
func TranslitMatch(pred string, golds []string) bool { return match.Translit(pred, golds) }

// Proportion is [stats.Proportion]: a rate with its count, size and
// Wilson 95% interval.
type Proportion = stats.Proportion

// Wilson is [stats.Wilson]: the Wilson score interval of k successes in
// n trials at confidence conf.
func Wilson(k, n int, conf float64) (lo, hi float64) { return stats.Wilson(k, n, conf) }

// NewProportion is [stats.NewProportion]: k/n with its 95% Wilson
// interval; it panics when n < 0 or k is outside [0, n].
func NewProportion(k, n int) Proportion { return stats.NewProportion(k, n) }

// McNemarExact is [stats.McNemarExact]: McNemar's exact test (two-sided
// p) on the discordant counts b and c of a paired 2×2 table.
func McNemarExact(b, c int) float64 { return stats.McNemarExact(b, c) }

// PairedDiffCI is [stats.PairedDiffCI]: the Wald interval of a paired
// difference in proportions over n pairs with discordant counts b and c.
func PairedDiffCI(b, c, n int, conf float64) (d, lo, hi float64) {
	return stats.PairedDiffCI(b, c, n, conf)
}

// DiffCI is [stats.DiffCI]: the Wald interval of k1/n1 − k2/n2 for
// independent samples.
func DiffCI(k1, n1, k2, n2 int, conf float64) (d, lo, hi float64) {
	return stats.DiffCI(k1, n1, k2, n2, conf)
}

// TwoProportionZ is [stats.TwoProportionZ]: the pooled two-proportion z
// test of k1/n1 against k2/n2, with its two-sided p.
func TwoProportionZ(k1, n1, k2, n2 int) (z, p float64) { return stats.TwoProportionZ(k1, n1, k2, n2) }

// FisherExact is [stats.FisherExact]: Fisher's exact test of the 2×2
// table [[a, b], [c, d]], its odds ratio and two-sided p.
func FisherExact(a, b, c, d int) (oddsRatio, p float64) { return stats.FisherExact(a, b, c, d) }
