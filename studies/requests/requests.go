// Package requests holds the two studies that read no dataset: "requests"
// sends every line of a JSON Lines file of prompts (RequestLine) to every
// model; "synthetic" generates distinct prompts, for benchmarks and smoke
// tests (labelled synthetic in every key). Neither has a gold answer: a
// run is scored as one row per answer (the trimmed response), and its
// table, "requests", counts answers, failures, empty and cached answers,
// latency and prompt tokens per model, strategy and condition.
package requests

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/jsonpos"
	"github.com/bhashalab/bhasha/internal/lines"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/study"
)

// RequestLine is one line of a requests file. Every line is sent to every
// model of the experiment; its key takes the experiment and model names.
type RequestLine struct {
	Item      string          `json:"item"`
	Language  string          `json:"language,omitempty"`
	Form      string          `json:"form,omitempty"`
	Strategy  string          `json:"strategy,omitempty"`
	Condition string          `json:"condition,omitempty"`
	Role      study.Role      `json:"role,omitzero"` // "", "translation", "judge:<model>", "choice:<n>"
	Kind      study.Kind      `json:"kind"`
	Messages  []study.Message `json:"messages,omitempty"`
	Prompt    string          `json:"prompt,omitempty"`
	// Decoding, when present, replaces the experiment's decoding for this line.
	Decoding *study.Decoding `json:"decoding,omitempty"`
	// Cues are sent with the request (engine.Request.Cues: "translate-first",
	// "one-word-verdict"), for Bhasha's simulator; they are not part of the body.
	Cues []string `json:"cues,omitempty"`
}

// File is the "requests" study: the lines of the experiment's requests file.
type File struct{}

// Name is "requests".
func (File) Name() string { return "requests" }

// About says what the study does.
func (File) About() string {
	return "sends each line of a JSON Lines request file to every model; no gold answers (records, latency and failures only)"
}

// Check requires the file's name.
func (File) Check(e *study.Experiment, c *study.Checker) {
	if study.OptionsOf[FileOptions](e).Requests == "" {
		c.Add([]string{"requests"}, "study requests needs a requests file")
	}
}

// Build reads nothing: the file's lines are read as they are sent (the
// experiment checked that it exists).
func (File) Build(ctx context.Context, e *study.Experiment) (study.Plan, error) {
	path := e.Resolve(study.OptionsOf[FileOptions](e).Requests)
	return &plan{e: e, lines: fileLines(path)}, nil
}

// Synthetic is the "synthetic" study: synthetic.count generated chat requests.
type Synthetic struct{}

// Name is "synthetic".
func (Synthetic) Name() string { return "synthetic" }

// About says what the study does.
func (Synthetic) About() string {
	return "generates distinct chat prompts for benchmarks and smoke tests; no gold answers"
}

// Check requires a positive count.
func (Synthetic) Check(e *study.Experiment, c *study.Checker) {
	if g := study.OptionsOf[SyntheticOptions](e).Synthetic; g == nil || g.Count <= 0 {
		c.Add([]string{"synthetic", "count"}, "synthetic.count must be positive")
	}
}

// Build needs nothing from the disk.
func (Synthetic) Build(ctx context.Context, e *study.Experiment) (study.Plan, error) {
	n := study.OptionsOf[SyntheticOptions](e).Synthetic.Count
	return &plan{e: e, lines: syntheticLines(n)}, nil
}

// plan sends every line to every model in one stage; lines reads them
// afresh at each iteration.
type plan struct {
	e     *study.Experiment
	lines iter.Seq2[RequestLine, error]
}

func (p *plan) Stages() int                  { return 1 }
func (p *plan) Templates() map[string]string { return nil }
func (p *plan) Items() *study.Items          { return nil }

