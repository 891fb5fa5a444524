package indicklar

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"iter"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/translit"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/studies/protocol"
)

// Protocol builds the IndicKLAR requests the way the authors'
// Evaluation_Scripts do (PROTOCOLS.md §1): raw completion prompts,
// demonstrations from the same relation and language (excluded), greedy
// decoding with each strategy's token limit and JSON schema (decoding).
// Baselines run on every form asked; the other strategies on native
// questions only.
type Protocol struct {
	Set        *study.Items
	Languages  []lang.Language // Indic languages to ask (English is added when the english form is asked)
	Forms      []study.Form
	Strategies []Strategy
	// Seed drives demonstration sampling (authors: 12345).
	Seed int64
	// PromptOptions, but ShuffleCandidates, which the dataset's reading
	// applies.
	PromptOptions
	// LenientJSON reads JSON answers by extract.Field instead of the
	// authors' rule (extract.Authors); it never changes the requests.
	LenientJSON bool

	once     sync.Once
	byID     map[string]itemAt    // an item and its English variant's number (-1: none)
	at       map[[3]string]int32  // item id, language, form → its first variant's number
	variants []*study.Variant     // every item's variants, numbered
	headers  map[headerKey]string // the headers made so far, placeholders filled
}

// headerKey names a prompt header: its template and placeholder values.
type headerKey struct {
	template                   string
	strategy                   Strategy
	lang                       string // ISO 639-3
	scriptNames, readmeCMNames bool
}

// Stages is 2 when a two-step strategy is asked, else 1.
func (p *Protocol) Stages() int {
	n := 1
	for _, s := range p.Strategies {
		n = max(n, s.Stages())
	}
	return n
}

// Templates names the templates the configured strategies use.
func (p *Protocol) Templates() map[string]string {
	out := map[string]string{}
	for _, s := range p.Strategies {
		for st := 1; st <= s.Stages(); st++ {
			if f, _ := strategyOf(s, st, p.PaperWording); f != "" {
				if _, h, err := study.Template(f); err == nil {
					out[f] = h
				}
			}
		}
	}
	return out
}

// strategyOf is the header template of a strategy and stage ("" for none;
// the paper's wording when paper is set) and the authors' decoding for it.
func strategyOf(s Strategy, stage int, paper bool) (template string, d study.Decoding) {
	dir := "indicklar/"
	if paper {
		dir = "indicklar/paper/"
	}
	d.Temperature = new(0.0)
	switch s {
	case Baseline:
		d.MaxTokens = 10
	case BaselineCands, EntityEN, ContextEN, Romanized:
		d.MaxTokens, d.Stop = 10, []string{"\n", "Answer"}
	case TinTCM, TinTEN:
		template, d.MaxTokens, d.StructuredOutputs = dir+string(s)+".txt", 80, protocol.Schema("answer")
	case OneStepCM, OneStepEN:
		template, d.MaxTokens, d.StructuredOutputs = dir+string(s)+".txt", 120, protocol.Schema("translation", "answer")
	case TwoStepCM, TwoStepEN, TwoStepTranslit:
		field := "answer"
		if stage == 1 {
			field = "translation"
		}
		template, d.MaxTokens, d.StructuredOutputs = fmt.Sprintf("%s%s-stage%d.txt", dir, s, stage), 60, protocol.Schema(field)
		if s == TwoStepTranslit && stage != 1 {
			template = dir + "2step-cm-stage2.txt"
		}
	case CoT, CoTCands:
		template, d.MaxTokens, d.StructuredOutputs = "indicklar/cot.txt", 160, protocol.Schema("reasoning", "answer")
	}
	return template, d
}

type slot struct {
	lang lang.Language
	form study.Form
}

// slots lists the (language, form) pairs a strategy asks.
func (p *Protocol) slots(s Strategy) []slot {
	var out []slot
	english := slices.Contains(p.Forms, study.English)
	for _, l := range p.Languages {
		if l.ISO3 == "eng" {
			english = true
			continue
		}
		for _, f := range p.Forms {
			if f == study.English || (s != Baseline && s != BaselineCands && f != study.Native) {
				continue
			}
			out = append(out, slot{l, f})
		}
	}
	if english && (s == Baseline || s == BaselineCands) {
		out = append(out, slot{lang.New().MustLookup("eng"), study.English})
	}
	return out
}

// DefaultShots is the number of demonstrations a prompt shows when none
// is set (the authors' code).
const DefaultShots = 3

