// Package protocol turns dataset items into the requests of the three
// studies, exactly as their authors' code builds them: prompt texts live
// in template files (embedded, hashed into every run manifest), and each
// study says how many stages it has and what each stage asks.
package protocol

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/runtime/engine"
)

//go:embed templates
var templateFS embed.FS

// scissors separates a template file's citation header from the prompt.
const scissors = "---8<---\n"

// Template returns the prompt text of templates/<name> (after the
// citation header) and the SHA-256 of the whole file.
func Template(name string) (text, hash string, err error) {
	b, err := templateFS.ReadFile("templates/" + name)
	if err != nil {
		return "", "", fmt.Errorf("prompt template %s: %w", name, err)
	}
	sum := sha256.Sum256(b)
	s := string(b)
	if i := strings.Index(s, scissors); i >= 0 {
		s = s[i+len(scissors):]
	}
	return s, hex.EncodeToString(sum[:]), nil
}

// TemplateNames lists every embedded template, sorted.
func TemplateNames() []string {
	var out []string
	fs.WalkDir(templateFS, "templates", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".txt") {
			out = append(out, strings.TrimPrefix(p, "templates/"))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// ErrWithheld marks a request that cannot be built yet: its first stage
// has no answer. Requests yields it with the request's key; consumers
// count it and send nothing.
var ErrWithheld = errors.New("withheld: its first stage has no answer")

// Lookup returns the record of an earlier stage, by key.
type Lookup func(engine.Key) (*engine.Record, bool)

// Study produces an experiment's requests stage by stage. Stage s
// requests may depend on the records of stages before s (a two-step
// strategy's second prompt holds the first answer).
type Study interface {
	// Stages is the number of stages (1 or 2).
	Stages() int
	// Requests yields the requests of stage (1-based) for one model of the
	// experiment; prior finds that model's earlier-stage records. A request
	// whose input is not available (the first stage failed) is yielded as
	// its key with ErrWithheld, for the caller to count, never sent.
	Requests(exp, model string, stage int, prior Lookup) iter.Seq2[engine.Request, error]
	// Templates names the prompt templates used, with their SHA-256.
	Templates() map[string]string
	// Extract reads an ok record's response the way the study scores it
	// (nil when the record holds nothing to extract, as mc1 log-probabilities).
	Extract(r *engine.Record) *extract.Result
}

// Schema builds vLLM's structured_outputs {"json": schema} for an object
// of required string fields.
func Schema(fields ...string) map[string]any {
	props := map[string]any{}
	req := make([]any, 0, len(fields))
	for _, f := range fields {
		props[f] = map[string]any{"type": "string"}
		req = append(req, f)
	}
	return map[string]any{"json": map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}}
}

func ptr[T any](v T) *T { return &v }
