package sim

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// ModelSpec is one simulated model.
type ModelSpec struct {
	ID          string  `json:"id"`
	ParamsB     float64 `json:"params_b"` // size in billions of parameters: drives accuracy
	MaxModelLen int     `json:"max_model_len"`
}

// DefaultModels are three simulated models of different sizes.
func DefaultModels() []ModelSpec {
	return []ModelSpec{
		{ID: "sim-tiny-1b", ParamsB: 1, MaxModelLen: 4096},
		{ID: "sim-base-8b", ParamsB: 8, MaxModelLen: 8192},
		{ID: "sim-large-70b", ParamsB: 70, MaxModelLen: 8192},
	}
}

// unit maps its arguments to a deterministic number in [0, 1).
func unit(parts ...string) float64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	// FNV alone leaves the high bits nearly unchanged when only the last
	// byte differs; the SplitMix64 finaliser spreads every input bit.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / float64(1<<53)
}

// scriptMix counts letters of the query line: Latin, Indic (Brahmic and
// Perso-Arabic) and Han.
type scriptMix struct{ latin, indic, han int }

func mixOf(s string) scriptMix {
	var m scriptMix
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r):
		case unicode.Is(unicode.Latin, r):
			m.latin++
		case r >= 0x0900 && r <= 0x0DFF, unicode.Is(unicode.Arabic, r), unicode.Is(unicode.Ol_Chiki, r), unicode.Is(unicode.Meetei_Mayek, r):
			m.indic++
		case unicode.Is(unicode.Han, r):
			m.han++
		}
	}
	return m
}

// cue is what a request says of itself outside its prompt text: its
// X-Bhasha-Cue header's cues and its structured_outputs schema's fields.
type cue struct {
	translate bool
	oneWord   bool // a judge's verdict is one word, not a JSON object
	fields    map[string]any
}

func (g *genRequest) cue() cue {
	return cue{translate: slices.Contains(g.cues, engine.CueTranslateFirst), oneWord: slices.Contains(g.cues, engine.CueOneWordVerdict),
		fields: g.StructuredOutputs.JSON.Properties}
}

// features are what the simulated model "notices" in a prompt.
type features struct {
	form          string // english, code-mixed, native: from the scripts of the query line
	queryTokens   int
	translate     bool // the prompt asks to translate first (translate-then-answer, TinT)
	devanagariBit bool // text outside the query line in Devanagari (a distractor note)
	hanBit        bool // text outside the query line in Han
	wantJSON      string
}

func notice(text string, pos int, tok Tokenizer, c cue) features {
	start, end := strings.LastIndexByte(text[:pos], '\n')+1, len(text)
	if i := strings.IndexByte(text[pos:], '\n'); i >= 0 {
		end = pos + i
	}
	line, rest := text[start:end], text[:start]+text[end:]
	m := mixOf(line)
	f := features{queryTokens: tok.Count(line), translate: c.translate}
	switch {
	case m.indic > 0 && m.latin > 0:
		f.form = "code-mixed"
	case m.indic > 0:
		f.form = "native"
	default:
		f.form = "english"
	}
	rm := mixOf(rest)
	f.devanagariBit = f.form == "english" && rm.indic > 0
	f.hanBit = f.form == "english" && rm.han > 0
	_, tr := c.fields["translation"]
	_, an := c.fields["answer"]
	switch {
	case tr && an:
		f.wantJSON = "both" // 1Step: translation and answer in one object
	case tr:
		f.wantJSON = "translation"
	case an:
		f.wantJSON = "answer"
	}
	return f
}

// pCorrect is the probability that model m answers fact correctly:
// sigmoid(-1 + 0.55·ln(size) + form + length + strategy + difficulty), where
// form is 0 (English), -0.6 (code-mixed) or -1.3 (native script), length is
// -0.01 per query token beyond 12, strategy rewards translate-first prompts
// on non-English queries by 0.15·ln(size) - 0.05 (more for larger models),
// and difficulty in [-1.2, 1.2] is shared by every language of the fact.
func pCorrect(m ModelSpec, factID string, f features) float64 {
	x := -1 + 0.55*math.Log(math.Max(m.ParamsB, 0.1))
	switch f.form {
	case "code-mixed":
		x -= 0.6
	case "native":
		x -= 1.3
	}
	x -= 0.01 * math.Max(0, float64(f.queryTokens-12))
	if f.translate && f.form != "english" {
		x += 0.15*math.Log(math.Max(m.ParamsB, 0.1)) - 0.05
	}
	if f.devanagariBit || f.hanBit {
		x -= 0.2
	}
	x += 2.4 * (unit("difficulty", factID) - 0.5)
	return 1 / (1 + math.Exp(-x))
}

