// Package experiment holds experiments — read from YAML files or built as
// Go values — validates them (Validate without the disk, Build with it)
// and turns them into the stream of requests the engine runs, then into
// scored rows and tables.
//
// An experiment names its models (each with endpoints and served name),
// the decoding parameters, engine limits, and a study: a Study registered
// by name in a Registry (the built-in ones are in package studies).
// Experiment holds the fields every study shares; a study's own options
// are its own struct (Optioner), decoded from the same top-level keys of
// the file into Experiment.Options (a block such as scoring: may be
// declared by several studies, each with its own keys). The study checks
// what it reads and builds a Plan: its requests stage by stage, how its
// answers are extracted and scored, and its tables. This package knows no
// study's options and switches on no study's name.
package experiment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/internal/jsonpos"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
	"gopkg.in/yaml.v3"
)

// Experiment is one experiment: read from a file (Load, Parse) or built
// as a Go value.
type Experiment struct {
	Name string `yaml:"name"`
	// Description is one line on what the experiment is for (at most
	// MaxDescription characters, no line break), shown beside its name in
	// an index of runs; optional. It changes no request and no score.
	Description string `yaml:"description"`
	// Study names a registered study: indicklar, indicquest, mdi,
	// requests (the default with a requests file), synthetic (the default
	// with synthetic:), or one a program registers (see Studies).
	Study   string   `yaml:"study"`
	Dataset *Dataset `yaml:"dataset" study:"reads"` // the study's data
	// Languages are codes or names, as the language registry accepts
	// (shared: IndicKLAR and IndicQuest read them).
	Languages []string `yaml:"languages" study:"reads"`
	Sample    int      `yaml:"sample"` // items per experiment (a seeded subset, the same ids in every language); 0 = all
	Seed      *int64   `yaml:"seed"`   // default 12345 (the IndicKLAR authors' seed)
	Models    []Model  `yaml:"models"`
	Judge     *Model   `yaml:"judge"`
	// JudgeDecoding overrides the judge's decoding (default: temperature 0, 256 tokens).
	JudgeDecoding *engine.Decoding `yaml:"judge_decoding"`
	// Abstain adds abstention phrases per language (ISO 639-3 or any code
	// the registry reads) to the built-in lists.
	Abstain map[string][]string `yaml:"abstain"`
	// HumanLabels is a CSV (model, item, language, label ∈ {correct,
	// incorrect}) of human verdicts, compared with the scoring in the
	// report (shared: the experiment reads it into every study's tables).
	HumanLabels string          `yaml:"human_labels" study:"reads"`
	Decoding    engine.Decoding `yaml:"decoding"`
	Engine      EngineConfig    `yaml:"engine"`

	// Options are the study's own options: a pointer to the struct its
	// Options method returns (Optioner), decoded from the file's keys by
	// Load and Parse, set in Go directly or with the study's setters
	// (Set). Validation makes them the study's zero options when nil.
	Options any `yaml:"-"`

	// Studies are the studies Study is looked up in (not written to YAML):
	// bhasha.Load, bhasha.Parse and the bhasha constructors set the
	// built-in ones (package studies); a program registering its own
	// study sets a registry holding it.
	Studies *Registry `yaml:"-"`

	plan  Plan
	stray []any      // options Set made for another study than the one named (reported by Validate)
	src   *yaml.Node // the parsed file, for line numbers (nil when built in Go)
	built bool       // Build succeeded
	lazy  bool       // Build is left until the plan is needed (LoadOptions.Lazy)

	// Path is the file the experiment was read from ("" when built in code).
	Path string `yaml:"-"`
	// Hash is the SHA-256 of the experiment file's bytes.
	Hash string `yaml:"-"`
}

// MaxDescription bounds an experiment's description, in characters.
const MaxDescription = 200

// Model is one model entry.
type Model struct {
	Name           string   `yaml:"name"`
	ServedName     string   `yaml:"served_name"`
	Endpoints      []string `yaml:"endpoints"`
	APIKeyEnv      string   `yaml:"api_key_env"` // name of the variable holding the key; never the key
	SizeB          float64  `yaml:"size_b"`      // parameters in billions, for the scaling analysis (optional)
	Family         string   `yaml:"family"`      // model family (Llama, Gemma, Qwen, ...), for accuracy by family over size (optional)
	Tokenizer      string   `yaml:"tokenizer"`   // a tokenizer.json for offline token counts (optional, relative to the file)
	Revision       string   `yaml:"revision"`
	Root           string   `yaml:"root"`
	MaxConcurrency int      `yaml:"max_concurrency"`
}

