package bhasha

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	// DistractorSwitch: the answer is in the distractor note's script (the
	// distractor study's Table 4 rule).
	DistractorSwitch bool
	// Withheld: a second stage never sent because its first stage failed
	// (counted as a wrong answer).
	Withheld      bool
	Failed        bool // the request failed (Error says why): counted as a wrong answer
	Error         string
	EmptyResponse bool // the model produced an empty text
	Simulated     bool
}

// Samples returns one Sample per scored answer, in the tables' order
// (read once; later calls return the same samples). A run of millions of
// answers holds them all in memory: the reports take a bounded selection
// instead (ExplorerSamples, report.MaxSampleRows).
func (r *Results) Samples() ([]Sample, error) {
	r.samplesOnce.Do(func() {
		if r.samplesErr = r.score(); r.samplesErr != nil {
			return
		}
		r.samples, r.samplesErr = r.samplesOf(nil)
	})
	return r.samples, r.samplesErr
}

// samplesOf builds the samples of r.rows[i] for each i in sel (ascending;
// nil: every row) in one streaming pass over the records, keeping only
// the records asked for (the first ok record of a key, else its first, as
// records.ReadUnique does).
func (r *Results) samplesOf(sel []int) ([]Sample, error) {
	if sel == nil {
		sel = make([]int, len(r.rows))
		for i := range sel {
			sel[i] = i
		}
	}
	out := make([]Sample, len(sel))
	want := make(map[string]int, len(sel))
	for j, i := range sel {
		row := r.rows[i]
		k := row.Key
		s := Sample{Model: k.Model, Item: k.Item, Language: k.Language, Form: k.Form, Strategy: k.Strategy, Condition: k.Condition, Role: k.Role.String(),
			Answer: row.Prediction, Normalized: normalize.Default.String(row.Prediction), Method: string(row.Method), Gold: row.Gold,
			Correct: row.Correct, Lenient: row.Lenient, Translit: row.Translit, SQuAD: row.SQuAD, Substring: row.Substring, Overlap: row.Overlap,
			Judge: row.Judge, Semantic: row.Semantic, Abstain: row.Abstain, Script: row.Script, Switched: row.Switched, Chosen: -1,
			DistractorSwitch: row.DistractorSwitch, Withheld: row.Withheld, Failed: row.Failed, EmptyResponse: row.EmptyResponse, Simulated: r.manifest.Simulated}
		if d := row.Detail; d != nil && d.ChoiceLogprobs != nil {
			s.Chosen, s.ChoiceLogprobs = d.Chosen, d.ChoiceLogprobs
		}
		out[j] = s
		want[k.String()] = j
	}
	const unseen, seenFailed, seenOK = 0, 1, 2
	state := make([]byte, len(sel))
	err := records.Read(r.dir, func(rec *engine.Record) error {
		j, ok := want[rec.Key]
		if !ok || state[j] == seenOK || (state[j] == seenFailed && rec.Status != engine.StatusOK) {
			return nil
		}
		state[j] = seenFailed
		if rec.Status == engine.StatusOK {
			state[j] = seenOK
		}
		out[j].Prompt, out[j].Response, out[j].Error = PromptText(rec.Request), rec.Response, rec.Error
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("samples of %s: %w", r.dir, err)
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
