// Package normalize is the text normalisation pipeline applied before
// answers are compared. Each step has a name; a Pipeline lists the steps
// it applies, and every Result records them beside the raw and the
// normalised text, so a score always says how its strings were prepared.
package normalize

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Step names.
const (
	NFC         = "nfc"         // Unicode canonical composition
	JoinerDrop  = "joiner-drop" // ZWJ/ZWNJ removed in Brahmic scripts (they change rendering, not the word)
	Nukta       = "nukta-fold"  // nukta forms folded to their base letters (क़ → क, ড় → ড)
	Punctuation = "punctuation" // punctuation, dandas and quotes to spaces
	Digits      = "digits"      // native digits (Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada, Malayalam, Arabic-Indic) to ASCII
	CaseFold    = "casefold"    // Unicode simple case folding to lower case
	Whitespace  = "whitespace"  // runs of white space to one space, ends trimmed
	Lower       = "lower"       // lower case (Python's str.lower), as the IndicKLAR authors' code
	Trim        = "trim"        // leading and trailing white space removed, nothing else
)

// Authors is the IndicKLAR authors' preparation: lower case and an outer
// strip, nothing more (PROTOCOLS.md §1.9).
var Authors = Pipeline{Lower, Trim}

// Pipeline is an ordered list of steps.
type Pipeline []string

// Default is every step, in the order above.
var Default = Pipeline{NFC, JoinerDrop, Nukta, Digits, Punctuation, CaseFold, Whitespace}

// String runs the pipeline's steps over s, in order.
func (p Pipeline) String(s string) string {
	for _, st := range p {
		s = step(st, s)
	}
	return s
}

func step(name, s string) string {
	switch name {
	case NFC:
		return norm.NFC.String(s)
	case JoinerDrop:
		return drop(s, func(r rune) bool { return r == '\u200c' || r == '\u200d' })
	case Nukta:
		return norm.NFC.String(drop(norm.NFD.String(s), isNukta))
	case Digits:
		return strings.Map(func(r rune) rune {
			if d, ok := nativeDigit(r); ok {
				return '0' + d
			}
			return r
		}, s)
	case Punctuation:
		return strings.Map(func(r rune) rune {
			if unicode.IsPunct(r) || unicode.IsSymbol(r) || r == '।' || r == '॥' {
				return ' '
			}
			return r
		}, s)
	case CaseFold:
		return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.SimpleFold(unicode.ToUpper(r))) }, s)
	case Whitespace:
		return strings.Join(strings.Fields(s), " ")
	case Lower:
		return strings.ToLower(s)
	case Trim:
		return strings.TrimSpace(s)
	}
	return s
}

// drop is s without the runes del holds for.
func drop(s string, del func(rune) bool) string {
	return strings.Map(func(r rune) rune {
		if del(r) {
			return -1
		}
		return r
	}, s)
}

// isNukta reports the nukta signs of the Brahmic blocks (offset 0x3C).
func isNukta(r rune) bool {
	switch r {
	case 0x093C, 0x09BC, 0x0A3C, 0x0ABC, 0x0B3C, 0x0CBC:
		return true
	}
	return false
}

// nativeDigit maps a native decimal digit to its value.
func nativeDigit(r rune) (rune, bool) {
	for _, base := range []rune{0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0660, 0x06F0, 0x1C50, 0xABF0} {
		if r >= base && r < base+10 {
			return r - base, true
		}
	}
	return 0, false
}
