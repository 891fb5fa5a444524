package indicquest

import (
	"iter"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/studies/protocol"
)

// Protocol builds L3Cube-IndicQuest requests as v2 describes them (Jain et
// al.; v1, Rohera et al., publishes only the graded judge prompt): stage 1
// asks each model every question in its own language (chat, greedy, one
// short JSON answer); stage 2 sends each answer to the judge model with
// the judge prompt (temperature 0). Judge requests are routed to the
// judge (Key.Model) with the role engine.Judge(<judged model>); see
// JudgeKey. A stage-1 answer that is null or unreadable is still
// judged (the judge sees the raw text), so every answer gets a verdict.
type Protocol struct {
	Set       *study.Items
	Languages []lang.Language // empty: every language of the set
	Judge     string          // the judge's model name in the experiment
	// JudgeV1 uses the v1 graded (1-5) judge prompt instead of v2's binary one.
	JudgeV1 bool
	// JudgeDecoding, when set, replaces the judge's decoding entirely.
	JudgeDecoding *study.Decoding
}

func (p *Protocol) Stages() int {
	if p.Judge == "" {
		return 1
	}
	return 2
}

func (p *Protocol) judgeTemplate() string {
	if p.JudgeV1 {
		return "indicquest/judge-v1.txt"
	}
	return "indicquest/judge.txt"
}

// Templates names the templates used.
func (p *Protocol) Templates() map[string]string {
	out := map[string]string{}
	names := []string{"indicquest/answer.txt"}
	if p.Judge != "" {
		names = append(names, p.judgeTemplate())
	}
	for _, n := range names {
		if _, h, err := study.Template(n); err == nil {
			out[n] = h
		}
	}
	return out
}

// Requests yields one model's requests of a stage.
func (p *Protocol) Requests(exp, model string, stage int, prior study.Lookup) iter.Seq2[study.Request, error] {
	reg := lang.New()
	return func(yield func(study.Request, error) bool) {
		tmpl := "indicquest/answer.txt"
		if stage == 2 {
			tmpl = p.judgeTemplate()
		}
		t, _, err := study.Template(tmpl)
		if err != nil {
			yield(study.Request{}, err)
			return
		}
		t = strings.TrimSuffix(t, "\n")
		for _, it := range p.Set.Items {
			for i := range it.Variants {
				v := &it.Variants[i]
				if len(p.Languages) > 0 && !slices.ContainsFunc(p.Languages, func(l lang.Language) bool { return l.ISO3 == v.Language }) {
					continue
				}
				l, err := reg.Lookup(v.Language)
				if err != nil {
					yield(study.Request{}, err)
					return
				}
				key := study.Key{Experiment: exp, Model: model, Item: it.ID, Language: v.Language, Form: string(v.Form)}
				r := study.Request{Key: key, Kind: study.Chat, Decoding: study.Decoding{MaxTokens: 64, Temperature: new(0.0)}}
				if stage == 1 {
					r.Messages = []study.Message{{Role: "user", Content: strings.NewReplacer("{LANGUAGE}", l.Name, "{QUESTION}", v.Question).Replace(t)}}
				} else if rec, ok := prior(key); !ok || rec.Status != study.StatusOK {
					r, err = study.Request{Key: study.JudgeKey(key, p.Judge)}, protocol.ErrWithheld
				} else {
					ans := study.ExtractField(rec.Response, "answer")
					given := ans.Value
					switch {
					case ans.Null:
						given = "null"
					case !ans.OK():
						given = ans.Fallback
					}
					prompt := strings.NewReplacer("{QUESTION}", v.Question, "{GROUND_TRUTH}", v.Answer, "{ANSWER}", given,
						"{question}", v.Question, "{ground_truth}", v.Answer, "{model_answer}", given).Replace(t)
					r.Key, r.Messages, r.Decoding.MaxTokens = study.JudgeKey(key, p.Judge), []study.Message{{Role: "user", Content: prompt}}, 256
					if p.JudgeDecoding != nil {
						r.Decoding = *p.JudgeDecoding
					}
				}
				if !yield(r, err) {
					return
				}
			}
		}
	}
}

// Extract reads an answer's "answer" field, or a verdict's "is_correct"
// (v2) or "Overall" (v1) field.
func (p *Protocol) Extract(r *study.Record) *study.ExtractResult {
	field := "answer"
	if r.Fields.Role.Kind == study.RoleJudge {
		field = "is_correct"
		if p.JudgeV1 {
			field = "Overall"
		}
	}
	res := study.ExtractField(r.Response, field)
	return &res
}
