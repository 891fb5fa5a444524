package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"gopkg.in/yaml.v3"
)

// ScoringInputs names what the experiment's scored answers depend on,
// besides the records, each with a hash: every top-level key of the
// experiment's portable YAML (Portable) but engine, human_labels and
// description ("experiment.yaml <key>": the study's own options, the
// models, the dataset, abstain:), each input file ("input <path>"), each
// prompt template ("template <name>") and each tokenizer.json named for
// offline token counts ("tokenizer <model>"). inputs are the input files'
// hashes when the caller has just made them (InputHashes); nil hashes the
// files here.
func (e *Experiment) ScoringInputs(inputs map[string]string) (map[string]string, error) {
	out := map[string]string{}
	b, err := e.Portable()
	if err != nil {
		return nil, err
	}
	src := &yaml.Node{}
	if err := yaml.Unmarshal(b, src); err != nil {
		return nil, fmt.Errorf("experiment %s: its portable YAML: %w", e.Name, err)
	}
	m := topMapping(src)
	if m == nil {
		return nil, fmt.Errorf("experiment %s: its portable YAML is not a mapping", e.Name)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if k == "engine" || k == "human_labels" || k == "description" { // how requests were sent, read by the tables, prose
			continue
		}
		v := *m.Content[i+1]
		v.HeadComment, v.LineComment, v.FootComment = "", "", ""
		b, err := yaml.Marshal(&v)
		if err != nil {
			return nil, fmt.Errorf("experiment %s: key %s: %w", e.Name, k, err)
		}
		h := sha256.Sum256(b)
		out["experiment.yaml "+k] = hex.EncodeToString(h[:])
	}
	if inputs == nil {
		if inputs, err = e.InputHashes(); err != nil {
			return nil, err
		}
	}
	for p, h := range inputs {
		out["input "+p] = h
	}
	for name, h := range e.Templates() {
		out["template "+name] = h
	}
	for _, m := range e.allModels() {
		if p := e.TokenizerPath(*m); p != "" {
			if out["tokenizer "+m.Name], err = fileDigest(p); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
