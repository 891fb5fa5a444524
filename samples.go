package bhasha

import (
	"context"
	"fmt"
	"slices"

	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/reportfiles"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/study"
)

// Sample is one scored answer: what was asked, what came back, how it was
// read and judged. The fields every answer has are Go fields; the
// study's own criteria and verdicts are read by name from its answer
// schema (Criterion, Verdict, Schema), kept compactly (no map per sample).
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
	// text scored when extraction failed; the prediction column),
	// Normalized its normalised form (prediction_norm), Method how it was
	// extracted.
	Response, Answer, Normalized, Method string
	Gold                                 string
	// Correct is the study's strict criterion (false for a study without
	// one); Criterion reads it and the study's other criteria by name.
	Correct bool
	Abstain bool // the answer abstains under the study's abstention rule
	// Chosen is the multiple-choice option the model ranks first (−1 when
	// not multiple choice) and ChoiceLogprobs each option's log-likelihood.
	Chosen         int
	ChoiceLogprobs []float64
	Script         string // main script of the answer
	Switched       bool   // letters outside the scripts of the language asked
	// Withheld: a second stage never sent because its first stage failed
	// (counted as a wrong answer).
	Withheld      bool
	Failed        bool // the request failed (Error says why): counted as a wrong answer
	Error         string
	EmptyResponse bool // the model produced an empty text
	Simulated     bool

	schema *score.Schema
	values score.Values
}

// Schema is the answer schema of the sample's study (nil for a Sample
// built by hand).
func (s Sample) Schema() *study.Schema { return s.schema }

// Criterion reads one of the study's criteria (a flag of its answer
// schema: correct, translit, squad_em, ...) by name; ok is false when the
// study has no such criterion.
func (s Sample) Criterion(name string) (value, ok bool) {
	if s.schema == nil {
		return false, false
	}
	return s.schema.FlagOf(s.values, name)
}

// Verdict reads one of the study's text fields (a judge's verdict, a
// domain) by name; ok is false when the study has no such field.
func (s Sample) Verdict(name string) (string, bool) {
	if s.schema == nil {
		return "", false
	}
	return s.schema.TextOf(s.values, name)
}

// Value reads any of the study's own fields (a criterion, a verdict, an
// int such as chosen) by name as a bool, string or int; ok is false when
// the study has no such field.
func (s Sample) Value(name string) (any, bool) {
	if s.schema == nil {
		return nil, false
	}
	return s.schema.Lookup(s.values, name)
}

// sampleReader reads the common field name (score.Head, score.Tail) from a Sample.
func sampleReader(name string) (func(*Sample) any, bool) {
	of, ok := map[string]func(*Sample) any{
		"model":           func(s *Sample) any { return s.Model },
		"item":            func(s *Sample) any { return s.Item },
		"language":        func(s *Sample) any { return s.Language },
		"form":            func(s *Sample) any { return s.Form },
		"strategy":        func(s *Sample) any { return s.Strategy },
		"condition":       func(s *Sample) any { return s.Condition },
		"role":            func(s *Sample) any { return s.Role },
		"gold":            func(s *Sample) any { return s.Gold },
		"prediction":      func(s *Sample) any { return s.Answer },
		"prediction_norm": func(s *Sample) any { return s.Normalized },
		"method":          func(s *Sample) any { return s.Method },
		"abstain":         func(s *Sample) any { return s.Abstain },
		"script":          func(s *Sample) any { return s.Script },
		"switched":        func(s *Sample) any { return s.Switched },
		"failed":          func(s *Sample) any { return s.Failed },
		"withheld":        func(s *Sample) any { return s.Withheld },
		"empty_response":  func(s *Sample) any { return s.EmptyResponse },
	}[name]
	return of, ok
}

// Samples returns one Sample per scored answer, in the tables' order
// (read once; later calls return the same samples). A run of millions of
// answers holds them all in memory: the reports do not call it (they
// show a bounded, drawn selection: WriteReport).
func (r *Results) Samples() ([]Sample, error) { return r.samples() }

