package bhasha

import (
	"encoding/json"
	"strings"

	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// Sample is one scored answer: what was asked, what came back, how it was
// read and judged.
type Sample struct {
	Model, Item, Language, Form, Strategy, Condition string
	// Role is what the request asked: "" (the answer), or a first stage's
	// "translation".
	Role string
	// Prompt is the prompt as sent: the completion prompt, or the chat
	// messages as "role: content" paragraphs ("" for multiple-choice
	// items, which are scored from one request per choice).
	Prompt string
	// Response is the raw model output; Answer the extracted answer (the
	// text scored when extraction failed), Normalized its normalised form,
	// Method how it was extracted.
	Response, Answer, Normalized, Method string
	Gold                                 string
	// Criteria: the study's strict criterion (Correct) and the others.
	Correct, Lenient, Translit, SQuAD, Substring, Overlap bool
	// Judge is IndicQuest's verdict, Semantic the distractor study's.
	Judge, Semantic string
	Abstain         bool
	// Chosen is the multiple-choice option the model ranks first (−1 when
	// not multiple choice) and ChoiceLogprobs each option's log-likelihood.
	Chosen         int
	ChoiceLogprobs []float64
	Script         string // main script of the answer
	Switched       bool   // letters outside the scripts of the language asked
	Failed         bool   // the request failed (Error says why): counted as a wrong answer
	Error          string
	EmptyResponse  bool // the model produced an empty text
	Simulated      bool
}

// Samples returns one Sample per scored answer, in the tables' order
// (read once; later calls return the same samples).
func (r *Results) Samples() ([]Sample, error) {
	r.samplesOnce.Do(func() { r.samples, r.samplesErr = r.readSamples() })
	return r.samples, r.samplesErr
}

func (r *Results) readSamples() ([]Sample, error) {
	if err := r.score(); err != nil {
		return nil, err
	}
	recs, _, err := records.ReadUnique(r.dir, true)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]*engine.Record, len(recs))
	for _, rec := range recs {
		byKey[rec.Key] = rec
	}
	out := make([]Sample, 0, len(r.rows))
	for _, row := range r.rows {
		k := row.Key
		s := Sample{Model: k.Model, Item: k.Item, Language: k.Language, Form: k.Form, Strategy: k.Strategy, Condition: k.Condition, Role: k.Role.String(),
			Answer: row.Prediction, Normalized: normalize.Default.String(row.Prediction), Method: string(row.Method), Gold: row.Gold,
			Correct: row.Correct, Lenient: row.Lenient, Translit: row.Translit, SQuAD: row.SQuAD, Substring: row.Substring, Overlap: row.Overlap,
			Judge: row.Judge, Semantic: row.Semantic, Abstain: row.Abstain, Script: row.Script, Switched: row.Switched, Chosen: -1,
			Failed: row.Failed, EmptyResponse: row.EmptyResponse, Simulated: r.manifest.Simulated}
		if d := row.Detail; d != nil && d.ChoiceLogprobs != nil {
			s.Chosen, s.ChoiceLogprobs = d.Chosen, d.ChoiceLogprobs
		}
		if rec, ok := byKey[k.String()]; ok {
			s.Prompt, s.Response, s.Error = PromptText(rec.Request), rec.Response, rec.Error
		}
		out = append(out, s)
	}
	return out, nil
}

// PromptText shows a request body's prompt: a completion's prompt as it
// is, a chat's messages as "role: content" paragraphs.
func PromptText(body json.RawMessage) string {
	prompt, msgs, err := engine.PromptOf(body)
	if err != nil || len(msgs) == 0 {
		return prompt
	}
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Role + ": " + m.Content
	}
	return strings.Join(parts, "\n\n")
}