// Dataset names a study's data.
type Dataset struct {
	Path        string `yaml:"path"`   // relative to the experiment file
	Format      string `yaml:"format"` // see datasets/catalog; detected when empty
	SkipInvalid bool   `yaml:"skip_invalid"`
}

// EngineConfig holds engine limits: time.Duration in Go, strings such as
// "30s" or "2m" in YAML; zero takes the engine's default.
type EngineConfig struct {
	AttemptTimeout  time.Duration `yaml:"attempt_timeout,omitempty"`
	RequestDeadline time.Duration `yaml:"request_deadline,omitempty"`
	MaxAttempts     int           `yaml:"max_attempts,omitempty"`
	RetryBase       time.Duration `yaml:"retry_base,omitempty"`
	RetryMax        time.Duration `yaml:"retry_max,omitempty"`
}

// LoadOptions adjust an experiment as it is loaded.
type LoadOptions struct {
	// SkipInvalid skips invalid dataset records (listed in the manifest)
	// whatever the file says (bhasha run --skip-invalid).
	SkipInvalid bool
	// Studies are the studies the file's study: may name (required for
	// any study; package studies has the built-in ones).
	Studies *Registry
	// Lazy leaves reading the dataset and building the plan to Build when
	// the study names its templates without them (Templater): Load then
	// makes every check but the dataset's parse, and Plan, Items and the
	// requests are nil until Build. For reading a run whose answers are
	// kept scored.
	Lazy bool
}

// Load reads, parses and validates an experiment file, reading a study's
// dataset (ctx cancels that). All problems found are reported together,
// each with its line number. o.Studies names the studies it may use.
func Load(ctx context.Context, path string, o LoadOptions) (*Experiment, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading experiment: %w", err)
	}
	return Parse(ctx, b, path, o)
}

// Parse parses and validates experiment YAML; name is used in messages and
// to resolve relative paths.
func Parse(ctx context.Context, b []byte, name string, o LoadOptions) (*Experiment, error) {
	if off, _, msg, bad := jsonpos.BadUTF8(b); bad {
		return nil, fmt.Errorf("%s: line %d: %s", name, bytes.Count(b[:off], []byte("\n"))+1, msg)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, yamlError(err))
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: the file is empty (an experiment needs at least name, models and a study or requests)", name)
	}
	var exp Experiment
	errs, err := decodeNode(&root, (*sharedFields)(&exp))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	exp.src, exp.Studies, exp.lazy = &root, o.Studies, o.Lazy
	sum := sha256.Sum256(b)
	exp.Hash = hex.EncodeToString(sum[:])
	exp.Path = name
	if o.SkipInvalid && exp.Dataset != nil {
		exp.Dataset.SkipInvalid = true
	}
	errs = append(errs, exp.validate(ctx, &root, true)...)
	if err := ctx.Err(); err != nil { // interrupted while reading the dataset
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(errs) > 0 {
		causesFirst(errs)
		return nil, fmt.Errorf("%s: %w", name, errs)
	}
	return &exp, nil
}

// yamlError corrects the line of yaml.v3's parser errors (one above the
// construct), adding a hint.
func yamlError(err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "yaml: ")
	n, problem := lineMsg(rest)
	if !ok || n == 0 {
		return err
	}
	hint, ok := map[string]string{
		"did not find expected ',' or ']'":    " (the [ list that starts on this line is not closed, or lacks a comma)",
		"did not find expected ',' or '}'":    " (the { mapping that starts on this line is not closed, or lacks a comma)",
		"did not find expected '-' indicator": blockHint, "did not find expected key": blockHint,
		"did not find expected node content": blockHint, "found undefined tag handle": blockHint,
	}[problem]
	if !ok {
		return fmt.Errorf("line %d: %s", n, problem)
	}
	return fmt.Errorf("line %d: %s%s", n+1, problem, hint)
}

const blockHint = " (in the block that starts on this line; check its indentation)"

