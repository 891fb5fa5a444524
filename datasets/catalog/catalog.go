// Package catalog knows every dataset format Bhasha reads, recognises a
// path's format, and loads it into an item.Set.
package catalog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/datasets/bmlama"
	"github.com/bhashalab/bhasha/datasets/indicquest"
	"github.com/bhashalab/bhasha/datasets/internal/pqlist"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/datasets/triviaqa"
	"github.com/bhashalab/bhasha/datasets/truthfulqa"
)

// Format names a dataset layout.
type Format string

// Formats.
const (
	KLAR             Format = "klar"              // KLAR / IndicKLAR release: ROOT/<lang>/<relation>.json
	IndicKLARSamples Format = "indicklar-samples" // demo-backend/tools/samples.json
	IndicKLARPage    Format = "indicklar-page"    // docs/static/data/demo.json
	BMLAMA           Format = "bmlama"            // DIR/<lang>.tsv
	IndicQuest       Format = "indicquest"        // DIR/<Language>.csv (v1 and v2)
	TriviaQA         Format = "triviaqa"          // .parquet, original .json, llm-foundry .jsonl
	TruthfulQA       Format = "truthfulqa"        // mc_task.json or .parquet
)

// Formats lists every format.
var Formats = []Format{KLAR, IndicKLARSamples, IndicKLARPage, BMLAMA, IndicQuest, TriviaQA, TruthfulQA}

// ParseFormat validates a format name.
func ParseFormat(s string) (Format, error) {
	if f := Format(strings.ToLower(strings.TrimSpace(s))); slices.Contains(Formats, f) {
		return f, nil
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown dataset format %q (want one of %s)", s, strings.Join(names, ", "))
}

// Detect recognises the format of path from its layout and content.
func Detect(path string) (Format, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("dataset: %w", err)
	}
	if st.IsDir() {
		for _, probe := range []struct {
			glob string
			f    Format
		}{{"*/*.json", KLAR}, {"*.tsv", BMLAMA}, {"*.csv", IndicQuest}} {
			if m, _ := filepath.Glob(filepath.Join(path, probe.glob)); len(m) > 0 {
				return probe.f, nil
			}
		}
		return "", fmt.Errorf("%s: no dataset layout recognised (want <lang>/<relation>.json, <lang>.tsv or <Language>.csv)", path)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		return TriviaQA, nil
	case ".parquet":
		b, err := pqlist.Columns(path)
		if err != nil {
			return "", err
		}
		switch {
		case strings.Contains(b, "mc1_targets"):
			return TruthfulQA, nil
		case strings.Contains(b, "question_id") && strings.Contains(b, "answer"):
			return TriviaQA, nil
		}
		return "", fmt.Errorf("%s: parquet columns %s match no known dataset", path, b)
	case ".json":
		return detectJSON(path)
	case ".csv", ".tsv":
		return "", fmt.Errorf("%s: point at the directory that holds the per-language files", path)
	}
	return "", fmt.Errorf("%s: unknown dataset file type", path)
}

func detectJSON(path string) (Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(1 << 16)
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(head) > 0 && head[0] == '[' {
		return TruthfulQA, nil
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", fmt.Errorf("%s: not a JSON object or list", path)
	}
	t, err := dec.Token()
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	key, _ := t.(string)
	switch key {
	case "Data", "Domain", "Version", "VerifiedEval":
		return TriviaQA, nil
	case "relations", "languages", "facts":
		return IndicKLARSamples, nil
	case "model", "langs":
		return IndicKLARPage, nil
	case "name", "prompt_templates", "samples":
		return "", fmt.Errorf("%s is one KLAR relation file: point at the root that holds <lang>/<relation>.json", path)
	}
	return "", fmt.Errorf("%s: JSON starting with key %q matches no known dataset", path, key)
}

// Load reads path as format f ("" to detect it). langs restricts the
// languages where the format allows it (KLAR).
func Load(ctx context.Context, path string, f Format, reg *lang.Registry, langs []string, opts item.Options) (s *item.Set, _ Format, err error) {
	if f == "" {
		if f, err = Detect(path); err != nil {
			return nil, "", err
		}
	}
	switch f {
	case KLAR:
		s, err = klar.Load(ctx, path, reg, langs, opts)
	case IndicKLARSamples:
		s, err = klar.LoadDemoSamples(ctx, path, reg, opts)
	case IndicKLARPage:
		s, err = klar.LoadPageDemo(ctx, path, reg, opts)
	case BMLAMA:
		s, err = bmlama.Load(ctx, path, reg, opts)
	case IndicQuest:
		s, err = indicquest.Load(ctx, path, reg, opts)
	case TriviaQA:
		s, err = triviaqa.Load(ctx, path, opts)
	case TruthfulQA:
		s, err = truthfulqa.Load(ctx, path, opts)
	default:
		return nil, f, fmt.Errorf("unknown dataset format %q", f)
	}
	return s, f, err
}
