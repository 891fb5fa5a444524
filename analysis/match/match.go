// Package match decides whether an answer matches its gold: the matchers
// of the three studies, each documented with its rule, and the
// transliteration-aware match reported beside them.
package match

import (
	"regexp"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/translit"
)

// Prefix is IndicKLAR's relaxed prefix match: after preparing both strings
// with p, the prediction is non-empty and a prefix of the gold, or the
// gold is non-empty and a prefix of the prediction. With
// normalize.Authors it is exactly the authors' is_nontrivial_prefix both
// ways; with normalize.Default it is the paper's "after normalisation".
func Prefix(pred, gold string, p normalize.Pipeline) bool {
	return PrefixPrepared(p.String(pred), p.String(gold))
}

// PrefixPrepared is Prefix of a prediction and a gold already prepared
// (a = p.String(pred), g = p.String(gold)).
func PrefixPrepared(a, g string) bool {
	return (a != "" && strings.HasPrefix(g, a)) || (g != "" && strings.HasPrefix(a, g))
}

// Candidate is the authors' match_against_candidates: with both sides
// prepared by p, walk the candidates in their stored order and take the
// first one c (empty ones skipped) for which pred == c, pred starts with c,
// c starts with a non-empty pred, or c occurs in pred; the answer is
// correct when that candidate is the gold. When none is taken, fall back
// to Prefix against the gold. It returns the candidate taken ("" if none).
func Candidate(pred string, stored []string, gold string, p normalize.Pipeline) (taken string, correct bool) {
	return PrepareCandidates(stored, gold, p).Match(p.String(pred))
}

// Candidates are an item's stored candidates and gold prepared once by a
// pipeline, for Candidate's rule against many predictions (a scoring
// pass prepares each item's once, not at every answer).
type Candidates struct {
	stored, prepared []string // prepared[i] = p.String(stored[i])
	gold             string   // p.String(gold)
}

// PrepareCandidates prepares stored and gold with p.
func PrepareCandidates(stored []string, gold string, p normalize.Pipeline) *Candidates {
	c := &Candidates{stored: stored, prepared: make([]string, len(stored)), gold: p.String(gold)}
	for i, s := range stored {
		c.prepared[i] = p.String(s)
	}
	return c
}

// Match is Candidate for a prediction already prepared (a =
// p.String(pred)), against c's candidates and gold.
func (c *Candidates) Match(a string) (taken string, correct bool) {
	for i, cn := range c.prepared {
		if cn == "" {
			continue
		}
		if a == cn || strings.HasPrefix(a, cn) || (a != "" && strings.HasPrefix(cn, a)) || strings.Contains(a, cn) {
			return c.stored[i], cn == c.gold
		}
	}
	return "", PrefixPrepared(a, c.gold)
}

var articles = regexp.MustCompile(`\b(a|an|the)\b`)

// triviaPunct is what TriviaNormalize turns into spaces: ASCII punctuation and ‘ ’ ´.
const triviaPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\u2018\u2019\u00b4"

func isTriviaPunct(r rune) bool { return strings.ContainsRune(triviaPunct, r) }

// TriviaNormalize is TriviaQA's official normalize_answer: underscores to
// spaces, lower case, each ASCII punctuation mark and ‘ ’ ´ ` to a space,
// the words a, an and the to a space, white space collapsed, trimmed.
func TriviaNormalize(s string) string {
	return qaNormalize(strings.ReplaceAll(s, "_", " "), isTriviaPunct, ' ')
}

// SQuADNormalize is SQuAD v1.1's normalize_answer: lower case, ASCII
// punctuation deleted (not replaced by a space, unlike TriviaQA), the
// words a, an, the removed, white space collapsed.
func SQuADNormalize(s string) string {
	return qaNormalize(s, func(r rune) bool { return r < 128 && isTriviaPunct(r) }, -1)
}

// qaNormalize lower-cases s, maps the punctuation marks to repl (-1
// deletes them), removes the articles and collapses white space.
func qaNormalize(s string, punct func(rune) bool, repl rune) string {
	s = strings.Map(func(r rune) rune {
		if punct(r) {
			return repl
		}
		return r
	}, strings.ToLower(s))
	return strings.Join(strings.Fields(articles.ReplaceAllString(s, " ")), " ")
}

// ExactMatch is TriviaQA's exact match: TriviaNormalize(pred) equals
// TriviaNormalize(g) for some gold or alias g.
func ExactMatch(pred string, golds []string) bool { return exactUnder(TriviaNormalize, pred, golds) }

// ExactMatchSQuAD is exact match under SQuADNormalize against any gold.
func ExactMatchSQuAD(pred string, golds []string) bool {
	return exactUnder(SQuADNormalize, pred, golds)
}

func exactUnder(norm func(string) string, pred string, golds []string) bool {
	a := norm(pred)
	return slices.ContainsFunc(golds, func(g string) bool { return norm(g) == a })
}

// Substring is IndicQuest's exact-substring criterion: after p, the gold
// occurs as a contiguous substring of the response (word boundaries
// ignored); an empty gold never matches.
func Substring(response, gold string, p normalize.Pipeline) bool {
	g := p.String(gold)
	return g != "" && strings.Contains(p.String(response), g)
}

// WordOverlap is IndicQuest's word-overlap criterion: after p, every word
// of the gold occurs among the response's words, in any order. Words are
// split at white space (strings.Fields), and each word's leading and
// trailing runes in EdgePunctuation are stripped (inside a word they
// stay: "don't", "co-op"); a word of punctuation only is dropped. An
// empty gold never matches.
func WordOverlap(response, gold string, p normalize.Pipeline) bool {
	words := func(s string) []string {
		var out []string
		for _, w := range strings.Fields(p.String(s)) {
			if w = strings.TrimFunc(w, func(r rune) bool { return strings.ContainsRune(EdgePunctuation, r) }); w != "" {
				out = append(out, w)
			}
		}
		return out
	}
	have := map[string]bool{}
	for _, w := range words(response) {
		have[w] = true
	}
	gw := words(gold)
	return len(gw) > 0 && !slices.ContainsFunc(gw, func(w string) bool { return !have[w] })
}

// EdgePunctuation is what WordOverlap strips from each word's edges: the
// ASCII . , ; : ! ? " ' ( ) [ ] { } and hyphen-minus, the guillemets « »,
// the curly quotes “ ” ‘ ’, the danda । and double danda ॥ (U+0964,
// U+0965), the em dash — and the en dash –. Other punctuation (the
// Urdu ۔ and ؟, the Chinese 。, …, /, *) stays part of the word.
const EdgePunctuation = ".,;:!?\"'()[]{}«»“”‘’।॥-—–"

// Translit is the transliteration-aware match: pred and some gold name the
// same thing after both are romanized (ISO 15919 for Brahmic text, Latin
// kept) within translit.Match's tolerance. It is reported beside strict
// matching, never in its place.
func Translit(pred string, golds []string) bool {
	a := TranslitKey(pred)
	return slices.ContainsFunc(golds, func(g string) bool { return a.Matches(TranslitKey(g)) })
}

// TranslitKey is what Translit compares of one text (normalized, then
// translit.KeyOf): Translit(p, golds) holds when TranslitKey(p) matches
// TranslitKey(g) for some gold g, so a caller that meets one text many
// times can key it once. An empty text matches nothing.
func TranslitKey(s string) translit.Key { return translit.KeyOf(normalize.Default.String(s)) }
