package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// scanLookup is Lookup's rule by brute force over every cue: the cue that
// occurs last at a word start, then the longest there, then the first
// indexed.
func scanLookup(facts []Fact, text string) (int, int, bool) {
	lower := strings.ToLower(text)
	best, bestPos, bestLen := -1, -1, 0
	prevSep := true
	for i, r := range lower {
		sep := unicode.IsSpace(r) || unicode.IsPunct(r)
		if prevSep && !sep && i+1 < len(lower) {
			rest := lower[i:]
			for fi, f := range facts {
				for _, c := range f.Cues {
					c = strings.TrimRightFunc(strings.TrimLeftFunc(c, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }), unicode.IsSpace)
					if utf8.RuneCountInString(c) < 2 || len(c) > len(rest) || !strings.EqualFold(rest[:len(c)], c) {
						continue
					}
					if i > bestPos || (i == bestPos && len(c) > bestLen) {
						best, bestPos, bestLen = fi, i, len(c)
					}
				}
			}
		}
		prevSep = sep
	}
	return best, bestPos, best >= 0
}

// Lookup finds what a scan of every cue finds, on cues that share their
// first runes (pseudo-words from few syllables, Latin and Devanagari,
// short and multi-word cues, cues that are prefixes of others, half of
// them behind one template, as a relation's questions are, some quoted).
func TestLookupAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	syll := []string{"ka", "ki", "ma", "Ra", "क", "कि", "म", "रा", "ज़"}
	word := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		return b.String()
	}
	var facts []Fact
	for i := range 400 {
		cue := word()
		if rng.IntN(4) == 0 {
			cue += " " + word()
		}
		if rng.IntN(2) == 0 { // a question's template shared by many cues
			cue = "Kaki mara " + cue
		}
		if rng.IntN(8) == 0 { // a quoted question
			cue = `"` + cue + `?"`
		}
		facts = append(facts, Fact{ID: fmt.Sprint(i), Language: "hi", Cues: []string{cue, " " + word() + " "}, Answer: "a"})
	}
	k := NewKnowledge(facts)
	for n := range 2000 {
		var words []string
		for range 1 + rng.IntN(12) {
			if rng.IntN(3) == 0 {
				words = append(words, "kaki mara")
			}
			words = append(words, word())
		}
		text := strings.Join(words, []string{" ", ", ", "? ", "\n"}[rng.IntN(4)])
		wantFact, wantPos, wantOK := scanLookup(facts, text)
		f, pos, ok := k.Lookup(text)
		gotFact := -1
		if ok {
			gotFact = k.byID[f.ID][0]
		}
		if ok != wantOK || gotFact != wantFact || (ok && pos != wantPos) {
			t.Fatalf("text %d %q: Lookup gives fact %d at %d (%v), a scan fact %d at %d (%v)", n, text, gotFact, pos, ok, wantFact, wantPos, wantOK)
		}
	}
}