// samplesOf scores the run and builds a sample of every row, their texts
// read in one pass over the records (reportfiles.Report.ReadTexts).
func (r *Results) samplesOf() ([]Sample, error) {
	if err := r.a.Score(); err != nil {
		return nil, err
	}
	rows, schema := r.a.Rows(), r.a.Schema()
	out, keys := make([]Sample, len(rows)), make([]string, len(rows))
	for i := range rows {
		row := &rows[i]
		keys[i] = row.Key.String()
		k := row.Key
		out[i] = Sample{Model: k.Model, Item: k.Item, Language: k.Language, Form: k.Form, Strategy: k.Strategy, Condition: k.Condition, Role: k.Role.String(),
			Answer: row.Prediction, Normalized: normalize.Default.String(row.Prediction), Method: string(row.Method), Gold: row.Gold,
			Correct: row.Correct, Abstain: row.Abstain, Script: row.Script, Switched: row.Switched, Chosen: -1,
			Withheld: row.Withheld, Failed: row.Failed, EmptyResponse: row.EmptyResponse, Simulated: r.manifest.Simulated,
			schema: schema, values: schema.Values(row)}
		if d := row.Detail; d != nil && d.ChoiceLogprobs != nil {
			out[i].Chosen, out[i].ChoiceLogprobs = d.Chosen, d.ChoiceLogprobs
		}
	}
	err := r.rep.ReadTexts(context.Background(), report.Options{}, keys, func(i int, t reportfiles.SampleText) error {
		out[i].Prompt, out[i].Response, out[i].Error = t.Prompt, t.Response, t.Error
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SamplesTable lays out the run's samples that keep accepts (every
// sample when keep is nil; Samples) as a typed table, one row per sample
// (the workbook's samples sheet, the explorer's data): the columns of the
// study's answer schema, as answers.csv has them, then each sample's
// prompt, response, error and whether it was simulated.
func (r *Results) SamplesTable(keep func(Sample) bool) (*Table, error) {
	ss, err := r.Samples()
	if err != nil {
		return nil, err
	}
	if keep != nil {
		ss = slices.DeleteFunc(slices.Clone(ss), func(s Sample) bool { return !keep(s) })
	}
	return samplesTable(ss), nil
}

// samplesTable lays the samples out as a table, each repeated string boxed once.
func samplesTable(ss []Sample) *Table {
	schema := score.NewSchema() // samples built by hand: the common fields
	if i := slices.IndexFunc(ss, func(s Sample) bool { return s.schema != nil }); i >= 0 {
		schema = ss[i].schema
	}
	fields, extra := schema.Fields(), reportfiles.SampleColumns()
	cols := make([]tables.Column, 0, len(fields)+len(extra))
	read := make([]func(*Sample) any, 0, len(fields)+len(extra))
	repeats := make([]bool, len(fields)+len(extra))
	first := len(score.Head()) // the study's own fields start here
	for c, f := range fields {
		of, ok := sampleReader(f.Name)
		if i := c - first; i >= 0 && i < len(schema.Study()) {
			of, ok = func(s *Sample) any {
				if s.schema == nil {
					return nil
				}
				return s.schema.ValueOf(s.values, i)
			}, true
		}
		if !ok {
			panic(fmt.Sprintf("bhasha: the samples table has no reader for the common field %q", f.Name))
		}
		cols, read, repeats[c] = append(cols, tables.AnswerColumn(f)), append(read, of), f.Repeats
	}
	// The extras: what only a sample holds, its record's text.
	cols = append(cols, extra...)
	read = append(read, func(s *Sample) any { return s.Prompt }, func(s *Sample) any { return s.Response },
		func(s *Sample) any { return s.Error }, func(s *Sample) any { return s.Simulated })
	t := tables.New("samples", "one row per scored answer with its prompt and response: the study's answer schema", cols...)
	var in tables.Interner
	t.Fill(len(ss), func(i int, row []any) {
		for c, of := range read {
			row[c] = of(&ss[i])
			if str, ok := row[c].(string); ok && repeats[c] {
				row[c] = in.String(str)
			}
		}
	})
	return t
}
