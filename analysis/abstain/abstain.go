// Package abstain detects answers that decline to answer ("I don't know"),
// in English and 16 other languages of the studies, so that an abstention
// written in the response's own script counts as an abstention.
package abstain

import (
	"slices"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/analysis/normalize"
)

// Phrases are the built-in abstention phrases per language (ISO 639-3).
// A response abstains when, normalised, it contains any phrase of any
// language. The English list holds the distractor study's two printed
// phrases ("i don't know", "unknown") and Bhasha's reading of its
// unpublished "related phrases" (the other 11).
var Phrases = map[string][]string{
	"eng": {"i don't know", "i do not know", "i dont know", "unknown", "not sure", "i'm not sure", "i am not sure", "no idea",
		"cannot answer", "can't answer", "unable to answer", "i cannot determine", "not known"},
	"hin": {"मुझे नहीं पता", "पता नहीं", "मालूम नहीं", "मैं नहीं जानता", "मैं नहीं जानती", "अज्ञात", "नहीं मालूम"},
	"ben": {"আমি জানি না", "জানি না", "অজানা"},
	"asm": {"মই নাজানো", "নাজানো", "অজ্ঞাত"},
	"guj": {"મને ખબર નથી", "ખબર નથી", "અજ્ઞાત"},
	"mar": {"मला माहित नाही", "माहित नाही", "माहीत नाही", "अज्ञात"},
	"pan": {"ਮੈਨੂੰ ਨਹੀਂ ਪਤਾ", "ਪਤਾ ਨਹੀਂ", "ਅਣਜਾਣ"},
	"ory": {"ମୁଁ ଜାଣେ ନାହିଁ", "ଜାଣେ ନାହିଁ", "ଅଜ୍ଞାତ"},
	"tam": {"எனக்குத் தெரியாது", "தெரியாது", "தெரியவில்லை"},
	"tel": {"నాకు తెలియదు", "తెలియదు", "తెలీదు"},
	"kan": {"ನನಗೆ ಗೊತ್ತಿಲ್ಲ", "ಗೊತ್ತಿಲ್ಲ", "ತಿಳಿದಿಲ್ಲ"},
	"mal": {"എനിക്കറിയില്ല", "അറിയില്ല"},
	"urd": {"مجھے نہیں معلوم", "معلوم نہیں", "پتہ نہیں"},
	"nep": {"मलाई थाहा छैन", "थाहा छैन"},
	"san": {"न जानामि", "अहं न जानामि"},
	"spa": {"no sé", "no lo sé", "desconocido"},
	"zho": {"我不知道", "不知道", "未知"},
}

// Detector holds phrase lists; the zero value is not usable, use New.
type Detector struct {
	phrases []string // normalised, longest first
}

// New builds a detector from the built-in phrases of every language plus
// extra ones (language → phrases, e.g. from an experiment file).
func New(extra map[string][]string) *Detector { return NewFor(nil, extra) }

// English is the English phrases alone (Phrases["eng"]: "I don't know",
// "unknown" and related phrases, the distractor study's default rule),
// plus extra ones.
func English(extra map[string][]string) *Detector { return NewFor([]string{"eng"}, extra) }

// NewFor builds a detector from the built-in phrases of the languages
// named (ISO 639-3; nil: every language) plus every extra phrase.
func NewFor(languages []string, extra map[string][]string) *Detector {
	seen := map[string]bool{}
	d := &Detector{}
	add := func(ps []string) {
		for _, p := range ps {
			n := normalize.Default.String(p)
			if n != "" && !seen[n] {
				seen[n] = true
				d.phrases = append(d.phrases, n)
			}
		}
	}
	for l, ps := range Phrases {
		if languages == nil || slices.Contains(languages, l) {
			add(ps)
		}
	}
	for _, ps := range extra {
		add(ps)
	}
	sort.Slice(d.phrases, func(i, j int) bool { return len(d.phrases[i]) > len(d.phrases[j]) })
	return d
}

// Abstains reports whether response contains an abstention phrase, and
// which (the longest found).
func (d *Detector) Abstains(response string) (bool, string) {
	n := " " + normalize.Default.String(response) + " "
	for _, p := range d.phrases {
		if strings.Contains(n, p) {
			return true, p
		}
	}
	return false, ""
}
