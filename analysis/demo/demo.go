// Package demo assembles the built-in default experiment: the simulator
// loaded with the bundled IndicKLAR Hindi facts, three simulated models,
// and every fact asked in native, code-mixed and English form. Everything
// it produces is labelled simulated.
package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bhashalab/bhasha/analysis/engine"
	"github.com/bhashalab/bhasha/analysis/experiment"
	"github.com/bhashalab/bhasha/analysis/run"
	"github.com/bhashalab/bhasha/analysis/sim"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// SystemPrompt is the demo's instruction (the distractor study's wording).
const SystemPrompt = "Answer the question with a short phrase only. If you do not know, say: I don't know."

// Questions reads the bundled IndicKLAR page-demo facts.
func Questions(bundle string) (*item.Set, error) {
	return klar.LoadPageDemo(bundle, lang.New(), item.Options{})
}

// Facts turns an item set into simulator facts: each variant's question is
// its cue, and its answer and candidates what the simulated models know.
func Facts(s *item.Set) []sim.Fact {
	var out []sim.Fact
	for _, it := range s.Items {
		for _, v := range it.Variants {
			cues := []string{}
			if v.Question != "" {
				cues = append(cues, v.Question)
			}
			if v.Subject != "" {
				cues = append(cues, v.Subject)
			}
			if len(cues) == 0 {
				continue
			}
			out = append(out, sim.Fact{ID: it.ID, Relation: it.Relation, Language: v.Language, Form: string(v.Form),
				Cues: cues, Answer: v.Answer, Candidates: v.Candidates})
		}
	}
	return out
}

// WriteRequests writes one chat request line per question.
func WriteRequests(s *item.Set, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing demo requests: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range s.Items {
		for _, v := range it.Variants {
			rl := experiment.RequestLine{Item: it.ID, Language: v.Language, Form: string(v.Form), Strategy: "zero-shot", Kind: engine.Chat,
				Messages: []engine.Message{{Role: "system", Content: SystemPrompt}, {Role: "user", Content: v.Question}}}
			if err := enc.Encode(rl); err != nil {
				f.Close()
				return fmt.Errorf("writing demo requests: %w", err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing demo requests: %w", err)
	}
	return f.Close()
}

// Experiment is the demo's experiment file; the endpoint is replaced at run time.
const Experiment = `# Built-in default experiment (SIMULATED models; the endpoint is replaced by the in-process simulator): every bundled IndicKLAR
# Hindi fact asked in native, code-mixed and English form, zero-shot.
name: demo
requests: requests.jsonl
models:
  - {name: tiny-1b, served_name: sim-tiny-1b, endpoints: [http://127.0.0.1:8000/v1], max_concurrency: 32}
  - {name: base-8b, served_name: sim-base-8b, endpoints: [http://127.0.0.1:8000/v1], max_concurrency: 32}
  - {name: large-70b, served_name: sim-large-70b, endpoints: [http://127.0.0.1:8000/v1], max_concurrency: 32}
decoding: {max_tokens: 32, temperature: 0, seed: 0}
`

// Run writes the demo's inputs under out, serves the simulator on a
// loopback port and runs the experiment into out.
func Run(ctx context.Context, bundle, out, cacheDir string, log io.Writer) (*run.Manifest, error) {
	qs, err := Questions(bundle)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := WriteRequests(qs, filepath.Join(out, "requests.jsonl")); err != nil {
		return nil, err
	}
	cfg := filepath.Join(out, "experiment.yaml")
	if err := os.WriteFile(cfg, []byte(Experiment), 0o644); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	srv, err := sim.New(sim.Config{Facts: Facts(qs)})
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	url, err := srv.Start(sctx, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	exp, err := experiment.Load(cfg)
	if err != nil {
		return nil, err
	}
	return run.Execute(ctx, exp, run.Options{Out: out, Endpoint: url, CacheDir: cacheDir, Log: log})
}
