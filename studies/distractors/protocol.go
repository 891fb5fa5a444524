package distractors

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/script"
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

// The distractor study's two answer formats, recorded as the key's
// strategy: a generated TriviaQA answer, and TruthfulQA's MC1 scored from
// the log-likelihood of each choice (one request per choice, role
// engine.Choice(i)).
const (
	StrategyQA  = "qa"
	StrategyMC1 = "mc1"
)

// Conditions lists the eight conditions.
var Conditions = []Condition{Clean, Spanish, Hindi, Chinese, SpanishX3, HindiX3, ChineseX3, Paragraph}

// ParseCondition validates a condition name.
func ParseCondition(s string) (Condition, error) {
	names := conditionNames()
	if i := slices.Index(names, strings.ToLower(strings.TrimSpace(s))); i >= 0 {
		return Conditions[i], nil
	}
	return "", fmt.Errorf("unknown condition %q (want one of %s)", s, strings.Join(names, ", "))
}

// conditionNames are the names of Conditions, in their order.
func conditionNames() []string {
	names := make([]string, len(Conditions))
	for i, c := range Conditions {
		names[i] = string(c)
	}
	return names
}

// Protocol builds the distractor-interference requests. TriviaQA items become
// chat requests: the system prompt, then one user message holding the
// distractor (or nothing, when clean), a blank line and the question;
// greedy, 32 new tokens. TruthfulQA items (those with Choices) become one
// completion request per choice scoring the prompt by log-probability
// (echo, max_tokens 0, logprobs 0): the QA primer, a blank line, the
// distractor and a blank line (unless clean), "Q: {question}\nA:" and the
// choice after a space.
type Protocol struct {
	Set        *study.Items
	Conditions []Condition
	// Notes override the distractor sentences by language ("es", "hi", "zh");
	// Paragraph overrides the paragraph.
	Notes     map[string]string
	Paragraph string
	// MaxTokens for TriviaQA answers (default 32).
	MaxTokens int
	// Judge, when set, names the semantic judge that stage 2 asks about
	// every answer written (partly) in Devanagari or Han, whatever the
	// condition and whatever the clean outcome.
	Judge string
	// JudgeDecoding replaces the judge's decoding (default temperature 0, 8 tokens).
	JudgeDecoding *study.Decoding
}

// Stages is 2 with a semantic judge, else 1.
func (p *Protocol) Stages() int {
	if p.Judge != "" {
		return 2
	}
	return 1
}

// NeedsJudge says whether a QA answer goes to the semantic judge: its
// answer text (Answer) switched script under script.DistractorSwitch, the
// same rule that the tables count.
func NeedsJudge(response string) bool { return script.DistractorSwitch(Answer(response)) }

// Answer is the distractor study's answer text: the whole response,
// trimmed (MethodText). Exact match, abstention, script and switch are all
// read from it; the first line alone would hide an answer that continues
// in another script.
func Answer(response string) string { return strings.TrimSpace(response) }

// Templates names the templates used.
func (p *Protocol) Templates() map[string]string {
	out := map[string]string{}
	names := []string{"mdi/system.txt", "mdi/note-es.txt", "mdi/note-hi.txt", "mdi/note-zh.txt", "mdi/paragraph.txt", "truthfulqa/primer.txt"}
	if p.Judge != "" {
		names = append(names, "mdi/semantic-judge.txt")
	}
	for _, n := range names {
		if _, h, err := study.Template(n); err == nil {
			out[n] = h
		}
	}
	return out
}

func text(name string) (string, error) {
	t, _, err := study.Template(name)
	return strings.TrimSuffix(t, "\n"), err
}