// lineOf finds the line of a path of mapping keys and sequence indexes.
func lineOf(n *yaml.Node, path ...string) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch i, err := strconv.Atoi(p); {
		case n.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(n.Content) && next == nil; j += 2 {
				if n.Content[j].Value == p {
					line, next = n.Content[j].Line, n.Content[j+1]
				}
			}
		case n.Kind == yaml.SequenceNode && err == nil && i >= 0 && i < len(n.Content):
			next = n.Content[i]
			line = next.Line
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// Validate checks the experiment without touching the disk or the
// network, and returns every problem found, each with its YAML line when
// the experiment was read from a file. Build makes the checks that need
// the disk (files exist, the dataset reads) and prepares the requests.
func (e *Experiment) Validate() Problems {
	return e.validate(context.Background(), e.src, false)
}

// Build checks what Validate checks and what needs the disk, reads a
// study's dataset (ctx cancels that) and prepares its requests. Load and
// Parse return built experiments; one made in Go is built by Job (which
// bhasha.Run calls). Building twice is harmless.
func (e *Experiment) Build(ctx context.Context) error {
	if e.built {
		return nil
	}
	e.lazy = false
	if errs := e.validate(ctx, e.src, true); len(errs) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("experiment %s: %w", e.Name, errs)
	}
	return nil
}

// validate makes every check; with disk it also checks files and reads
// the dataset (unless lazy), and marks the experiment built when nothing
// was wrong and the plan was built.
func (e *Experiment) validate(ctx context.Context, root *yaml.Node, disk bool) Problems {
	c := &Checker{root: root}
	defer func() { e.built = disk && !e.lazy && len(c.errs) == 0 && ctx.Err() == nil }()
	if strings.TrimSpace(e.Name) == "" {
		c.Add([]string{"name"}, "name is required")
	} else if strings.ContainsAny(e.Name, "|/\\") {
		c.Add([]string{"name"}, "name %q must not contain '|', '/' or '\\'", e.Name)
	}
	if strings.ContainsAny(e.Description, "\r\n") {
		c.Add([]string{"description"}, "description must be one line (it holds a line break)")
	} else if n := utf8.RuneCountInString(e.Description); n > MaxDescription {
		c.Add([]string{"description"}, "description must be at most %d characters (it has %d)", MaxDescription, n)
	}
	if e.Study == "" {
		e.Study = e.impliedStudy(root)
	}
	if e.Study == "" {
		c.Add(nil, "%s", e.Studies.studyRequired())
	}
	if len(e.Models) == 0 {
		c.Add([]string{"models"}, "at least one model is required")
	}
	seen := map[string]bool{}
	for i, m := range e.Models {
		at := func(f ...string) []string { return append([]string{"models", strconv.Itoa(i)}, f...) }
		switch {
		case m.Name == "":
			c.Add(at("name"), "models[%d]: name is required", i)
		case seen[m.Name]:
			c.Add(at("name"), "models[%d]: name %q is used twice", i, m.Name)
		case strings.Contains(m.Name, "|"):
			c.Add(at("name"), "models[%d]: name %q must not contain '|'", i, m.Name)
		}
		seen[m.Name] = true
		if m.ServedName == "" {
			c.Add(at("served_name"), "models[%d] (%s): served_name is required", i, m.Name)
		}
		if m.Tokenizer != "" && disk {
			if _, err := os.Stat(e.Resolve(m.Tokenizer)); err != nil {
				c.Add(at("tokenizer"), "models[%d] (%s): tokenizer: %v", i, m.Name, err)
			}
		}
		for j, ep := range m.Endpoints {
			if err := engine.CheckEndpoint(ep); err != nil {
				c.Add(at("endpoints", strconv.Itoa(j)), "models[%d] (%s): %v", i, m.Name, err)
			}
		}
		if m.MaxConcurrency < 0 {
			c.Add(at("max_concurrency"), "models[%d] (%s): max_concurrency must not be negative", i, m.Name)
		}
		if m.APIKeyEnv != "" && os.Getenv(m.APIKeyEnv) == "" {
			c.Add(at("api_key_env"), "models[%d] (%s): environment variable %s is not set", i, m.Name, m.APIKeyEnv)
		}
	}
	e.validateStudy(ctx, c, disk)
	if e.Judge != nil {
		if e.Judge.Name == "" || e.Judge.ServedName == "" {
			c.Add([]string{"judge"}, "judge needs name and served_name")
		}
		for j, ep := range e.Judge.Endpoints {
			if err := engine.CheckEndpoint(ep); err != nil {
				c.Add([]string{"judge", "endpoints", strconv.Itoa(j)}, "judge: %v", err)
			}
		}
		if e.Judge.APIKeyEnv != "" && os.Getenv(e.Judge.APIKeyEnv) == "" {
			c.Add([]string{"judge", "api_key_env"}, "judge: environment variable %s is not set", e.Judge.APIKeyEnv)
		}
	}
	if e.Decoding.MaxTokens < 0 {
		c.Add([]string{"decoding", "max_tokens"}, "decoding.max_tokens must not be negative")
	}
	if e.Engine.MaxAttempts < 0 {
		c.Add([]string{"engine", "max_attempts"}, "engine.max_attempts must be positive (or absent for the default 8), not %d", e.Engine.MaxAttempts)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"attempt_timeout", e.Engine.AttemptTimeout}, {"request_deadline", e.Engine.RequestDeadline},
		{"retry_base", e.Engine.RetryBase}, {"retry_max", e.Engine.RetryMax},
	} {
		if d.v < 0 {
			c.Add([]string{"engine", d.name}, "engine.%s: %s is negative (0 or absent takes the default)", d.name, d.v)
		}
	}
	return c.errs
}

