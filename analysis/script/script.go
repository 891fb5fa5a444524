// Package script tells which writing systems a text uses: the count and
// share of its letters in each script, its main script, whether it mixes
// scripts, and whether it switched away from the script expected.
package script

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/bhashalab/bhasha/datasets/lang"
)

// Scripts recognised, by Unicode script name; letters of any other script
// count as "Other".
var Scripts = []string{"Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam",
	"Arabic", "Ol_Chiki", "Meetei_Mayek", "Han", "Hiragana", "Katakana", "Hangul", "Latin", "Cyrillic", "Greek", "Thai"}

// Other is the bucket for letters of any other script.
const Other = "Other"

// Profile is the script make-up of a text. Letters are counted with their
// combining marks (vowel signs belong to the script of their block).
type Profile struct {
	Counts  map[string]int     `json:"counts"`
	Letters int                `json:"letters"`
	Shares  map[string]float64 `json:"shares"`
	Main    string             `json:"main"`  // the script with most letters ("" when there are none)
	Mixed   bool               `json:"mixed"` // letters in two or more scripts
}

// Detect profiles s.
func Detect(s string) Profile {
	p := Profile{Counts: map[string]int{}, Shares: map[string]float64{}}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r) {
			continue
		}
		name := Other
		for _, sc := range Scripts {
			if unicode.Is(unicode.Scripts[sc], r) {
				name = sc
				break
			}
		}
		if name == Other && (unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)) {
			continue // an inherited combining mark (e.g. U+0301) belongs to its base
		}
		p.Counts[name]++
		p.Letters++
	}
	names := make([]string, 0, len(p.Counts))
	for k, v := range p.Counts {
		p.Shares[k] = float64(v) / float64(p.Letters)
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(p.Counts[b]-p.Counts[a], strings.Compare(a, b)) })
	if len(names) > 0 {
		p.Main = names[0]
	}
	p.Mixed = len(names) > 1
	return p
}

// Switched reports whether the text uses letters outside the scripts of
// the language asked for. Japanese expects Han, Hiragana and Katakana;
// a text without letters (a number) never switches.
func (p Profile) Switched(expected lang.Language) bool {
	allowed := map[string]bool{}
	for _, s := range expected.Scripts {
		if s == lang.JapaneseKana {
			allowed["Han"], allowed["Hiragana"], allowed["Katakana"] = true, true, true
			continue
		}
		allowed[string(s)] = true
	}
	for s, n := range p.Counts {
		if n > 0 && !allowed[s] {
			return true
		}
	}
	return false
}

// DistractorSwitch is the distractor study's switch rule, as its rerun
// states it: text with any character of the Devanagari block
// (U+0900–U+097F: letters, signs, digits, danda) or of the CJK Unified
// Ideographs block (U+4E00–U+9FFF; the extension blocks are not part of
// it). It is the one rule for both who is judged and what is counted.
func DistractorSwitch(text string) bool {
	return strings.ContainsFunc(text, func(r rune) bool { return (r >= 0x0900 && r <= 0x097F) || (r >= 0x4E00 && r <= 0x9FFF) })
}
