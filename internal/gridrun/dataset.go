package gridrun

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/bhashalab/bhasha/datasets/lang"
)

// Relations are IndicKLAR's 20 relations (PROTOCOLS.md §1.2), in the
// release's order.
var Relations = []string{"applies_to_jurisdiction", "capital", "capital_of", "continent", "country_of_citizenship",
	"developer", "field_of_work", "headquarters_location", "instrument", "language_of_work_or_name", "languages_spoken",
	"location_of_formation", "manufacturer", "native_language", "occupation", "official_language", "owned_by",
	"place_of_birth", "place_of_death", "religion"}

// PaperLanguages are the 18 Indian languages of the IndicKLAR paper and
// English, as its main experiment names them (experiments/paper/indicklar-main.yaml).
var PaperLanguages = []string{"as", "bn", "doi", "gu", "hi", "kn", "gom", "mai", "ml", "mr", "ne", "or", "pa", "sa", "sd", "ta", "te", "ur", "en"}

// codeMixed are the 11 languages the release has a code-mixed directory
// for (<code>-en: asm ben guj hin mal mar ori pun san tam tel).
var codeMixed = map[string]bool{"asm": true, "ben": true, "guj": true, "hin": true, "mal": true, "mar": true, "ori": true,
	"pun": true, "san": true, "tam": true, "tel": true}

// objectsPerRelation is the size of each relation's object vocabulary:
// facts of one relation share objects, and their candidates are drawn
// from it, as the release's are.
const objectsPerRelation = 40

// dataLanguage is one directory of the dataset.
type dataLanguage struct {
	dir    string // hin, hin-en, en
	native []rune // letters of the language's main script ("" for English)
	mixed  bool   // code-mixed: native grammar words, English content words
}

// WriteDataset writes a generated dataset in the IndicKLAR release format
// (ROOT/<lang>/<relation>.json, <lang>-en/ for the code-mixed form, en/ for
// English; {"prompt_templates": [...], "samples": [{"index", "subject",
// "object", "object_candidates"}]}, candidates one comma-separated string
// with the gold last) to root, for the languages given (codes the
// registry accepts). Facts are numbered 1..facts and dealt to the first
// relations round-robin (to as many as there are facts, when fewer);
// every fact exists in every language and form.
// Subjects and objects are pseudo-words, spelled in each language's main
// script from one Latin spelling (so a fact's forms correspond), of the
// release's lengths; the English templates ask the relation in words, the
// native ones in pseudo-words of the script, the code-mixed ones mix both.
// The same arguments write the same bytes.
func WriteDataset(root string, facts, relations int, languages []string) error {
	if facts < 1 || relations < 1 || relations > len(Relations) {
		return fmt.Errorf("generating a dataset: %d facts over %d relations (want at least 1 fact, 1 to %d relations)", facts, relations, len(Relations))
	}
	relations = min(relations, facts) // every relation written has a fact
	reg := lang.New()
	var dirs []dataLanguage
	for _, code := range languages {
		l, err := reg.Lookup(code)
		if err != nil {
			return fmt.Errorf("generating a dataset: %w", err)
		}
		if l.ISO3 == "eng" {
			dirs = append(dirs, dataLanguage{dir: "en"})
			continue
		}
		letters, err := scriptLetters(l)
		if err != nil {
			return err
		}
		dirs = append(dirs, dataLanguage{dir: l.KLAR, native: letters})
		if codeMixed[l.KLAR] {
			dirs = append(dirs, dataLanguage{dir: l.KLAR + "-en", native: letters, mixed: true})
		}
	}
	type sample struct {
		Index      int    `json:"index"`
		Subject    string `json:"subject"`
		Object     string `json:"object"`
		Candidates string `json:"object_candidates"`
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d.dir), 0o755); err != nil {
			return fmt.Errorf("generating a dataset: %w", err)
		}
		for r := range relations {
			rel := Relations[r]
			var samples []sample
			for id := r + 1; id <= facts; id += relations {
				obj := objectOf(rel, id)
				cands := make([]string, 0, 10)
				for _, o := range candidatesOf(rel, id, obj) {
					cands = append(cands, d.spell(o, true))
				}
				cands = append(cands, d.spell(obj, true))
				samples = append(samples, sample{Index: id, Subject: d.spell(subjectOf(rel, id), false), Object: d.spell(obj, true), Candidates: strings.Join(cands, ", ")})
			}
			b, err := json.MarshalIndent(struct {
				Templates []string `json:"prompt_templates"`
				Samples   []sample `json:"samples"`
			}{[]string{d.template(rel)}, samples}, "", " ")
			if err != nil {
				return err
			}
			p := filepath.Join(root, d.dir, rel+".json")
			if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
				return fmt.Errorf("generating a dataset: %w", err)
			}
		}
	}
	return nil
}

