// Package lang is the registry of languages Bhasha knows: the 22 languages
// of the Eighth Schedule of the Indian Constitution, English, and the few
// others the studies use (Spanish and Chinese distractor notes, Japanese in
// KLAR). Every other package resolves language codes through it.
//
// Lookup accepts ISO 639-1 ("hi"), ISO 639-3 ("hin"), the 3-letter codes of
// IndicKLAR's directories ("pun", "ori", "kon"), English names ("Hindi",
// "Odia", "Oriya") and native names ("हिन्दी"), case-insensitively; an
// unknown code is an error that lists the nearest known ones.
package lang

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/internal/textdist"
)

// Script is a writing system, named after its Unicode script property
// where one exists.
type Script string

// Scripts used by the registry.
const (
	Devanagari   Script = "Devanagari"
	Bengali      Script = "Bengali" // the Bengali-Assamese script
	Gurmukhi     Script = "Gurmukhi"
	Gujarati     Script = "Gujarati"
	Oriya        Script = "Oriya"
	Tamil        Script = "Tamil"
	Telugu       Script = "Telugu"
	Kannada      Script = "Kannada"
	Malayalam    Script = "Malayalam"
	PersoArabic  Script = "Arabic" // Perso-Arabic (Nastaliq/Naskh) writing of Urdu, Kashmiri, Sindhi
	OlChiki      Script = "Ol_Chiki"
	MeeteiMayek  Script = "Meetei_Mayek"
	Latin        Script = "Latin"
	Han          Script = "Han"
	JapaneseKana Script = "Japanese" // Han with Hiragana and Katakana
)

// Family is a language family (for Indo-Aryan vs Dravidian analyses).
type Family string

// Families used by the registry.
const (
	IndoAryan     Family = "Indo-Aryan"
	Dravidian     Family = "Dravidian"
	TibetoBurman  Family = "Tibeto-Burman"
	Austroasiatic Family = "Austroasiatic"
	Germanic      Family = "Germanic"
	Romance       Family = "Romance"
	Sinitic       Family = "Sinitic"
	Japonic       Family = "Japonic"
)

// Language is one registry entry.
type Language struct {
	Name   string // English name
	Native string // endonym in its main script
	ISO1   string // ISO 639-1, "" where none exists
	ISO3   string // ISO 639-3 (individual language where the macrolanguage is ambiguous)
	// KLAR is the directory code of IndicKLAR/KLAR ("pun" for Punjabi, "en" for English).
	KLAR string
	// Scripts lists the scripts the language is written in, main one first.
	Scripts []Script
	Family  Family
	// Scheduled marks the 22 languages of the Eighth Schedule.
	Scheduled bool
	// CodeMixed is the name of the English code-mixed form as the IndicKLAR
	// authors' automation script passes it (e.g. "Hinglish"); CodeMixedAlt
	// is the README/demo spelling where it differs.
	CodeMixed, CodeMixedAlt string
	// Aliases are further accepted names and codes.
	Aliases []string
}

// Script is the main script.
func (l Language) Script() Script { return l.Scripts[0] }

func (l Language) String() string { return l.Name + " (" + l.ISO3 + ")" }

