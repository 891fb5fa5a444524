package experiment

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/catalog"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/protocol"
)

// DefaultSeed is the IndicKLAR authors' seed.
const DefaultSeed = 12345

// Study is one study, registered by name in a Registry: how it checks
// what it reads, and how it builds its Plan. Its own options (Optioner),
// the shared fields it reads of those not every study reads
// (FieldReader) and the option that implies it (Implied) are optional
// methods. A study holds no state of its own; everything a run needs is
// in the Plan.
type Study interface {
	// Name is the study's name in YAML (study: <name>).
	Name() string
	// About is one line on what the study measures.
	About() string
	// Check reports the problems of the fields and options the study
	// reads, without the disk or the network (c.Add names each problem's
	// YAML path). Experiment.Options holds the study's options.
	Check(e *Experiment, c *Checker)
	// Build reads what the study needs (its dataset: Experiment.LoadItems)
	// and returns its plan. Called only when Check found nothing.
	Build(ctx context.Context, e *Experiment) (Plan, error)
}

// Templater is implemented by a study that names its plan's prompt
// templates (Plan.Templates) from the experiment's options alone, without
// its dataset: an experiment loaded with LoadOptions.Lazy reads its
// dataset only when its plan is needed.
type Templater interface {
	Templates(e *Experiment) map[string]string
}

// Plan is a built study: its requests stage by stage, and how its answers
// are read, scored and tabulated.
type Plan interface {
	// Stages is the number of request stages. Stage s requests may depend
	// on the records of earlier stages (a two-step strategy's second
	// prompt holds the first answer; a judge reads the answer).
	Stages() int
	// Requests yields the requests of stage (1-based) for one model of the
	// experiment; prior finds that model's earlier-stage records. A request
	// whose input is not available (its first stage failed) is yielded as
	// its key with protocol.ErrWithheld, for the caller to count, never sent.
	Requests(exp, model string, stage int, prior protocol.Lookup) iter.Seq2[engine.Request, error]
	// Templates names the prompt templates used, with their SHA-256.
	Templates() map[string]string
	// Extract reads an ok record's response the way the study scores it
	// (nil when the record holds nothing to extract).
	Extract(r *engine.Record) *extract.Result
	// Items is the study's items (nil when it reads no dataset).
	Items() *item.Set
	// Score scores the records, one per key, each already extracted; a
	// study without a criterion returns one row per answer all the same.
	Score(recs []*engine.Record) ([]score.Row, error)
	// Tables computes the study's tables from its rows.
	Tables(rows []score.Row, opt tables.Options) []*tables.Table
}

// RequestReader is implemented by a plan whose scoring reads the request
// bodies the records keep (Record.Request); ScoreContext drops them otherwise,
// to keep a large run's scoring small.
type RequestReader interface {
	ReadsRequests() bool
}

// Noter is implemented by a plan with something to say about how its
// numbers were made (a position cue, an option in force); reports print
// the notes beside the tables.
type Noter interface {
	Notes() []string
}

// PlanNotes are the plan's notes (Noter), if any.
func (e *Experiment) PlanNotes() []string {
	if n, ok := e.plan.(Noter); ok {
		return n.Notes()
	}
	return nil
}

// AnswerSchemer is implemented by a plan that declares its answer schema:
// the criteria and verdicts its Score fills in each Row beside the common
// fields. answers.csv, the workbook's samples sheet, the HTML explorer,
// the column descriptions and bhasha.Sample are generated from it. A plan
// without one gets score.DefaultSchema (its strict criterion, correct).
type AnswerSchemer interface {
	AnswerSchema() *score.Schema
}

// AnswerSchema is the plan's answer schema (AnswerSchemer), else
// score.DefaultSchema; a plan not yet built has the default too.
func (e *Experiment) AnswerSchema() *score.Schema {
	if s, ok := e.plan.(AnswerSchemer); ok {
		if schema := s.AnswerSchema(); schema != nil {
			return schema
		}
	}
	return score.DefaultSchema()
}