// Resolve makes a path the experiment names relative to its file
// (unchanged when empty, absolute, or the experiment was built in Go).
func (e *Experiment) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || e.Path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(e.Path), p)
}

// Portable returns the experiment as YAML, its study's options beside
// the shared fields, with every file it names (dataset, tokenizers, human
// labels, the options' Inputs such as a requests file) made absolute, so
// that the copy reads the same inputs from any directory.
func (e *Experiment) Portable() ([]byte, error) {
	c := *e
	abs := func(p string) string { return absPath(e.Resolve(p)) }
	c.HumanLabels = abs(e.HumanLabels)
	c.Options = cloneOptions(e.Options)
	for _, in := range c.inputs() {
		*in.Path = abs(*in.Path)
	}
	if e.Dataset != nil {
		d := *e.Dataset
		d.Path = abs(d.Path)
		c.Dataset = &d
	}
	c.Models = slices.Clone(e.Models)
	for i := range c.Models {
		c.Models[i].Tokenizer = abs(c.Models[i].Tokenizer)
	}
	if e.Judge != nil {
		j := *e.Judge
		j.Tokenizer = abs(j.Tokenizer)
		c.Judge = &j
	}
	var doc yaml.Node
	if err := doc.Encode(&c); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	if c.Options != nil { // the study's options, after the shared fields
		var on yaml.Node
		if err := on.Encode(c.Options); err != nil {
			return nil, fmt.Errorf("experiment %s: writing the study's options: %w", e.Name, err)
		}
		m := topMapping(&doc)
		if on.Kind != yaml.MappingNode || m == nil {
			return nil, fmt.Errorf("experiment %s: writing the study's options: %T is not a mapping", e.Name, c.Options)
		}
		m.Content = append(m.Content, on.Content...)
	}
	b, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	return append([]byte("# written by bhasha: the experiment of this run, paths made absolute\n"), b...), nil
}

// TokenizerPath resolves a model's tokenizer relative to the experiment file.
func (e *Experiment) TokenizerPath(m Model) string { return e.Resolve(m.Tokenizer) }

// HumanLabelsPath resolves human_labels relative to the experiment file.
func (e *Experiment) HumanLabelsPath() string { return e.Resolve(e.HumanLabels) }

// allModels is the models and the judge (when it is not one of them).
func (e *Experiment) allModels() []*Model {
	var out []*Model
	for i := range e.Models {
		out = append(out, &e.Models[i])
	}
	if e.Judge != nil && !slices.ContainsFunc(e.Models, func(m Model) bool { return m.Name == e.Judge.Name }) {
		out = append(out, e.Judge)
	}
	return out
}

// ModelConfigs returns the engine's view of the models; API keys are read
// from the named environment variables here and nowhere else.
func (e *Experiment) ModelConfigs() []engine.ModelConfig {
	models := e.allModels()
	out := make([]engine.ModelConfig, len(models))
	for i, m := range models {
		out[i] = engine.ModelConfig{Name: m.Name, ServedName: m.ServedName, Endpoints: m.Endpoints,
			Revision: m.Revision, Root: m.Root, MaxConcurrency: m.MaxConcurrency, APIKeyEnv: m.APIKeyEnv}
		if m.APIKeyEnv != "" {
			out[i].APIKey = os.Getenv(m.APIKeyEnv)
		}
	}
	return out
}