// scriptLetters are the letters (category Lo) of l's main script.
func scriptLetters(l lang.Language) ([]rune, error) {
	if len(l.Scripts) == 0 {
		return nil, fmt.Errorf("generating a dataset: %s has no script", l.Name)
	}
	tab, ok := unicode.Scripts[string(l.Scripts[0])]
	if !ok {
		return nil, fmt.Errorf("generating a dataset: no Unicode script %q for %s", l.Scripts[0], l.Name)
	}
	var out []rune
	for _, rg := range tab.R16 {
		for c := rune(rg.Lo); c <= rune(rg.Hi); c += rune(rg.Stride) {
			if unicode.In(c, unicode.Lo) {
				out = append(out, c)
			}
		}
	}
	if len(out) < 26 {
		return nil, fmt.Errorf("generating a dataset: the %s script has %d letters", l.Scripts[0], len(out))
	}
	return out[:26], nil
}

// hash64 is FNV-1a over the parts.
func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// word is a pseudo-word of 4 to 9 Latin letters, a deterministic function
// of its seed.
func word(seed ...string) string {
	const cons, vows = "bcdfghjklmnprstvz", "aeiou"
	x := hash64(seed...)
	n := 4 + int(x%6)
	var sb strings.Builder
	for i := range n {
		x = x*6364136223846793005 + 1442695040888963407
		if i%2 == 0 {
			sb.WriteByte(cons[(x>>33)%uint64(len(cons))])
		} else {
			sb.WriteByte(vows[(x>>33)%uint64(len(vows))])
		}
	}
	s := sb.String()
	return strings.ToUpper(s[:1]) + s[1:]
}

// subjectOf is fact id's subject (two words, as "Parliament of Canada" or
// a person's name), objectOf its object (one of the relation's objects).
func subjectOf(rel string, id int) string {
	return word(rel, strconv.Itoa(id), "s1") + " " + word(rel, strconv.Itoa(id), "s2")
}

func objectOf(rel string, id int) string {
	return word(rel, "object", strconv.Itoa(int(hash64(rel, strconv.Itoa(id))%objectsPerRelation)))
}

// candidatesOf are nine objects of the relation other than obj.
func candidatesOf(rel string, id int, obj string) []string {
	var out []string
	for k := 0; len(out) < 9; k++ {
		o := word(rel, "object", strconv.Itoa(int(hash64(rel, strconv.Itoa(id), "cand", strconv.Itoa(k))%objectsPerRelation)))
		if o != obj && !contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// spell writes a Latin pseudo-word phrase in the directory's script: each
// letter maps to one of the script's letters (English, and the English
// content words of a code-mixed object, stay Latin).
func (d dataLanguage) spell(s string, content bool) string {
	if d.native == nil || (d.mixed && content) {
		return s
	}
	var sb strings.Builder
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' {
			sb.WriteRune(d.native[c-'a'])
		} else {
			sb.WriteRune(c)
		}
	}
	return sb.String()
}

// template is the relation's question with <subject> and <mask>: English
// words for English, pseudo-words of the script for a native form, and a
// native frame around English content words and cue for a code-mixed one.
func (d dataLanguage) template(rel string) string {
	words := strings.ReplaceAll(rel, "_", " ")
	switch {
	case d.native == nil:
		return "What is the " + words + " of <subject>? The answer is: <mask>"
	case d.mixed:
		return "<subject> " + d.spell(word(d.dir, rel, "t1"), false) + " " + words + " " + d.spell(word(d.dir, rel, "t2"), false) + "? The answer is: <mask>"
	}
	frame := make([]string, 0, 5)
	for i := range 5 {
		frame = append(frame, d.spell(word(d.dir, rel, "t", strconv.Itoa(i)), false))
	}
	return "<subject> " + strings.Join(frame[:3], " ") + "? " + strings.Join(frame[3:], " ") + ": <mask>"
}
