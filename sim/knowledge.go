package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/internal/jsonpos"
	"github.com/bhashalab/bhasha/internal/lines"
)

// Fact is one item the simulated models may know, in one language and form.
// The same ID in several languages is the same fact: a simulated model's
// knowledge of it is correlated across them, as in real models.
type Fact struct {
	ID         string   `json:"id"`
	Relation   string   `json:"relation,omitempty"`
	Language   string   `json:"language"`
	Form       string   `json:"form,omitempty"` // native, code-mixed, english, romanized
	Cues       []string `json:"cues"`           // strings that identify the fact in a prompt (subject, question)
	Answer     string   `json:"answer"`         // gold answer in this language and form
	Candidates []string `json:"candidates,omitempty"`
	// Choices are the options of a multiple-choice item; Answer is the correct one.
	Choices []string `json:"choices,omitempty"`
}

// Knowledge indexes facts for lookup in prompts.
type Knowledge struct {
	facts   []Fact
	byStart map[string]*bucket // cues by startKey
	byID    map[string][]int   // the positions of each fact id in facts
}

type cueRef struct {
	fact int
	cue  string
	seq  int // the cue's place in the order the cues were indexed
}

// keyRunes is how many leading runes of a cue its index key holds.
const keyRunes = 4

// bucket holds the cues of one index key by their lowered text, and the
// byte lengths those texts have, longest first.
type bucket struct {
	byCue map[string][]cueRef
	lens  []int
}

// NewKnowledge indexes facts by their cues, each from its first character
// that is neither space nor punctuation to its last non-space. Cues
// shorter than two characters are ignored.
func NewKnowledge(facts []Fact) *Knowledge {
	k := &Knowledge{facts: facts, byStart: map[string]*bucket{}, byID: map[string][]int{}}
	seq := 0
	for i, f := range facts {
		k.byID[f.ID] = append(k.byID[f.ID], i)
		for _, c := range f.Cues {
			c = strings.TrimRightFunc(strings.TrimLeftFunc(c, isSep), unicode.IsSpace)
			if utf8.RuneCountInString(c) < 2 {
				continue
			}
			s := startKey(c)
			b := k.byStart[s]
			if b == nil {
				b = &bucket{byCue: map[string][]cueRef{}}
				k.byStart[s] = b
			}
			low := strings.ToLower(c)
			if _, ok := b.byCue[low]; !ok && !slices.Contains(b.lens, len(low)) {
				b.lens = append(b.lens, len(low))
			}
			b.byCue[low] = append(b.byCue[low], cueRef{fact: i, cue: c, seq: seq})
			seq++
		}
	}
	for _, b := range k.byStart {
		slices.Sort(b.lens)
		slices.Reverse(b.lens)
	}
	return k
}

func isSep(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }

// ReadFacts reads JSON Lines of Fact; name is used in error messages.
func ReadFacts(r io.Reader, name string) ([]Fact, error) {
	sc := lines.New(r, name, 16<<20)
	var out []Fact
	for sc.Scan() {
		n := sc.Line()
		line := strings.TrimSpace(string(sc.Bytes()))
		if line == "" {
			continue
		}
		var f Fact
		if _, key, msg, bad := jsonpos.BadUTF8([]byte(line)); bad {
			return nil, fmt.Errorf("%s line %d field %q: %s", name, n, key, msg)
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, n, err)
		}
		switch {
		case f.ID == "":
			return nil, fmt.Errorf("%s line %d: field \"id\" is empty", name, n)
		case f.Answer == "":
			return nil, fmt.Errorf("%s line %d: field \"answer\" is empty", name, n)
		case len(f.Cues) == 0:
			return nil, fmt.Errorf("%s line %d: field \"cues\" is empty", name, n)
		}
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// startKey is a cue's index key: its first keyRunes runes (all of a
// shorter one), lowered.
func startKey(s string) string {
	n := 0
	for i := range s {
		if n == keyRunes {
			return strings.ToLower(s[:i])
		}
		n++
	}
	return strings.ToLower(s)
}

// Lookup finds the fact whose cue occurs last in text (in few-shot prompts
// the item asked comes after the demonstrations), preferring the longest
// cue at the same position. It returns the fact and the cue's byte offset.
func (k *Knowledge) Lookup(text string) (*Fact, int, bool) {
	best := hit{fact: -1, pos: -1}
	lower := strings.ToLower(text)
	prevSep := true
	for i, r := range lower {
		sep := isSep(r)
		if prevSep && !sep && i+1 < len(lower) {
			// try rest's first 2 to keyRunes runes as keys
			rest := lower[i:]
			runes := 0
			for end := range rest {
				if runes >= 2 {
					k.match(rest, rest[:end], i, &best)
				}
				if runes++; runes > keyRunes {
					break
				}
			}
			if runes >= 2 && runes <= keyRunes {
				k.match(rest, rest, i, &best)
			}
		}
		prevSep = sep
	}
	if best.fact < 0 {
		return nil, 0, false
	}
	return &k.facts[best.fact], best.pos, true
}

// hit is a cue found at byte pos of a text.
type hit struct{ fact, pos, len, seq int }

// match keeps in best the best cue under key at byte i (rest: the text
// from there): the last position, then the longest, then the first indexed.
func (k *Knowledge) match(rest, key string, i int, best *hit) {
	b := k.byStart[key]
	if b == nil {
		return
	}
	for _, n := range b.lens { // rest is lowered: a cue here is rest[:n] lowered
		if n > len(rest) {
			continue
		}
		for _, c := range b.byCue[rest[:n]] {
			if len(c.cue) > len(rest) || !strings.EqualFold(rest[:len(c.cue)], c.cue) {
				continue
			}
			if i > best.pos || (i == best.pos && (len(c.cue) > best.len || (len(c.cue) == best.len && c.seq < best.seq))) {
				*best = hit{c.fact, i, len(c.cue), c.seq}
			}
		}
	}
}

// Variant returns the fact with the same id in language lang, if loaded.
func (k *Knowledge) Variant(id, lang string) (*Fact, bool) {
	for _, i := range k.byID[id] {
		if k.facts[i].Language == lang {
			return &k.facts[i], true
		}
	}
	return nil, false
}