// Requests yields every line for one model, in file order.
func (p *plan) Requests(exp, model string, stage int, _ study.Lookup) iter.Seq2[study.Request, error] {
	return func(yield func(study.Request, error) bool) {
		if stage != 1 {
			return
		}
		for rl, err := range p.lines {
			if err != nil {
				yield(study.Request{}, err)
				return
			}
			r := study.Request{
				Key: study.Key{Experiment: exp, Model: model, Item: rl.Item, Language: rl.Language,
					Form: rl.Form, Strategy: rl.Strategy, Condition: rl.Condition, Role: rl.Role},
				Kind: rl.Kind, Messages: rl.Messages, Prompt: rl.Prompt, Decoding: *cmp.Or(rl.Decoding, &p.e.Decoding), Cues: rl.Cues,
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Extract takes the whole response, trimmed.
func (p *plan) Extract(r *study.Record) *study.ExtractResult {
	return &study.ExtractResult{Value: strings.TrimSpace(r.Response), Method: study.MethodText}
}

// Score makes one row per record: no criterion, the answer as extracted.
func (p *plan) Score(recs []*study.Record) ([]study.Row, error) {
	c := study.NewCommon(p.e.Abstain)
	out := make([]study.Row, 0, len(recs))
	for _, r := range recs {
		out = append(out, c.Row(r))
	}
	return out, nil
}

// AnswerSchema: a request file's answers have no criterion, the common
// fields only.
func (p *plan) AnswerSchema() *study.Schema { return study.NewSchema() }

// Tables is the requests table.
func (p *plan) Tables(rows []study.Row, _ study.TableOptions) []*study.Table {
	return []*study.Table{tables.Requests(rows)}
}

func syntheticLines(n int) iter.Seq2[RequestLine, error] {
	return func(yield func(RequestLine, error) bool) {
		for i := range n {
			rl := RequestLine{Item: "synthetic-" + strconv.Itoa(i), Condition: "synthetic", Kind: study.Chat,
				Messages: []study.Message{{Role: "user", Content: "Synthetic benchmark question number " + strconv.Itoa(i) + ": what is the answer?"}}}
			if !yield(rl, nil) {
				return
			}
		}
	}
}

// fileLines reads a request file; errors name the file, line and field,
// and a key used twice is an error naming both lines.
func fileLines(path string) iter.Seq2[RequestLine, error] {
	return func(yield func(RequestLine, error) bool) {
		f, err := os.Open(path)
		if err != nil {
			yield(RequestLine{}, fmt.Errorf("reading requests: %w", err))
			return
		}
		defer f.Close()
		sc := lines.New(f, path, 0)
		items := map[string]int{}
		for sc.Scan() {
			n := sc.Line()
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			rl, err := parseLine(b)
			if err != nil {
				yield(RequestLine{}, fmt.Errorf("%s line %d: %w", path, n, err))
				return
			}
			id := study.Key{Item: rl.Item, Language: rl.Language, Form: rl.Form, Strategy: rl.Strategy, Condition: rl.Condition, Role: rl.Role}.String()
			if prev, dup := items[id]; dup {
				yield(RequestLine{}, fmt.Errorf("%s line %d: same key as line %d (item %q)", path, n, prev, rl.Item))
				return
			}
			items[id] = n
			if !yield(rl, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(RequestLine{}, err)
		}
	}
}

func parseLine(b []byte) (RequestLine, error) {
	var rl RequestLine
	if _, key, msg, bad := jsonpos.BadUTF8(b); bad {
		if key != "" {
			return rl, fmt.Errorf("field %q: %s", key, msg)
		}
		return rl, errors.New(msg)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rl); err != nil {
		return rl, err
	}
	switch {
	case rl.Item == "":
		return rl, errors.New(`field "item" is required`)
	case rl.Kind != study.Chat && rl.Kind != study.Completion:
		return rl, fmt.Errorf(`field "kind": %q is neither "chat" nor "completion"`, rl.Kind)
	case rl.Kind == study.Chat && len(rl.Messages) == 0:
		return rl, errors.New(`field "messages" is required for chat requests`)
	case rl.Kind == study.Completion && rl.Prompt == "":
		return rl, errors.New(`field "prompt" is required for completion requests`)
	}
	return rl, nil
}

// FileOptions are the requests study's options: YAML requests: names the
// file (and, without study:, the study).
type FileOptions struct {
	// Requests is a JSON Lines file of RequestLine, relative to the
	// experiment file.
	Requests string `yaml:"requests"`
}

// Inputs: the requests file.
func (o *FileOptions) Inputs() []experiment.Input {
	return []experiment.Input{{Key: "requests", Path: &o.Requests}}
}

// Options is a new zero FileOptions.
func (File) Options() any { return new(FileOptions) }

// ImpliedBy: an experiment without study: that names a requests file is
// this study.
func (File) ImpliedBy() string { return "requests" }

// WithFile sets the requests file (YAML requests:).
func WithFile(path string) study.Option {
	return study.Set(func(o *FileOptions) { o.Requests = path })
}

// SyntheticOptions are the synthetic study's options: YAML synthetic:
// (and, without study:, the study).
type SyntheticOptions struct {
	Synthetic *Generated `yaml:"synthetic"`
}

// Generated asks for Count chat requests with distinct prompts.
type Generated struct {
	Count int `yaml:"count"`
}

// Options is a new zero SyntheticOptions.
func (Synthetic) Options() any { return new(SyntheticOptions) }

// ImpliedBy: an experiment without study: that sets synthetic: is this
// study.
func (Synthetic) ImpliedBy() string { return "synthetic" }
