package protocol

import (
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/analysis/engine"
	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/datasets/item"
)

// Condition is a distractor condition of the multilingual distractor
// interference study (Marwah et al. 2026).
type Condition string

// The eight conditions.
const (
	Clean     Condition = "clean"
	Spanish   Condition = "es"      // the Spanish note once
	Hindi     Condition = "hi"      // the Hindi note once
	Chinese   Condition = "zh"      // the Chinese note once
	SpanishX3 Condition = "es_long" // the note three times (the paper's "_long")
	HindiX3   Condition = "hi_long"
	ChineseX3 Condition = "zh_long"
	Paragraph Condition = "paragraph" // an unrelated English paragraph
)

// Conditions lists the eight conditions.
var Conditions = []Condition{Clean, Spanish, Hindi, Chinese, SpanishX3, HindiX3, ChineseX3, Paragraph}

// ParseCondition validates a condition name.
func ParseCondition(s string) (Condition, error) {
	for _, c := range Conditions {
		if string(c) == strings.ToLower(strings.TrimSpace(s)) {
			return c, nil
		}
	}
	names := make([]string, len(Conditions))
	for i, c := range Conditions {
		names[i] = string(c)
	}
	return "", fmt.Errorf("unknown condition %q (want one of %s)", s, strings.Join(names, ", "))
}

// MDI builds the distractor-interference requests. TriviaQA items become
// chat requests: the system prompt, then one user message holding the
// distractor (or nothing, when clean), a blank line and the question;
// greedy, 32 new tokens. TruthfulQA items (those with Choices) become one
// completion request per choice scoring the prompt by log-probability
// (echo, max_tokens 0, logprobs 0): the QA primer, a blank line, the
// distractor and a blank line (unless clean), "Q: {question}\nA:" and the
// choice after a space.
type MDI struct {
	Set        *item.Set
	Conditions []Condition
	// Notes override the distractor sentences by language ("es", "hi", "zh");
	// Paragraph overrides the paragraph.
	Notes     map[string]string
	Paragraph string
	// MaxTokens for TriviaQA answers (default 32).
	MaxTokens int
}

func (p *MDI) Stages() int  { return 1 }
func (p *MDI) Blocked() int { return 0 }

// Templates names the templates used.
func (p *MDI) Templates() map[string]string {
	out := map[string]string{}
	for _, n := range []string{"mdi/system.txt", "mdi/note-es.txt", "mdi/note-hi.txt", "mdi/note-zh.txt", "mdi/paragraph.txt", "truthfulqa/primer.txt"} {
		if _, h, err := Template(n); err == nil {
			out[n] = h
		}
	}
	return out
}

func text(name string) (string, error) {
	t, _, err := Template(name)
	return strings.TrimSuffix(t, "\n"), err
}

// Distractor returns the text put before the question in condition c
// ("" when clean).
func (p *MDI) Distractor(c Condition) (string, error) {
	if c == Clean {
		return "", nil
	}
	if c == Paragraph {
		if p.Paragraph != "" {
			return p.Paragraph, nil
		}
		return text("mdi/paragraph.txt")
	}
	l, long := strings.CutSuffix(string(c), "_long")
	note, ok := p.Notes[l]
	if !ok {
		var err error
		if note, err = text("mdi/note-" + l + ".txt"); err != nil {
			return "", err
		}
	}
	if long {
		note = strings.Join([]string{note, note, note}, " ")
	}
	return note, nil
}

// MCContext is the TruthfulQA context before a choice in condition c.
func (p *MDI) MCContext(question string, c Condition) (string, error) {
	primer, err := text("truthfulqa/primer.txt")
	if err != nil {
		return "", err
	}
	d, err := p.Distractor(c)
	if err != nil {
		return "", err
	}
	ctx := primer + "\n\n"
	if d != "" {
		ctx += d + "\n\n"
	}
	return ctx + "Q: " + question + "\nA:", nil
}

// Requests yields one model's requests.
func (p *MDI) Requests(exp, model string, stage int, _ Lookup) iter.Seq2[engine.Request, error] {
	return func(yield func(engine.Request, error) bool) {
		if stage != 1 {
			return
		}
		system, err := text("mdi/system.txt")
		if err != nil {
			yield(engine.Request{}, err)
			return
		}
		maxTok := p.MaxTokens
		if maxTok <= 0 {
			maxTok = 32
		}
		for _, c := range p.Conditions {
			d, err := p.Distractor(c)
			if err != nil {
				yield(engine.Request{}, err)
				return
			}
			for _, it := range p.Set.Items {
				v, ok := it.Variant("eng", item.English)
				if !ok {
					continue
				}
				key := engine.Key{Experiment: exp, Model: model, Item: it.ID, Language: "eng", Form: string(item.English), Condition: string(c)}
				if len(it.Choices) > 0 {
					key.Strategy = "mc1"
					ctx, err := p.MCContext(v.Question, c)
					if err != nil {
						yield(engine.Request{}, err)
						return
					}
					for i, ch := range it.Choices {
						k := key
						k.Stage = "choice-" + strconv.Itoa(i)
						r := engine.Request{Key: k, Kind: engine.Completion, Prompt: ctx + " " + ch,
							Decoding: engine.Decoding{MaxTokens: 0, Temperature: ptr(0.0), Echo: true, Logprobs: ptr(0)}}
						if !yield(r, nil) {
							return
						}
					}
					continue
				}
				key.Strategy = "qa"
				user := v.Question
				if d != "" {
					user = d + "\n\n" + v.Question
				}
				r := engine.Request{Key: key, Kind: engine.Chat,
					Messages: []engine.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
					Decoding: engine.Decoding{MaxTokens: maxTok, Temperature: ptr(0.0)}}
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// Extract takes a TriviaQA answer's first line, trimmed (the study scores
// the short phrase); mc1 records hold log-probabilities, not text.
func (p *MDI) Extract(r *engine.Record) *extract.Result {
	if r.Fields.Strategy == "mc1" {
		return nil
	}
	res := extract.FirstLine(r.Response)
	return &res
}
