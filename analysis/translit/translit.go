// Package translit romanizes the Brahmic scripts of India into one Latin
// form, so that text in any of them can be compared with English and with
// each other.
//
// The nine Brahmic blocks of Unicode (Devanagari U+0900, Bengali U+0980,
// Gurmukhi U+0A00, Gujarati U+0A80, Oriya U+0B00, Tamil U+0B80, Telugu
// U+0C00, Kannada U+0C80, Malayalam U+0D00) share one layout inherited
// from ISCII: the same offset in each block is the same sound. ISO15919
// maps each offset to its ISO 15919 romanization, with the inherent vowel
// "a" after a consonant that carries no vowel sign or virama, nukta forms
// (क़ q, ज़ z, ड़ ṛ, फ़ f ...) and the native digits as ASCII digits. Other
// characters pass through unchanged. Loose folds a romanization to plain
// ASCII for tolerant comparison (see its contract).
package translit

import (
	"cmp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Brahmic block starts, in the order of the shared layout.
var blocks = []rune{0x0900, 0x0980, 0x0A00, 0x0A80, 0x0B00, 0x0B80, 0x0C00, 0x0C80, 0x0D00}

type class uint8

const (
	other class = iota
	vowel
	consonant
	sign   // dependent vowel sign
	virama // kills the inherent vowel
	nukta
	mark // anusvara, visarga, candrabindu, avagraha, danda
	digit
)

type entry struct {
	c   class
	lat string
}

// table is indexed by the offset within a block.
var table = func() [0x80]entry {
	var t [0x80]entry
	set := func(c class, from int, lats ...string) {
		for i, l := range lats {
			if l != "" {
				t[from+i] = entry{c, l}
			}
		}
	}
	set(mark, 0x01, "m̐", "ṁ", "ḥ")
	set(vowel, 0x04, "ạ", "a", "ā", "i", "ī", "u", "ū", "r̥", "l̥", "ê", "e", "ē", "ai", "ô", "o", "ō", "au")
	set(consonant, 0x15, "k", "kh", "g", "gh", "ṅ", "c", "ch", "j", "jh", "ñ", "ṭ", "ṭh", "ḍ", "ḍh", "ṇ",
		"t", "th", "d", "dh", "n", "ṉ", "p", "ph", "b", "bh", "m", "y", "r", "ṟ", "l", "ḷ", "ḻ", "v", "ś", "ṣ", "s", "h")
	t[0x3C] = entry{nukta, ""}
	set(mark, 0x3D, "'")
	set(sign, 0x3E, "ā", "i", "ī", "u", "ū", "r̥", "r̥̄", "ê", "e", "ē", "ai", "ô", "o", "ō", "au")
	t[0x4D] = entry{virama, ""}
	set(mark, 0x50, "ōm")
	set(consonant, 0x58, "q", "k͟h", "ġ", "z", "ṛ", "ṛh", "f", "ẏ")
	set(vowel, 0x60, "r̥̄", "l̥̄")
	set(sign, 0x62, "l̥", "l̥̄")
	set(mark, 0x64, ".", "..")
	for d := 0; d < 10; d++ {
		t[0x66+d] = entry{digit, string(rune('0' + d))}
	}
	set(mark, 0x70, ".") // abbreviation sign
	return t
}()

// nuktaForms gives a consonant's romanization with a following nukta.
var nuktaForms = map[string]string{"k": "q", "kh": "k͟h", "g": "ġ", "j": "z", "ḍ": "ṛ", "ḍh": "ṛh", "ph": "f", "y": "ẏ", "r": "ṟ", "l": "ḻ", "n": "ṉ"}

// overrides are the block-specific letters that break the shared layout.
var overrides = map[rune]entry{
	0x0A70: {mark, "ṁ"},      // Gurmukhi tippi (nasal)
	0x0A71: {mark, ""},       // Gurmukhi addak (gemination)
	0x0A72: {vowel, ""},      // Gurmukhi iri (vowel bearer)
	0x0A73: {vowel, ""},      // Gurmukhi ura (vowel bearer)
	0x09F0: {consonant, "r"}, // Assamese ra
	0x09F1: {consonant, "v"}, // Assamese wa
	0x0B71: {consonant, "v"}, // Oriya wa
}

func lookup(r rune) (entry, bool) {
	if e, ok := overrides[r]; ok {
		return e, true
	}
	for _, b := range blocks {
		if r >= b && r < b+0x80 {
			e := table[r-b]
			return e, e.c != other
		}
	}
	return entry{}, false
}

// IsBrahmic reports whether r is a letter or sign of one of the nine Brahmic blocks.
func IsBrahmic(r rune) bool { _, ok := lookup(r); return ok }

// ISO15919 romanizes s (NFC first). A consonant followed by another
// consonant, a space or the end keeps its inherent "a" (ISO 15919 writes
// it; Loose drops a word-final one).
func ISO15919(s string) string {
	rs := []rune(norm.NFC.String(s))
	at := func(j int) entry { // the zero entry (other) past the end
		if j >= len(rs) {
			return entry{}
		}
		e, _ := lookup(rs[j])
		return e
	}
	var sb strings.Builder
	for i := 0; i < len(rs); i++ {
		e, ok := lookup(rs[i])
		if !ok {
			sb.WriteRune(rs[i])
			continue
		}
		switch e.c {
		case consonant:
			lat, j := e.lat, i+1
			if at(j).c == nukta {
				lat = cmp.Or(nuktaForms[lat], lat)
				j++
			}
			sb.WriteString(lat)
			switch next := at(j); next.c {
			case sign:
				sb.WriteString(next.lat)
				j++
			case virama:
				j++
			default:
				sb.WriteString("a")
			}
			i = j - 1
		case nukta, virama:
		default:
			sb.WriteString(e.lat)
		}
	}
	return sb.String()
}

// Key is what Matches compares of one text: the Loose form of its
// phonetic romanization and that form's consonant skeleton, so that a
// text met many times is romanized once.
type Key struct{ loose, skeleton string }

// KeyOf is s's Key. s may be in a Brahmic script or in Latin letters:
// Brahmic words are romanized phonetically (ISO 15919 with the palatals
// written as English writes them: च ch, छ chh, श and ष sh); Latin words
// get English spelling folds ("ck"→k, c before e/i/y→s, other c→k,
// "qu"→kv). KeyOf(a).Matches(KeyOf(b)) says whether a and b name the same
// thing within the tolerance of transliteration (Match).
func KeyOf(s string) Key { return romanKey(phonetic(s)) }

// romanKey is the Key of text already romanized (Match's input).
func romanKey(s string) Key {
	l := Loose(s)
	return Key{loose: l, skeleton: Skeleton(l)}
}

// Matches is Match of the two texts k and o are the keys of.
func (k Key) Matches(o Key) bool {
	if k.loose == o.loose {
		return k.loose != ""
	}
	return k.skeleton == o.skeleton && len(strings.ReplaceAll(k.skeleton, " ", "")) >= 2
}

func phonetic(s string) string {
	return eachWord(norm.NFC.String(s), func(w string) string {
		if IsBrahmicWord(w) {
			return looseBrahmic.Replace(ISO15919(w))
		}
		l := strings.ReplaceAll(looseLatin.Replace(strings.ToLower(w)), "c", "k")
		return strings.ReplaceAll(l, "\x00", "ch")
	})
}

// eachWord is the words of s (strings.Fields), each through f, joined by
// single spaces.
func eachWord(s string, f func(string) string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = f(w)
	}
	return strings.Join(words, " ")
}