// shotsOrDefault is the number of demonstrations in force for the
// option's value n: n, or DefaultShots when n is not set (0).
func shotsOrDefault(n int) int { return cmp.Or(max(n, 0), DefaultShots) }

// Requests yields one model's requests of one stage.
func (p *Protocol) Requests(exp, model string, stage int, prior study.Lookup) iter.Seq2[study.Request, error] {
	shots := shotsOrDefault(p.Shots)
	return func(yield func(study.Request, error) bool) {
		pools := p.pools()
		for _, s := range p.Strategies {
			if stage > s.Stages() {
				continue
			}
			_, d := strategyOf(s, stage, p.PaperWording)
			if p.MaxTokens > 0 {
				d.MaxTokens = p.MaxTokens
			}
			for _, sl := range p.slots(s) {
				for _, it := range p.Set.Items {
					v, ok := it.Variant(sl.lang.ISO3, sl.form)
					if !ok || v.Question == "" {
						continue
					}
					key := study.Key{Experiment: exp, Model: model, Item: it.ID, Language: sl.lang.ISO3, Form: string(sl.form), Strategy: string(s)}
					if s.Stages() == 2 && stage == 1 {
						key.Role = study.Translation()
					}
					pool := pools[p.poolKey(s, it.Relation, sl)]
					demos := p.demos(s, pool, it.ID, sl, shots)
					prompt, err := p.prompt(s, stage, sl.lang, v, demos, key, prior)
					if err != nil {
						if !yield(study.Request{}, err) {
							return
						}
						continue
					}
					if prompt == "" {
						if !s.Ablation() { // stage 1 has no answer yet
							if !yield(study.Request{Key: key}, protocol.ErrWithheld) {
								return
							}
						}
						continue
					}
					r := study.Request{Key: key, Kind: study.Completion, Prompt: prompt, Decoding: d}
					if s.Target() != "" {
						r.Cues = []string{study.CueTranslateFirst}
					}
					if p.Chat {
						r.Kind, r.Prompt = study.Chat, ""
						r.Messages = []study.Message{{Role: "user", Content: prompt}}
					}
					if !yield(r, nil) {
						return
					}
				}
			}
		}
	}
}

type poolKey struct {
	relation, lang string
	form           study.Form
}

type demo struct {
	id string
	v  *study.Variant
}

func (p *Protocol) pools() map[poolKey][]demo {
	out := map[poolKey][]demo{}
	for _, it := range p.Set.Items {
		for i := range it.Variants {
			v := &it.Variants[i]
			if v.Question == "" {
				continue
			}
			k := poolKey{it.Relation, v.Language, v.Form}
			out[k] = append(out[k], demo{it.ID, v})
		}
	}
	return out
}

// poolKey is strategy s's demonstration pool for an item of relation in
// slot sl (DemosFromEnglish: the relation's English split, not for ablations).
func (p *Protocol) poolKey(s Strategy, relation string, sl slot) poolKey {
	if p.DemosFromEnglish && !s.Ablation() {
		return poolKey{relation, "eng", study.English}
	}
	return poolKey{relation, sl.lang.ISO3, sl.form}
}