// absPath is p made absolute (p itself when p is empty or that fails).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil && p != "" {
		return a
	}
	return p
}

// InputHashes returns the SHA-256 of each input file the experiment reads
// (dataset, the options' Inputs such as a requests file), keyed by
// absolute path, for the manifest; the experiment file's own hash is Hash.
func (e *Experiment) InputHashes() (map[string]string, error) {
	out := map[string]string{}
	var err error
	if e.Dataset != nil && e.Dataset.Path != "" {
		p := e.Resolve(e.Dataset.Path)
		if out[absPath(p)], err = hashTree(p); err != nil {
			return nil, err
		}
	}
	for _, in := range e.inputs() {
		if *in.Path == "" {
			continue
		}
		p := e.Resolve(*in.Path)
		if out[absPath(p)], err = fileDigest(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hashFile is the SHA-256 of one file, streamed through buf (nil: its own).
func hashFile(p string, buf []byte) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	// hidden behind io.Reader, so that os.File's WriteTo does not take a buffer
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, buf); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// fileDigest is the SHA-256 of one file, in hex; its error names p.
func fileDigest(p string) (string, error) {
	b, err := hashFile(p, nil)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", p, err)
	}
	return hex.EncodeToString(b), nil
}

// hashTree is the SHA-256 of a file, or of a directory's files (each
// relative path, a NUL, its SHA-256, in path order), following symbolic
// links; a link back into a directory being walked is an error.
func hashTree(root string) (string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("hashing inputs: %w", err)
	}
	if !st.IsDir() {
		return fileDigest(root)
	}
	h, buf := sha256.New(), make([]byte, 64<<10)
	open := map[string]bool{} // the real paths of the directories being walked
	var walk func(dir, rel string) error
	walk = func(dir, rel string) error {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return err
		}
		if open[real] {
			return fmt.Errorf("%s links back into %s", dir, real)
		}
		open[real] = true
		defer delete(open, real)
		es, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range es { // ReadDir's order: by name
			p, name := filepath.Join(dir, e.Name()), filepath.Join(rel, e.Name())
			st, err := os.Stat(p) // through a link
			if err != nil {
				return err
			}
			if st.IsDir() {
				if err := walk(p, name); err != nil {
					return err
				}
				continue
			}
			b, err := hashFile(p, buf)
			if err != nil {
				return err
			}
			h.Write([]byte(name))
			h.Write([]byte{0})
			h.Write(b)
		}
		return nil
	}
	if err := walk(root, ""); err != nil {
		return "", fmt.Errorf("hashing %s: %w", root, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Job builds the experiment (Build; ctx cancels reading its dataset) and
// returns what a run of it needs (run.Execute, batch.Export): its name,
// file and hash, its portable copy (Portable), decoding, the hashes of its
// inputs and templates, its models and engine limits, and its requests
// stage by stage with the study's extraction. The job reads the
// experiment's plan: build it again after changing the experiment.
func (e *Experiment) Job(ctx context.Context) (*run.Job, error) {
	if err := e.Build(ctx); err != nil {
		return nil, err
	}
	portable, err := e.Portable()
	if err != nil {
		return nil, err
	}
	inputs, err := e.InputHashes()
	if err != nil {
		return nil, err
	}
	j := &run.Job{
		Name: e.Name, Path: e.Path, Hash: e.Hash, Copy: portable, Decoding: e.Decoding,
		Inputs: inputs, Templates: e.Templates(),
		Models: e.ModelConfigs(), Stages: e.Stages(),
		Engine: engine.Options{AttemptTimeout: e.Engine.AttemptTimeout, RequestDeadline: e.Engine.RequestDeadline,
			MaxAttempts: e.Engine.MaxAttempts, RetryBase: e.Engine.RetryBase, RetryMax: e.Engine.RetryMax},
		Requests: e.StreamStage, Extract: e.Extract,
	}
	if set := e.Items(); set != nil {
		d := &run.DatasetInfo{Name: set.Dataset, Items: len(set.Items), Skipped: set.Skipped, Notes: set.Notes, Missing: map[string]int{}}
		for lf, ids := range set.Check().Missing {
			d.Missing[lf] = len(ids)
		}
		j.Dataset = d
	}
	return j, nil
}

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