// Distractor returns the text put before the question in condition c
// ("" when clean).
func (p *Protocol) Distractor(c Condition) (string, error) {
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
func (p *Protocol) MCContext(question string, c Condition) (string, error) {
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

// Requests yields one model's requests of a stage: the answers (1), the
// semantic judge's verdicts on the switched answers (2).
func (p *Protocol) Requests(exp, model string, stage int, prior study.Lookup) iter.Seq2[study.Request, error] {
	return func(yield func(study.Request, error) bool) {
		tmpl, d := "mdi/system.txt", study.Decoding{MaxTokens: cmp.Or(max(p.MaxTokens, 0), 32), Temperature: new(0.0)}
		switch {
		case stage == 2:
			tmpl, d.MaxTokens = "mdi/semantic-judge.txt", 8
			if p.JudgeDecoding != nil {
				d = *p.JudgeDecoding
			}
		case stage != 1:
			return
		}
		t, err := text(tmpl)
		if err != nil {
			yield(study.Request{}, err)
			return
		}
		for _, c := range p.Conditions {
			distractor := ""
			if stage == 1 {
				if distractor, err = p.Distractor(c); err != nil {
					yield(study.Request{}, err)
					return
				}
			}
			for _, it := range p.Set.Items {
				v, ok := it.Variant("eng", study.English)
				if !ok || (stage == 2 && len(it.Choices) > 0) {
					continue
				}
				key := study.Key{Experiment: exp, Model: model, Item: it.ID, Language: "eng", Form: string(study.English), Strategy: StrategyQA, Condition: string(c)}
				var r study.Request
				switch {
				case stage == 2:
					rec, ok := prior(key)
					if !ok || rec.Status != study.StatusOK || !NeedsJudge(rec.Response) {
						continue
					}
					prompt := strings.NewReplacer("{QUESTION}", v.Question, "{GOLDS}", strings.Join(v.Golds(), "; "), "{ANSWER}", strings.TrimSpace(rec.Response)).Replace(t)
					r = study.Request{Key: study.JudgeKey(key, p.Judge), Kind: study.Chat, Messages: []study.Message{{Role: "user", Content: prompt}}, Decoding: d,
						Cues: []string{study.CueOneWordVerdict}}
				case len(it.Choices) > 0:
					key.Strategy = StrategyMC1
					ctx, err := p.MCContext(v.Question, c)
					if err != nil {
						yield(study.Request{}, err)
						return
					}
					for i, ch := range it.Choices {
						k := key
						k.Role = study.Choice(i)
						r := study.Request{Key: k, Kind: study.Completion, Prompt: ctx + " " + ch,
							Decoding: study.Decoding{MaxTokens: 0, Temperature: new(0.0), Echo: true, Logprobs: new(0)}}
						if !yield(r, nil) {
							return
						}
					}
					continue
				default:
					user := v.Question
					if distractor != "" {
						user = distractor + "\n\n" + v.Question
					}
					r = study.Request{Key: key, Kind: study.Chat, Messages: []study.Message{{Role: "system", Content: t}, {Role: "user", Content: user}},
						Decoding: study.Decoding{MaxTokens: d.MaxTokens, Temperature: new(0.0)}}
				}
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// Extract reads a record: a TriviaQA answer is its whole response,
// trimmed of surrounding white space (Answer; MethodText: every line is
// kept, so an answer that goes on in another script is scored whole); a
// judge's verdict is the response's first word, upper-cased, after the
// response is trimmed of surrounding . * ` " ' and white space and the
// word of . , : ; * ` " ', when it is CORRECT, WRONG or ABSTAIN (the
// method is recorded as first-line), else unparsed with the trimmed
// response as the fallback; an mc1 choice record holds
// log-probabilities and gives nil.
func (p *Protocol) Extract(r *study.Record) *study.ExtractResult {
	switch r.Fields.Role.Kind {
	case study.RoleChoice:
		return nil
	case study.RoleJudge:
		w := strings.ToUpper(strings.Trim(strings.TrimSpace(r.Response), ".*`\"' \n"))
		if f := strings.Fields(w); len(f) > 0 {
			w = strings.Trim(f[0], ".,:;*`\"'")
		}
		switch w {
		case SemanticCorrect, SemanticWrong, SemanticAbstain:
			return &study.ExtractResult{Value: w, Method: study.MethodFirstLine}
		}
		return &study.ExtractResult{Method: study.MethodUnparsed, Fallback: strings.TrimSpace(r.Response), Note: "no CORRECT, WRONG or ABSTAIN"}
	}
	return &study.ExtractResult{Value: Answer(r.Response), Method: study.MethodText}
}
