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
)

// Forms of a variant.
const (
	// English is [item.English]: English.
	English = item.English
)

// Pipeline is [normalize.Pipeline]: an ordered list of normalisation
// steps.
type Pipeline = normalize.Pipeline

// ExactMatch is [match.ExactMatch]: TriviaQA's exact match of pred
// against some gold or alias.
func ExactMatch(pred string, golds []string) bool { return match.ExactMatch(pred, golds) }

// Substring is [match.Substring]: after p, the gold occurs in the
// response; an empty gold never matches.
func Substring(response, gold string, p Pipeline) bool { return match.Substring(response, gold, p) }

// WordOverlap is [match.WordOverlap]: after p, every word of the gold
// occurs among the response's words; an empty gold never matches.
func WordOverlap(response, gold string, p Pipeline) bool { return match.WordOverlap(response, gold, p) }

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
