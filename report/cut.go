package report

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The lengths the HTML report cuts its texts to (CutText), each cut
// naming the file that holds the text in full.
const (
	// MaxTableText bounds, in characters (the cut note included), the
	// text of one cell of a table on the HTML page but the answers table.
	MaxTableText = 1000
	// MaxAnswerText bounds, in characters (the cut note included), the
	// text of one cell of the answers table on the HTML page (the
	// explorer shows more of each answer).
	MaxAnswerText = 200
	// MaxSampleText bounds, in characters (the cut note included), each
	// text of a sample in the HTML explorer (its prompt, response, error,
	// prediction, gold).
	MaxSampleText = 4000
)

// CutText returns s when it has at most limit characters (runes); otherwise
// its first characters followed by the note "… [cut at N of M characters;
// the full text is in WHERE]", at most limit characters in all, so that
// a text CutText returned is returned as it is by another call with the
// same limit. The cut falls on a character boundary and never inside a
// grapheme of an Indic script (cutPoint: a vowel sign, a virama and the
// consonant it joins stay with their letter); N counts the characters
// kept, M those of s. A note too long for limit (a long where) is dropped
// for one without where. It reads s once; cost O(len(s)).
func CutText(s string, limit int, where string) string {
	if len(s) <= limit { // a character takes at least a byte
		return s
	}
	m := utf8.RuneCountInString(s)
	if m <= limit {
		return s
	}
	note := func(n int) string {
		return fmt.Sprintf(" … [cut at %d of %d characters; the full text is in %s]", n, m, where)
	}
	room := limit - utf8.RuneCountInString(note(limit))
	if room < limit/2 {
		note = func(n int) string { return fmt.Sprintf(" … [cut at %d of %d characters]", n, m) }
		room = limit - utf8.RuneCountInString(note(limit))
	}
	i := cutPoint(s, max(room, 0))
	return s[:i] + note(utf8.RuneCountInString(s[:i]))
}

// maxCluster bounds how far back cutPoint moves to keep a grapheme whole.
const maxCluster = 16

// cutPoint is the byte offset in s after its first n characters, moved
// back to the start of a grapheme they would split.
func cutPoint(s string, n int) int {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return graphemeStart(s, i)
}

// graphemeStart is boundary i of s moved back (at most maxCluster characters)
// to the start of the grapheme a cut there would split; i when none is near.
func graphemeStart(s string, i int) int {
	for at, back := i, 0; back <= maxCluster; back++ {
		if at == 0 || at >= len(s) {
			return at
		}
		prev, size := utf8.DecodeLastRuneInString(s[:at])
		next, _ := utf8.DecodeRuneInString(s[at:])
		if !joined(prev, next) {
			return at
		}
		at -= size
	}
	return i
}

// joined reports whether a grapheme goes on from prev to next: a
// combining mark, an emoji modifier, a joiner, CR LF, a conjunct.
func joined(prev, next rune) bool {
	const zwnj, zwj = '\u200c', '\u200d'
	switch {
	case prev == '\r' && next == '\n':
		return true
	case unicode.In(next, unicode.Mn, unicode.Mc, unicode.Me), next == zwnj, next == zwj,
		next >= 0x1f3fb && next <= 0x1f3ff: // emoji modifiers
		return true
	case prev == zwj:
		return true
	case isVirama(prev) && unicode.IsLetter(next):
		return true
	}
	return false
}

// isVirama reports whether r is an Indic virama (combining class 9).
func isVirama(r rune) bool {
	if r < 0x900 {
		return false
	}
	var b [utf8.UTFMax]byte
	return norm.NFC.Properties(b[:utf8.EncodeRune(b[:], r)]).CCC() == 9
}
