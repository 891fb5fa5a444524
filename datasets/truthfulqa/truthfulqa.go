// Package truthfulqa reads TruthfulQA (Lin, Hilton and Evans) multiple-
// choice items for MC1 scoring: the repository's mc_task.json (a list of
// {"question", "mc1_targets": {choice: 0|1}, ...}, whose key order matters:
// the correct choice is the one labelled 1, in practice the first) and the
// Hugging Face parquet export (question, mc1_targets{choices, labels}).
// The item ID is "tqa-" and the first 12 hex digits of the SHA-256 of the
// question, so items match across file versions that reorder questions.
package truthfulqa

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bhashalab/bhasha/datasets/internal/jsonlist"
	"github.com/bhashalab/bhasha/datasets/internal/pqlist"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/internal/jsonpos"
)

// ID is the item ID of a question.
func ID(question string) string {
	h := sha256.Sum256([]byte(strings.TrimSpace(question)))
	return "tqa-" + hex.EncodeToString(h[:6])
}

// Load reads path by its extension: .json (mc_task.json) or .parquet.
func Load(ctx context.Context, path string, opts item.Options) (*item.Set, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return loadJSON(ctx, path, opts)
	case ".parquet":
		return loadParquet(ctx, path, opts)
	}
	return nil, fmt.Errorf("%s: want mc_task.json or a .parquet TruthfulQA file", path)
}

func add(s *item.Set, opts item.Options, src item.Problem, q string, choices []string, labels []int64) error {
	q = strings.TrimSpace(q)
	correct, n := -1, 0
	for i, l := range labels {
		if l == 1 {
			correct, n = i, n+1
		}
	}
	switch {
	case q == "":
		return s.Fail(opts, src.At("question", "empty"))
	case len(choices) < 2 || len(choices) != len(labels):
		return s.Fail(opts, src.At("mc1_targets", fmt.Sprintf("%d choices and %d labels; want two or more of each, equally many", len(choices), len(labels))))
	case n != 1:
		return s.Fail(opts, src.At("mc1_targets", fmt.Sprintf("%d choices labelled 1; want exactly one", n)))
	}
	it := s.Get(ID(q))
	if len(it.Variants) > 0 {
		return s.Fail(opts, src.At("question", "appears twice"))
	}
	it.Choices, it.Correct = choices, correct
	it.Variants = append(it.Variants, item.Variant{Language: "eng", Form: item.English, Question: q, Answer: choices[correct], Source: src.Place()})
	return nil
}

// orderedTargets decodes {"choice": label, ...} keeping key order.
func orderedTargets(raw json.RawMessage) ([]string, []int64, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("want an object of choice: label")
	}
	var choices []string
	var labels []int64
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var l int64
		if err := dec.Decode(&l); err != nil {
			return nil, nil, fmt.Errorf("label of %q: %v", t, err)
		}
		choices, labels = append(choices, t.(string)), append(labels, l)
	}
	return choices, labels, nil
}

func loadJSON(ctx context.Context, path string, opts item.Options) (*item.Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading TruthfulQA: %w", err)
	}
	lines := jsonpos.NewCounter(bytes.NewReader(b))
	dec := json.NewDecoder(lines)
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, item.Problem{File: path, Line: 1, Msg: "want a JSON list of questions"}
	}
	s := &item.Set{Dataset: "truthfulqa"}
	type record struct {
		Question string          `json:"question"`
		MC1      json.RawMessage `json:"mc1_targets"`
	}
	err = jsonlist.Each(ctx, dec, path, lines.Line, "", s, opts, func(r *record, src item.Problem) error {
		choices, labels, err := orderedTargets(r.MC1)
		if err != nil {
			return s.Fail(opts, src.At("mc1_targets", err.Error()))
		}
		return add(s, opts, src, r.Question, choices, labels)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

type hfRow struct {
	Question *string `parquet:"question,optional"`
	MC1      *struct {
		Choices *pqlist.List[string] `parquet:"choices,optional"`
		Labels  *pqlist.List[int64]  `parquet:"labels,optional"`
	} `parquet:"mc1_targets,optional"`
}

func loadParquet(ctx context.Context, path string, opts item.Options) (*item.Set, error) {
	s := &item.Set{Dataset: "truthfulqa"}
	err := pqlist.Each(ctx, path, "TruthfulQA parquet (want question, mc1_targets{choices, labels})", func(r *hfRow, src item.Problem) error {
		var choices []string
		var labels []int64
		if r.MC1 != nil {
			choices, labels = pqlist.Values(r.MC1.Choices), pqlist.Values(r.MC1.Labels)
		}
		return add(s, opts, src, pqlist.Deref(r.Question), choices, labels)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
