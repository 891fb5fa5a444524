// Package triviaqa reads TriviaQA (Joshi et al., ACL 2017) questions in
// the three forms users have: the Hugging Face parquet export
// (unfiltered.nocontext or rc.nocontext: question, question_id,
// answer{aliases, normalized_aliases, value, ...}), the original release
// JSON ({"Data": [{"Question", "QuestionId", "Answer": {"Aliases",
// "NormalizedAliases", "Value"}}]}), and llm-foundry's JSON Lines
// ({"context": "Question: ...\nAnswer:", "answer", "aliases"}; no ids, so
// the 1-based line is the id). Every item is English; the gold is the
// answer's value and its aliases (raw aliases first, then the normalised
// ones not already present).
package triviaqa

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/datasets/internal/jsonlist"
	"github.com/bhashalab/bhasha/datasets/internal/pqlist"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/internal/jsonpos"
	"github.com/bhashalab/bhasha/internal/lines"
)

// Load reads path by its extension: .parquet, .jsonl or .json. The JSON
// forms are read in one streaming pass (memory bounded by the items kept,
// so the 2.5 GB original release loads); ctx cancels the load.
func Load(ctx context.Context, path string, opts item.Options) (*item.Set, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet":
		return loadParquet(ctx, path, opts)
	case ".jsonl":
		return loadJSONL(ctx, path, opts)
	case ".json":
		return loadOriginal(ctx, path, opts)
	}
	return nil, fmt.Errorf("%s: want a .parquet, .jsonl or .json TriviaQA file", path)
}

func add(s *item.Set, opts item.Options, src item.Problem, id, q, value string, aliases ...[]string) error {
	switch {
	case strings.TrimSpace(q) == "":
		return s.Fail(opts, src.At("question", "empty"))
	case strings.TrimSpace(value) == "":
		return s.Fail(opts, src.At("answer.value", "empty"))
	case id == "":
		return s.Fail(opts, src.At("question_id", "empty"))
	}
	seen := map[string]bool{value: true}
	var al []string
	for _, list := range aliases {
		for _, a := range list {
			if a = strings.TrimSpace(a); a != "" && !seen[a] {
				seen[a] = true
				al = append(al, a)
			}
		}
	}
	it := s.Get(id)
	if len(it.Variants) > 0 {
		return s.Fail(opts, src.At("question_id", fmt.Sprintf("%q appears twice", id)))
	}
	it.Variants = append(it.Variants, item.Variant{Language: "eng", Form: item.English, Question: strings.TrimSpace(q),
		Answer: strings.TrimSpace(value), Aliases: al, Source: src.Place()})
	return nil
}

type hfRow struct {
	Question   *string `parquet:"question,optional"`
	QuestionID *string `parquet:"question_id,optional"`
	Answer     *struct {
		Aliases           *pqlist.List[string] `parquet:"aliases,optional"`
		NormalizedAliases *pqlist.List[string] `parquet:"normalized_aliases,optional"`
		Value             *string              `parquet:"value,optional"`
	} `parquet:"answer,optional"`
}

func loadParquet(ctx context.Context, path string, opts item.Options) (*item.Set, error) {
	s := &item.Set{Dataset: "triviaqa"}
	err := pqlist.Each(ctx, path, "TriviaQA parquet (want question, question_id, answer{aliases, normalized_aliases, value})",
		func(r *hfRow, src item.Problem) error {
			if r.Answer == nil {
				return s.Fail(opts, src.At("answer", "null"))
			}
			return add(s, opts, src, pqlist.Deref(r.QuestionID), pqlist.Deref(r.Question), pqlist.Deref(r.Answer.Value),
				pqlist.Values(r.Answer.Aliases), pqlist.Values(r.Answer.NormalizedAliases))
		})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func loadJSONL(ctx context.Context, path string, opts item.Options) (*item.Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading TriviaQA: %w", err)
	}
	defer f.Close()
	s := &item.Set{Dataset: "triviaqa"}
	sc := lines.New(f, path, 16<<20)
	for sc.Scan() {
		n := sc.Line()
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("reading %s: %w", path, ctx.Err())
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		src := item.Problem{File: path, Line: n}
		r, p := jsonlist.Decode[struct {
			Context *string  `json:"context"`
			Answer  *string  `json:"answer"`
			Aliases []string `json:"aliases"`
		}](sc.Bytes(), src, 0, func(int64) int { return n })
		if p != nil {
			if err := s.Fail(opts, *p); err != nil {
				return nil, err
			}
			continue
		}
		q := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(pqlist.Deref(r.Context)), "Question:"), "Answer:")
		if err := add(s, opts, src, strconv.Itoa(n), q, pqlist.Deref(r.Answer), r.Aliases); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// originalRecord is one question of the original release.
type originalRecord struct {
	Question   string `json:"Question"`
	QuestionID string `json:"QuestionId"`
	Answer     struct {
		Aliases           []string `json:"Aliases"`
		NormalizedAliases []string `json:"NormalizedAliases"`
		Value             string   `json:"Value"`
	} `json:"Answer"`
}

// loadOriginal streams {"Data": [...], ...}: each record is decoded and
// checked on its own, its line counted as the decoder passes it.
func loadOriginal(ctx context.Context, path string, opts item.Options) (*item.Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading TriviaQA: %w", err)
	}
	defer f.Close()
	lines := jsonpos.NewCounter(bufio.NewReaderSize(f, 1<<20))
	dec := json.NewDecoder(lines)
	bad := func(msg string) error {
		return item.Problem{File: path, Line: lines.Line(dec.InputOffset()), Msg: msg}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, item.Problem{File: path, Line: 1, Msg: "want a JSON object with a \"Data\" list"}
	}
	s := &item.Set{Dataset: "triviaqa"}
	sawData := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, bad(err.Error())
		}
		if kt != "Data" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, bad(err.Error())
			}
			continue
		}
		sawData = true
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, bad(`field "Data": want a list`)
		}
		err = jsonlist.Each(ctx, dec, path, lines.Line, "Data", s, opts, func(r *originalRecord, src item.Problem) error {
			return add(s, opts, src, r.QuestionID, r.Question, r.Answer.Value, r.Answer.Aliases, r.Answer.NormalizedAliases)
		})
		if err != nil {
			return nil, err
		}
	}
	if !sawData {
		return nil, item.Problem{File: path, Msg: `no "Data" list`}
	}
	return s, nil
}