// Figurer is implemented by a plan that draws figures from its tables:
// Figures returns them in report order, each with its caption, n and
// SIMULATED as fields (chart.Figure), not yet stamped (chart.Finish does
// that for the report). A table the plan did not make may be absent
// from ts; a figure whose table is empty may be a figure saying why
// (chart.Empty).
type Figurer interface {
	Figures(ts []*tables.Table) ([]chart.Figure, error)
}

// Figures are the plan's figures from its tables ts (Figurer), finished
// for the report (chart.Finish): nil when the plan draws none.
func (e *Experiment) Figures(ts []*tables.Table) ([]chart.Figure, error) {
	f, ok := e.plan.(Figurer)
	if !ok {
		return nil, nil
	}
	figs, err := f.Figures(ts)
	if err != nil {
		return nil, err
	}
	return chart.Finish(figs)
}

// Checker collects a study's problems with their YAML lines.
type Checker struct {
	root *yaml.Node
	errs Problems
}

// Add records a problem at the YAML path (mapping keys and list indexes,
// e.g. "strategies", "2"); the line is 0 for an experiment built in Go.
func (c *Checker) Add(path []string, format string, a ...any) {
	c.errs = append(c.errs, Problem{Line: lineOf(c.root, path...), Msg: fmt.Sprintf(format, a...)})
}

// List parses each value of a list field, reporting a bad one at its own line.
func List[T any](c *Checker, field string, vals []string, parse func(string) (T, error)) []T {
	var out []T
	for i, v := range vals {
		x, err := parse(v)
		if err != nil {
			c.Add([]string{field, strconv.Itoa(i)}, "%v", err)
			continue
		}
		out = append(out, x)
	}
	return out
}

// Registry holds the studies an experiment's study: field can name. It is
// a value (no package-level registry): bhasha's front door and the CLI
// pass the built-in one (package studies), a program adds its own.
type Registry struct {
	studies []Study // in registration order
}