// demos draws n demonstrations for item testID of strategy s from pool
// by a partial Fisher-Yates shuffle seeded by the seed, item, language and
// form, leaving out the item, or in a 2Step strategy without
// DemosExcludeItem the position of its numeric KLAR index, as the authors'
// code does.
func (p *Protocol) demos(s Strategy, pool []demo, testID string, sl slot, n int) []demo {
	var skip []int // the pool positions left out, ascending
	if k, err := strconv.Atoi(testID); s.Stages() == 2 && !p.DemosExcludeItem {
		if err == nil && k >= 0 && k < len(pool) {
			skip = []int{k}
		}
	} else {
		for i, d := range pool {
			if d.id == testID {
				skip = append(skip, i)
			}
		}
	}
	// A partial Fisher-Yates shuffle of the candidates, without copying
	// the pool: O(n·(n+len(skip))).
	m := len(pool) - len(skip)
	pos := func(k int) int { // the pool position of candidate k
		for _, s := range skip {
			if s > k {
				break
			}
			k++
		}
		return k
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%s", testID, sl.lang.ISO3, sl.form)
	r := rand.New(rand.NewPCG(uint64(p.Seed), h.Sum64()))
	n = min(n, m)
	type moved struct{ at, cand int }
	var swaps []moved // candidate now at position at, where it is not at itself
	get := func(at int) int {
		for i := len(swaps) - 1; i >= 0; i-- {
			if swaps[i].at == at {
				return swaps[i].cand
			}
		}
		return at
	}
	out := make([]demo, n)
	for i := range n {
		j := i + r.IntN(m-i)
		ci, cj := get(i), get(j)
		swaps = append(swaps, moved{i, cj}, moved{j, ci})
		out[i] = pool[pos(cj)]
	}
	return out
}

// placeholders fills SOURCE_LANG, SOURCE_SCRIPT and TARGET_LANG.
func (p *Protocol) placeholders(s Strategy, l lang.Language) *strings.Replacer {
	script := l.Name
	if p.ScriptNames {
		script = string(l.Script())
	}
	target := ""
	switch s.Target() {
	case "cm":
		target = l.CodeMixed
		if p.ReadmeCMNames && l.CodeMixedAlt != "" {
			target = l.CodeMixedAlt
		}
	case "en":
		target = "English"
	case "translit":
		target = "Transliterated"
	}
	return strings.NewReplacer("{SOURCE_LANG}", l.Name, "{SOURCE_SCRIPT}", script, "{TARGET_LANG}", target)
}

func (p *Protocol) prompt(s Strategy, stage int, l lang.Language, v *study.Variant, demos []demo, key study.Key, prior study.Lookup) (string, error) {
	var sb promptBuilder
	if !s.JSON() { // the cloze format of the baselines and ablations
		q, _, cands, ok := p.cloze(s, key.Item, v)
		if !ok {
			return "", nil
		}
		sb.Grow(128 * (len(demos) + 1))
		for _, d := range demos {
			if dq, dg, _, ok := p.cloze(s, d.id, d.v); ok {
				sb.add(dq, " ", dg, "\n")
			}
		}
		sb.add(q)
		if len(cands) > 0 {
			sb.add("\nCandidates: ", strings.Join(cands, ", "), "\nAnswer:")
		}
		return sb.String(), nil
	}
	name, _ := strategyOf(s, stage, p.PaperWording)
	hk := headerKey{name, s, l.ISO3, p.ScriptNames, p.ReadmeCMNames}
	header, ok := p.headers[hk]
	if !ok {
		text, _, err := study.Template(name)
		if err != nil {
			return "", err
		}
		header = p.placeholders(s, l).Replace(text)
		if p.headers == nil {
			p.headers = map[headerKey]string{}
		}
		p.headers[hk] = header
	}
	sb.Grow(len(header) + 256*(len(demos)+1))
	sb.add(header)
	switch {
	case s.Stages() == 2 && stage == 1:
		if s != TwoStepEN && !p.PaperWording {
			sb.add("\n") // the empty dictionary hint's newline
		}
		sb.add("Q: ", v.Question, "\nOutput:")
		return sb.String(), nil
	case s == CoT || s == CoTCands:
		for _, d := range demos {
			sb.add("Q: ", d.v.Question, "\nOutput: {\"reasoning\": \"...\", \"answer\": \"", d.v.Answer, "\"}\n\n")
		}
		sb.add("Q: ", v.Question)
		if s == CoTCands && len(v.Candidates) > 0 {
			sb.add("\nCandidates: ", strings.Join(v.Candidates, ", "))
		}
		sb.add("\nOutput:")
		return sb.String(), nil
	}
	for _, d := range demos {
		shown := d.v.Answer // a demonstration without candidates shows its answer
		if len(d.v.Candidates) > 0 {
			shown = strings.Join(d.v.Candidates, ", ")
		}
		sb.add("Q: ", d.v.Question, "\nCandidates: ", shown, "\nOutput: {\"answer\": \"", d.v.Answer, "\"}\n\n")
	}
	q := v.Question
	if s.Stages() == 2 {
		k1 := key
		k1.Role = study.Translation()
		rec, ok := prior(k1)
		if !ok || rec.Status != study.StatusOK {
			return "", nil
		}
		// the first stage's "translation" by the authors' rule, else its whole output, trimmed
		r := extract.Authors(rec.Response, "translation")
		if q = r.Fallback; r.OK() && !r.Null {
			q = r.Value
		}
	}
	sb.add("Q: ", q, "\nCandidates: ", strings.Join(v.Candidates, ", "), "\nOutput:")
	return sb.String(), nil
}

// promptBuilder writes a prompt's parts without joining them first.
type promptBuilder struct{ strings.Builder }

func (b *promptBuilder) add(parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
}

// Extract reads a response as the authors' code does: the first line for
// the baselines, else the JSON "translation" field of a first stage or
// "answer" field of an answer (extract.Authors; with LenientJSON,
// extract.Field), answers checked against the item's candidates.
func (p *Protocol) Extract(r *study.Record) *study.ExtractResult {
	st, err := ParseStrategy(r.Fields.Strategy)
	if err != nil {
		return nil
	}
	k := parsingOf(st, r, p.LenientJSON)
	res := parse(k)
	if _, n, _ := p.locate(r.Fields.Item, r.Fields.Language, r.Fields.Form); n >= 0 && st != Baseline && k.field != "translation" {
		res = extract.Candidates(res, p.variants[n].Candidates)
	}
	return &res
}

// parsing is how a response is read before its candidates are checked.
type parsing struct {
	field    string // the JSON field read; "": the first line
	lenient  bool   // extract.Field, else extract.Authors
	response string
}

// parsingOf is how r, of strategy st, is read under one JSON rule.
func parsingOf(st Strategy, r *study.Record, lenient bool) parsing {
	switch {
	case !st.JSON():
		return parsing{response: r.Response}
	case r.Fields.Role.Kind == study.RoleTranslation:
		return parsing{field: "translation", lenient: lenient, response: r.Response}
	}
	return parsing{field: "answer", lenient: lenient, response: r.Response}
}

// parse reads a response as k says (a function of k alone).
func parse(k parsing) study.ExtractResult {
	switch {
	case k.field == "":
		return study.ExtractFirstLine(k.response)
	case k.lenient:
		return study.ExtractField(k.response, k.field)
	}
	return extract.Authors(k.response, k.field)
}

// item finds an item by id (nil: none).
func (p *Protocol) item(id string) *study.Item {
	p.index()
	return p.byID[id].it
}

// itemAt is an indexed item and its English variant's number (-1: none).
type itemAt struct {
	it *study.Item
	en int32
}

// locate finds item id (nil: none), the number of its variant in lang and
// form (-1: none) and of its English variant (-1: none).
func (p *Protocol) locate(id, lang, form string) (it *study.Item, n, en int32) {
	p.index()
	at, ok := p.byID[id]
	if !ok {
		return nil, -1, -1
	}
	if n, ok := p.at[[3]string{id, lang, form}]; ok {
		return at.it, n, at.en
	}
	return at.it, -1, at.en
}

// index numbers the variants; an id met again keeps its first variant of
// each language and form but takes the later item and its English variant.
func (p *Protocol) index() {
	p.once.Do(func() {
		p.byID, p.at = make(map[string]itemAt, len(p.Set.Items)), map[[3]string]int32{}
		for _, it := range p.Set.Items {
			at := itemAt{it, -1}
			for i := range it.Variants {
				v := &it.Variants[i]
				n := int32(len(p.variants))
				p.variants = append(p.variants, v)
				if at.en < 0 && v.Language == "eng" && v.Form == study.English {
					at.en = n
				}
				if _, ok := p.at[[3]string{it.ID, v.Language, string(v.Form)}]; !ok {
					p.at[[3]string{it.ID, v.Language, string(v.Form)}] = n
				}
			}
			p.byID[it.ID] = at
		}
	})
}

// cloze is the question, gold and candidates shown for variant v of item
// id in a cloze prompt of s, ablated as s says; ok is false when the item
// lacks what ablation s needs.
func (p *Protocol) cloze(s Strategy, id string, v *study.Variant) (q, gold string, cands []string, ok bool) {
	switch s {
	case Baseline:
		return v.Question, v.Answer, nil, true
	case Romanized: // the native question romanized; native gold
		return translit.Roman(v.Question), v.Answer, v.Candidates, v.Question != ""
	case EntityEN, ContextEN:
		it := p.item(id)
		if it == nil {
			return "", "", nil, false
		}
		switch en, hasEN := it.Variant("eng", study.English); {
		case !hasEN:
		case s == EntityEN && en.Subject != "" && v.Template != "": // native template, English subject; native gold
			return klar.Fill(v.Template, en.Subject), v.Answer, v.Candidates, true
		case s == ContextEN && en.Template != "" && v.Subject != "": // English template, native subject; English gold
			return klar.Fill(en.Template, v.Subject), en.Answer, en.Candidates, true
		}
		return "", "", nil, false
	}
	return v.Question, v.Answer, v.Candidates, true
}