var all = []Language{
	{Name: "Assamese", Native: "অসমীয়া", ISO1: "as", ISO3: "asm", KLAR: "asm", Scripts: []Script{Bengali}, Family: IndoAryan, Scheduled: true, CodeMixed: "Assamglish"},
	{Name: "Bengali", Native: "বাংলা", ISO1: "bn", ISO3: "ben", KLAR: "ben", Scripts: []Script{Bengali}, Family: IndoAryan, Scheduled: true, CodeMixed: "Banglish", Aliases: []string{"Bangla"}},
	{Name: "Bodo", Native: "बड़ो", ISO3: "brx", KLAR: "brx", Scripts: []Script{Devanagari}, Family: TibetoBurman, Scheduled: true, CodeMixed: "Bodoglish"},
	{Name: "Dogri", Native: "डोगरी", ISO3: "doi", KLAR: "doi", Scripts: []Script{Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Dogrilish", CodeMixedAlt: "Dogrish", Aliases: []string{"dgo"}},
	{Name: "Gujarati", Native: "ગુજરાતી", ISO1: "gu", ISO3: "guj", KLAR: "guj", Scripts: []Script{Gujarati}, Family: IndoAryan, Scheduled: true, CodeMixed: "Gujlish"},
	{Name: "Hindi", Native: "हिन्दी", ISO1: "hi", ISO3: "hin", KLAR: "hin", Scripts: []Script{Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Hinglish", Aliases: []string{"हिंदी"}},
	{Name: "Kannada", Native: "ಕನ್ನಡ", ISO1: "kn", ISO3: "kan", KLAR: "kan", Scripts: []Script{Kannada}, Family: Dravidian, Scheduled: true, CodeMixed: "Kanglish"},
	{Name: "Kashmiri", Native: "كٲشُر", ISO1: "ks", ISO3: "kas", KLAR: "kas", Scripts: []Script{PersoArabic, Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Kashglish"},
	{Name: "Konkani", Native: "कोंकणी", ISO3: "gom", KLAR: "kon", Scripts: []Script{Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Konklish", CodeMixedAlt: "Konglish", Aliases: []string{"kok", "Goan Konkani"}},
	{Name: "Maithili", Native: "मैथिली", ISO3: "mai", KLAR: "mai", Scripts: []Script{Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Maithilish"},
	{Name: "Malayalam", Native: "മലയാളം", ISO1: "ml", ISO3: "mal", KLAR: "mal", Scripts: []Script{Malayalam}, Family: Dravidian, Scheduled: true, CodeMixed: "Malyalamglish"},
	{Name: "Manipuri", Native: "ꯃꯤꯇꯩꯂꯣꯟ", ISO3: "mni", KLAR: "mni", Scripts: []Script{MeeteiMayek, Bengali}, Family: TibetoBurman, Scheduled: true, CodeMixed: "Manipurlish", Aliases: []string{"Meitei", "Meetei", "মৈতৈলোন্"}},
	{Name: "Marathi", Native: "मराठी", ISO1: "mr", ISO3: "mar", KLAR: "mar", Scripts: []Script{Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Marglish"},
	{Name: "Nepali", Native: "नेपाली", ISO1: "ne", ISO3: "nep", KLAR: "nep", Scripts: []Script{Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Nepglish", Aliases: []string{"npi"}},
	{Name: "Odia", Native: "ଓଡ଼ିଆ", ISO1: "or", ISO3: "ory", KLAR: "ori", Scripts: []Script{Oriya}, Family: IndoAryan, Scheduled: true, CodeMixed: "Odiglish", Aliases: []string{"Oriya"}},
	{Name: "Punjabi", Native: "ਪੰਜਾਬੀ", ISO1: "pa", ISO3: "pan", KLAR: "pun", Scripts: []Script{Gurmukhi, PersoArabic}, Family: IndoAryan, Scheduled: true, CodeMixed: "Punglish", Aliases: []string{"Panjabi"}},
	{Name: "Sanskrit", Native: "संस्कृतम्", ISO1: "sa", ISO3: "san", KLAR: "san", Scripts: []Script{Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Sanglish"},
	{Name: "Santali", Native: "ᱥᱟᱱᱛᱟᱲᱤ", ISO3: "sat", KLAR: "sat", Scripts: []Script{OlChiki}, Family: Austroasiatic, Scheduled: true, CodeMixed: "Santhlish"},
	{Name: "Sindhi", Native: "سنڌي", ISO1: "sd", ISO3: "snd", KLAR: "snd", Scripts: []Script{PersoArabic, Devanagari}, Family: IndoAryan, Scheduled: true, CodeMixed: "Sindlish"},
	{Name: "Tamil", Native: "தமிழ்", ISO1: "ta", ISO3: "tam", KLAR: "tam", Scripts: []Script{Tamil}, Family: Dravidian, Scheduled: true, CodeMixed: "Tamlish", Aliases: []string{"Tanglish"}},
	{Name: "Telugu", Native: "తెలుగు", ISO1: "te", ISO3: "tel", KLAR: "tel", Scripts: []Script{Telugu}, Family: Dravidian, Scheduled: true, CodeMixed: "Teluglish"},
	{Name: "Urdu", Native: "اردو", ISO1: "ur", ISO3: "urd", KLAR: "urd", Scripts: []Script{PersoArabic}, Family: IndoAryan, Scheduled: true, CodeMixed: "Urglish", CodeMixedAlt: "Urlish"},
	{Name: "English", Native: "English", ISO1: "en", ISO3: "eng", KLAR: "en", Scripts: []Script{Latin}, Family: Germanic},
	{Name: "Spanish", Native: "Español", ISO1: "es", ISO3: "spa", KLAR: "es", Scripts: []Script{Latin}, Family: Romance},
	{Name: "Chinese", Native: "中文", ISO1: "zh", ISO3: "zho", KLAR: "zh", Scripts: []Script{Han}, Family: Sinitic, Aliases: []string{"cmn", "Mandarin"}},
	{Name: "Japanese", Native: "日本語", ISO1: "ja", ISO3: "jpn", KLAR: "ja", Scripts: []Script{JapaneseKana}, Family: Japonic},
}

// Registry resolves language names and codes. Build one with New.
type Registry struct {
	langs []Language
	index map[string]int
}

// New returns the registry of every known language.
func New() *Registry {
	r := &Registry{langs: slices.Clone(all), index: map[string]int{}}
	for i, l := range r.langs {
		for _, k := range append([]string{l.Name, l.Native, l.ISO1, l.ISO3, l.KLAR}, l.Aliases...) {
			if k != "" {
				r.index[fold(k)] = i
			}
		}
	}
	return r
}

func fold(s string) string {
	return strings.ToLower(strings.TrimSpace(strings.ReplaceAll(s, "_", "-")))
}

// Lookup resolves a code or name. Unknown input is an error listing the
// nearest known codes and names.
func (r *Registry) Lookup(s string) (Language, error) {
	if l, ok := r.Find(s); ok {
		return l, nil
	}
	return Language{}, fmt.Errorf("unknown language %q; nearest: %s", s, strings.Join(r.near(s, 4), ", "))
}

// Find resolves a code or name as Lookup does, reporting whether it is
// known instead of building an error.
func (r *Registry) Find(s string) (Language, bool) {
	i, ok := r.index[fold(s)]
	if !ok {
		return Language{}, false
	}
	return r.langs[i], true
}

// MustLookup is Lookup for codes fixed in the program; it panics on error.
func (r *Registry) MustLookup(s string) Language {
	l, err := r.Lookup(s)
	if err != nil {
		panic(err)
	}
	return l
}

// near returns the n known keys closest to s by edit distance.
func (r *Registry) near(s string, n int) []string {
	q := fold(s)
	dist := map[string]int{} // "key (Name)" → the key's distance from s
	for k, i := range r.index {
		dist[fmt.Sprintf("%s (%s)", k, r.langs[i].Name)] = textdist.Levenshtein(q, k)
	}
	keys := slices.SortedFunc(maps.Keys(dist), func(a, b string) int { return cmp.Or(dist[a]-dist[b], strings.Compare(a, b)) })
	return keys[:min(n, len(keys))]
}