// NewRegistry registers studies in order; a name used twice is an error.
func NewRegistry(studies ...Study) (*Registry, error) {
	r := &Registry{}
	for _, s := range studies {
		if err := r.Add(s); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers one more study; a name used twice, and an option of its
// own spelt as a shared field's key, are errors.
func (r *Registry) Add(s Study) error {
	name := s.Name()
	if name == "" || strings.ContainsAny(name, " |/") {
		return fmt.Errorf("registering study %q: a name is one word", name)
	}
	if _, dup := r.Lookup(name); dup {
		return fmt.Errorf("registering study %q: the name is taken", name)
	}
	shared := topKeys(reflect.TypeFor[Experiment]())
	for _, k := range topKeys(optionsType(s)) {
		if slices.Contains(shared, k) {
			return fmt.Errorf("registering study %q: its option %q is a shared field of the experiment (read it from Experiment)", name, k)
		}
	}
	r.studies = append(r.studies, s)
	return nil
}

// all is the registered studies in registration order (none for nil).
func (r *Registry) all() []Study {
	if r == nil {
		return nil
	}
	return r.studies
}

// Lookup finds a study by name (a scan of the registered studies).
func (r *Registry) Lookup(name string) (Study, bool) {
	i := slices.IndexFunc(r.all(), func(s Study) bool { return s.Name() == name })
	if i < 0 {
		return nil, false
	}
	return r.studies[i], true
}

// Names lists the registered studies in registration order.
func (r *Registry) Names() []string {
	var out []string
	for _, s := range r.all() {
		out = append(out, s.Name())
	}
	return out
}

// Clone copies the registry (to add studies without changing the original).
func (r *Registry) Clone() *Registry {
	return &Registry{studies: slices.Clone(r.all())}
}

// validateStudy finds the study, settles its options, refuses the
// options and shared fields it does not read and the file's unknown keys,
// lets it check the ones it does and, with disk, builds its plan.
func (e *Experiment) validateStudy(ctx context.Context, c *Checker, disk bool) {
	root, before := c.root, len(c.errs)
	s, ok := e.Studies.Lookup(e.Study)
	switch {
	case ok:
	case e.Study == "": // validate reports it
	case e.Studies == nil:
		c.Add([]string{"study"}, "study %q: no study registry (bhasha.Load, bhasha.Parse and the constructors set the built-in studies; a Go value sets Experiment.Studies)", e.Study)
	default:
		c.Add([]string{"study"}, "unknown study %q (want one of %s; a program's own study is added to the registry: bhasha.Register, bhasha.WithStudies)", e.Study, strings.Join(e.Studies.Names(), ", "))
		c.errs[len(c.errs)-1].Err = ErrUnknownStudy
	}
	if !ok {
		e.checkFile(nil, topMapping(root), c, nil)
		return
	}
	e.placeOptions(s, root, c)
	for code := range e.Abstain {
		if _, err := lang.New().Lookup(code); err != nil {
			c.Add([]string{"abstain", code}, "abstain: %v", err)
		}
	}
	if disk { // the files the study reads exist, reported with every other problem
		files := append([]Input{{Key: "human_labels", Path: &e.HumanLabels}}, e.inputs()...)
		if e.Dataset != nil {
			files = append(files, Input{Key: "dataset.path", Path: &e.Dataset.Path})
		}
		for _, f := range files {
			key, _, _ := strings.Cut(f.Key, ".")
			if *f.Path == "" || !declares(s, key) {
				continue
			}
			if _, err := os.Stat(e.Resolve(*f.Path)); err != nil {
				c.Add(strings.Split(f.Key, "."), "%s: %v", strings.ReplaceAll(key, "_", " "), err)
			}
		}
	}
	if e.Sample < 0 {
		c.Add([]string{"sample"}, "sample must not be negative")
	}
	s.Check(e, c)
	if _, ok := s.(Templater); !ok {
		e.lazy = false // its templates need the plan
	}
	if !disk || len(c.errs) > before || e.lazy {
		return
	}
	plan, err := s.Build(ctx, e)
	var ps Problems
	switch {
	case errors.As(err, &ps):
		c.errs = append(c.errs, ps...)
	case err != nil:
		c.Add(nil, "building study %s: %v", e.Study, err)
	default:
		e.plan = plan
	}
}

// CheckDataset reports a missing dataset.path and a bad dataset.format
// (for studies that read a dataset).
func (e *Experiment) CheckDataset(c *Checker) {
	if e.Dataset == nil || e.Dataset.Path == "" {
		c.Add([]string{"dataset"}, "dataset.path is required for study %s", e.Study)
		return
	}
	if e.Dataset.Format != "" {
		if _, err := catalog.ParseFormat(e.Dataset.Format); err != nil {
			c.Add([]string{"dataset", "format"}, "%v", err)
		}
	}
}

// LoadItems reads the study's dataset (format detected unless named) and
// keeps the experiment's seeded sample of it. Its errors are Problems
// naming the dataset's YAML line.
func (e *Experiment) LoadItems(ctx context.Context) (*item.Set, error) {
	return e.LoadItemsWith(ctx, item.Options{})
}

// LoadItemsWith is LoadItems with the load options a study's own options
// set (IndicKLAR's prompt.shuffle_candidates: o.ShuffleCandidates); the
// experiment's seed and dataset.skip_invalid replace o's Seed and
// SkipInvalid.
func (e *Experiment) LoadItemsWith(ctx context.Context, o item.Options) (*item.Set, error) {
	c := &Checker{root: e.src}
	p := e.Resolve(e.Dataset.Path)
	var format catalog.Format
	if e.Dataset.Format != "" {
		format, _ = catalog.ParseFormat(e.Dataset.Format)
	}
	o.SkipInvalid, o.Seed = e.Dataset.SkipInvalid, e.SeedOrDefault()
	set, _, err := catalog.Load(ctx, p, format, lang.New(), nil, o)
	if err != nil {
		c.Add([]string{"dataset", "path"}, "dataset: %v", err)
		return nil, c.errs
	}
	return sample(set, e.Sample, e.SeedOrDefault()), nil
}

// SeedOrDefault is the experiment's seed (DefaultSeed unless set).
func (e *Experiment) SeedOrDefault() int64 {
	if e.Seed != nil {
		return *e.Seed
	}
	return DefaultSeed
}

// sample keeps n items chosen with a seeded shuffle of the ids (the same
// facts in every language), in their original order; n = 0 keeps all.
func sample(s *item.Set, n int, seed int64) *item.Set {
	if n <= 0 || n >= len(s.Items) {
		return s
	}
	keep := rand.New(rand.NewPCG(uint64(seed), 0x5a3c)).Perm(len(s.Items))[:n]
	slices.Sort(keep)
	out := &item.Set{Dataset: s.Dataset, Skipped: s.Skipped, Notes: append(s.Notes, fmt.Sprintf("sampled %d of %d items (seed %d)", n, len(s.Items), seed))}
	for _, i := range keep {
		out.Items = append(out.Items, s.Items[i])
	}
	return out
}

// Plan is the built study (nil before Build).
func (e *Experiment) Plan() Plan { return e.plan }

// Items returns the study's items (nil for studies without a dataset).
func (e *Experiment) Items() *item.Set {
	if e.plan == nil {
		return nil
	}
	return e.plan.Items()
}

// HasJudge reports whether the experiment names a judge model (whose
// verdicts bhasha report may still ask for).
func (e *Experiment) HasJudge() bool { return e.Judge != nil }

// Stages is the number of request stages (2 for two-step strategies and judges).
func (e *Experiment) Stages() int {
	if e.plan != nil {
		return e.plan.Stages()
	}
	return 1
}

// Templates names the prompt templates used, with their SHA-256 (none
// before Build, unless the study is a Templater).
func (e *Experiment) Templates() map[string]string {
	if e.plan != nil {
		return e.plan.Templates()
	}
	if s, ok := e.Studies.Lookup(e.Study); ok {
		if t, ok := s.(Templater); ok {
			return t.Templates(e)
		}
	}
	return nil
}

// StreamStage yields the requests of one stage for every model; prior
// finds the records of earlier stages. Requests that cannot be built yet
// (their first stage has no answer) are not yielded; when withheld is not
// nil it is called with each one's key, over every model, as the stream is
// read.
func (e *Experiment) StreamStage(stage int, prior protocol.Lookup, withheld func(engine.Key)) iter.Seq2[engine.Request, error] {
	return func(yield func(engine.Request, error) bool) {
		if e.plan == nil {
			yield(engine.Request{}, fmt.Errorf("experiment %s is not built", e.Name))
			return
		}
		for _, m := range e.Models {
			for r, err := range e.plan.Requests(e.Name, m.Name, stage, prior) {
				if errors.Is(err, protocol.ErrWithheld) {
					if withheld != nil {
						withheld(r.Key)
					}
					continue
				}
				if !yield(r, err) {
					return
				}
			}
		}
	}
}

// Extract fills rec.Extracted for an ok record.
func (e *Experiment) Extract(rec *engine.Record) {
	if e.plan != nil && rec.Status == engine.StatusOK {
		rec.Extracted = e.plan.Extract(rec)
	}
}

// Tables computes the study's tables from its scored rows, with the model
// sizes and human labels the experiment names.
func (e *Experiment) Tables(rows []score.Row) ([]*tables.Table, error) {
	ts, err := e.TableSet(rows)
	if err != nil {
		return nil, err
	}
	return ts.All(), nil
}

// tableOptions are the model sizes, families and human labels the
// experiment names.
func (e *Experiment) tableOptions() (tables.Options, error) {
	o := tables.Options{Sizes: map[string]float64{}, Families: map[string]string{}}
	for _, m := range e.Models {
		if m.SizeB > 0 {
			o.Sizes[m.Name] = m.SizeB
		}
		if m.Family != "" {
			o.Families[m.Name] = m.Family
		}
	}
	if p := e.HumanLabelsPath(); p != "" {
		h, err := tables.ReadHumanLabels(p)
		if err != nil {
			return o, err
		}
		o.Human = h
	}
	return o, nil
}