// answer decides what model m says about the prompt text; "" with ok=false
// means it does not recognise any fact.
func (s *Server) answer(m ModelSpec, text string, c cue) (string, bool) {
	if s.kb == nil {
		return "", false
	}
	fact, pos, ok := s.kb.Lookup(text)
	if !ok {
		return "", false
	}
	f := notice(text, pos, s.tok, c)
	// Answer in the language of the candidates shown, when they are those
	// of another variant of the fact (a translated question in a two-step
	// strategy's second stage, with native candidates).
	if cands := candidatesAfter(text, pos); len(cands) > 0 && !slices.Contains(cands, fact.Answer) {
		for _, i := range s.kb.byID[fact.ID] {
			if v := &s.kb.facts[i]; slices.Contains(cands, v.Answer) {
				fact = v
				break
			}
		}
	}
	p := pCorrect(m, fact.ID, f)
	u := unit(m.ID, fact.ID, fact.Language, f.form, boolStr(f.translate), boolStr(f.devanagariBit), boolStr(f.hanBit))
	out := fact.Answer
	if u >= p {
		out = s.wrongAnswer(m, fact)
	}
	// A Devanagari distractor: larger models drift into Devanagari, and
	// some of the drifted answers are wrong.
	if f.devanagariBit && !f.hanBit && unit("switch", m.ID, fact.ID) < 0.05+0.08*math.Log(math.Max(m.ParamsB, 1)) {
		switched := Devanagari(out)
		if v, ok := s.kb.Variant(fact.ID, "hin"); ok && out == fact.Answer {
			switched = v.Answer
		}
		if switched != "" {
			out = switched
			if unit("switch-wrong", m.ID, fact.ID) < 0.3 {
				out = Devanagari(s.wrongAnswer(m, fact))
			}
		}
	}
	tr := fact.Answer
	if v, ok := s.kb.Variant(fact.ID, "eng"); ok && len(v.Cues) > 0 {
		tr = v.Cues[0]
	}
	var v any
	switch f.wantJSON {
	case "answer":
		v = map[string]string{"answer": out}
	case "translation":
		v = map[string]string{"translation": tr}
	case "both":
		v = struct {
			Translation string `json:"translation"`
			Answer      string `json:"answer"`
		}{tr, out}
	default:
		return out, true
	}
	b, _ := json.Marshal(v)
	return string(b), true
}

// candidatesAfter returns the comma-separated list on the first
// "Candidates:" line after pos.
func candidatesAfter(text string, pos int) []string {
	i := strings.Index(text[pos:], "Candidates:")
	if i < 0 {
		return nil
	}
	line, _, _ := strings.Cut(text[pos+i+len("Candidates:"):], "\n")
	return klar.SplitCandidates(line)
}

// choiceBonus is 4 for the multiple-choice continuation a model picks
// (the correct one with probability pCorrect), else 0.
func (s *Server) choiceBonus(m ModelSpec, prompt string) float64 {
	if s.kb == nil {
		return 0
	}
	i := strings.LastIndex(prompt, "\nA: ")
	if i < 0 {
		return 0
	}
	fact, pos, ok := s.kb.Lookup(prompt[:i])
	if !ok || len(fact.Choices) == 0 {
		return 0
	}
	choice := prompt[i+len("\nA: "):]
	f := notice(prompt[:i], pos, s.tok, cue{})
	knows := unit("mc", m.ID, fact.ID, boolStr(f.devanagariBit), boolStr(f.hanBit)) < pCorrect(m, fact.ID, f)
	wrong := fact.Choices[1+int(unit("mc-wrong", m.ID, fact.ID)*float64(len(fact.Choices)-1))%max(1, len(fact.Choices)-1)]
	if (knows && choice == fact.Answer) || (!knows && choice == wrong) {
		return 4
	}
	return 0
}

// wrongAnswer picks a deterministic wrong answer: another candidate, else
// another fact's answer of the same relation and language, else "unknown".
func (s *Server) wrongAnswer(m ModelSpec, f *Fact) string {
	var pool []string
	for _, c := range f.Candidates {
		if c = strings.TrimSpace(c); c != "" && c != f.Answer {
			pool = append(pool, c)
		}
	}
	if facts := s.kb.facts; len(pool) == 0 && len(facts) >= 2 {
		for i := 1; i <= 20 && len(pool) < 5; i++ { // up to 5 peers in 20 draws
			o := &facts[int(unit("peer", m.ID, f.ID, string(rune('a'+i)))*float64(len(facts)))]
			if o.ID != f.ID && o.Language == f.Language && o.Form == f.Form && o.Relation == f.Relation && o.Answer != f.Answer {
				pool = append(pool, o.Answer)
			}
		}
	}
	if len(pool) == 0 {
		return "unknown"
	}
	return pool[int(unit("wrong", m.ID, f.ID, f.Language)*float64(len(pool)))]
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// judgeVerdict answers a judge request: semanticVerdict, or IndicQuest's
// JSON {"is_correct", "reasoning"} from the prompt's gold and answer lines.
func judgeVerdict(text string, semantic bool) string {
	if semantic {
		return semanticVerdict(text)
	}
	var gold, ans string
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.ToLower(strings.TrimSpace(v))
		switch {
		case strings.Contains(k, "ground truth"), strings.Contains(k, "gold"), strings.Contains(k, "reference"):
			gold = v
		case strings.Contains(k, "answer"), strings.Contains(k, "response"):
			ans = v
		}
	}
	ok := gold != "" && ans != "" && (strings.Contains(ans, gold) || strings.Contains(gold, ans))
	reason := "The given answer does not match the ground truth."
	if ok {
		reason = "The given answer names the same entity as the ground truth."
	}
	b, _ := json.Marshal(map[string]any{"is_correct": ok, "reasoning": reason + " (simulated judge)"})
	return string(b)
}

// semanticVerdict is ABSTAIN, CORRECT (exact or transliteration-aware
// match of a gold) or WRONG.
func semanticVerdict(text string) string {
	var golds []string
	var answer string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "Gold answers:"):
			for _, g := range strings.Split(strings.TrimPrefix(line, "Gold answers:"), ";") {
				if g = strings.TrimSpace(g); g != "" {
					golds = append(golds, g)
				}
			}
		case strings.HasPrefix(line, "Answer:"):
			answer = strings.TrimSpace(strings.TrimPrefix(line, "Answer:"))
		}
	}
	low := strings.ToLower(answer)
	switch {
	case answer == "" || strings.Contains(low, "don't know") || strings.Contains(answer, "नहीं पता") || strings.Contains(answer, "不知道"):
		return "ABSTAIN"
	case match.ExactMatch(answer, golds) || match.Translit(answer, golds):
		return "CORRECT"
	}
	return "WRONG"
}
