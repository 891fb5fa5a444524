// Package protocol holds what the studies' request builders share: the
// prompt templates (embedded files, each with its citation header, hashed
// into every run manifest), the JSON schema of structured outputs, and
// the contract between stages (Lookup, ErrWithheld). Each study builds its
// own requests (studies/indicklar, studies/indicquest,
// studies/distractors).
package protocol

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

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

// ErrWithheld marks a request that cannot be built yet: its first stage
// has no answer. Requests yields it with the request's key; consumers
// count it and send nothing.
var ErrWithheld = errors.New("withheld: its first stage has no answer")

// Lookup returns the record of an earlier stage, by key.
type Lookup func(engine.Key) (*engine.Record, bool)

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