// squeeze is w without its bytes skip holds for (k: the byte's index)
// and with each run of one byte kept once.
func squeeze(w string, skip func(k int) bool) []byte {
	var o []byte
	for k := 0; k < len(w); k++ {
		if !skip(k) && (len(o) == 0 || o[len(o)-1] != w[k]) {
			o = append(o, w[k])
		}
	}
	return o
}

// Match reports whether a and b (Latin, or romanized with ISO15919) name
// the same thing within the tolerance of transliteration: their Loose
// forms are equal, or their consonant skeletons are, with at least two
// consonants. The skeleton keeps each word's first letter and drops the
// vowels a e i o u, "y" and a non-initial "h" (so Paris ≈ पेरिस "peris",
// John ≈ जॉन "jon"). It is deliberately tolerant: it can equate short
// names that differ only in vowels (Rome, Rim), which is why it is
// reported beside strict matching, never instead of it.
func Match(a, b string) bool { return romanKey(a).Matches(romanKey(b)) }

// Skeleton is the consonant skeleton of a Loose form (see Match).
func Skeleton(loose string) string {
	return eachWord(loose, func(w string) string {
		return string(squeeze(w, func(k int) bool { return k > 0 && strings.IndexByte("aeiouyh", w[k]) >= 0 }))
	})
}

// Loose folds romanized or Latin text for tolerant comparison: NFD with
// combining marks removed (ā→a, ṭ→t, ś→s), lower case, "w"→"v", "ph"→"f",
// "x"→"ks", "q"→"k", "z"→"j", aspiration dropped after consonants
// ("kh"→"k", "bh"→"b"; "sh" and "ch" become "s" and "c"), doubled letters
// collapsed, a word-final "a" after a consonant dropped (the inherent
// vowel Hindi does not pronounce), and anything that is not a letter or
// digit turned into a single space. Two strings that agree after Loose are
// taken to name the same thing when their scripts differ.
func Loose(s string) string {
	d := strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Mn, r):
			return -1
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return r
		}
		return ' '
	}, norm.NFD.String(strings.ToLower(s)))
	return eachWord(phoneticPairs.Replace(d), func(w string) string {
		o := squeeze(w, func(k int) bool { return w[k] == 'h' && k > 0 && strings.IndexByte("kgcjtdpbsr", w[k-1]) >= 0 }) // aspiration
		if n := len(o); n > 2 && o[n-1] == 'a' && strings.IndexByte("aeiou", o[n-2]) < 0 {
			o = o[:n-1]
		}
		return string(o)
	})
}

// Roman writes s in plain Latin letters the way people type romanized
// Indian languages: ISO15919, then a word-final inherent "a" after a
// consonant dropped (never a long "ā"), then the diacritics removed
// ("भारत की राजधानी" → "bharat ki rajadhani"; medial schwas stay).
func Roman(s string) string {
	// ISO15919 keeps every space, so source and romanized words align.
	src := strings.Split(norm.NFC.String(s), " ")
	words := strings.Split(ISO15919(s), " ")
	for i, w := range words {
		rs := []rune(w)
		end := len(rs) // trailing punctuation stays where it is
		for end > 0 && !unicode.IsLetter(rs[end-1]) && !unicode.Is(unicode.Mn, rs[end-1]) {
			end--
		}
		if end > 2 && rs[end-1] == 'a' && isConsonantLetter(rs[end-2]) && i < len(src) && IsBrahmicWord(src[i]) {
			rs = append(rs[:end-1], rs[end:]...)
		}
		words[i] = string(rs)
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(strings.Join(words, " ")))
}

// isConsonantLetter reports whether r (possibly with diacritics) is a
// Latin consonant.
func isConsonantLetter(r rune) bool {
	base := []rune(norm.NFD.String(string(r)))[0]
	return unicode.IsLetter(base) && !strings.ContainsRune("aeiouAEIOU", base)
}

// IsBrahmicWord reports whether s contains a Brahmic letter.
func IsBrahmicWord(s string) bool { return strings.ContainsFunc(s, IsBrahmic) }

// The replacements Loose and phonetic apply, built once.
var (
	looseBrahmic  = strings.NewReplacer("ch", "chh", "c", "ch", "ś", "sh", "ṣ", "sh")
	looseLatin    = strings.NewReplacer("ck", "k", "qu", "kv", "ce", "se", "ci", "si", "cy", "sy", "ch", "\x00")
	phoneticPairs = strings.NewReplacer("ph", "f", "w", "v", "x", "ks", "q", "k", "z", "j", "ee", "i", "oo", "u")
)
