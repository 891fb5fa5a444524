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
	"sync"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/catalog"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies/protocol"
	"gopkg.in/yaml.v3"
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
		e.checkKeys(nil, topMapping(root), nil, c, nil)
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
	format, _ := catalog.ParseFormat(e.Dataset.Format) // "" when absent: detected
	o.SkipInvalid, o.Seed = e.Dataset.SkipInvalid, e.SeedOrDefault()
	set, _, err := catalog.Load(ctx, e.Resolve(e.Dataset.Path), format, lang.New(), nil, o)
	if err != nil {
		return nil, Problems{{Line: lineOf(e.src, "dataset", "path"), Msg: fmt.Sprintf("dataset: %v", err)}}
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
func (e *Experiment) StreamStage(stage int, prior run.Lookup, withheld func(engine.Key)) iter.Seq2[engine.Request, error] {
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

// CheckCoverage compares the (language, form) pairs a study asks with the
// items set has. A language the set has for none of its asked forms, and a
// form the set has for none of the asked languages, are problems at their
// YAML lines naming what the set has: a paper table must not lose a
// language unseen. The other asked pairs without items (a dataset's gaps
// by design) are listed in the set's notes (the manifest's dataset notes,
// the run's log) and in the returned note, for the report; "" when none.
// forms are the values of the study's forms: option (for their lines).
func (e *Experiment) CheckCoverage(set *item.Set, asked []item.LangForm, forms []string) (string, error) {
	cov := set.Coverage(asked)
	ps := e.missingLanguages(set, cov, cov.Languages)
	var langs []string
	for _, lf := range asked {
		langs = append(langs, lf.Language)
	}
	for _, f := range cov.Forms {
		line := 0
		for i, v := range forms {
			if g, err := item.ParseForm(v); err == nil && g == f {
				line = lineOf(e.src, "forms", strconv.Itoa(i))
			}
		}
		ps = append(ps, Problem{Line: line, Msg: fmt.Sprintf("forms: dataset %s has the %s form for none of the asked languages; it has %s for them",
			set.Dataset, f, strings.Join(cov.HasForms(langs...), ", "))})
	}
	if len(ps) > 0 {
		return "", ps
	}
	note := cov.GapNote(set.Dataset)
	if note != "" {
		set.Notes = append(set.Notes, note)
	}
	return note, nil
}

// CheckLanguages refuses asked languages (ISO 639-3 codes) of which set
// has no item in any form, at their YAML lines, naming what set has.
func (e *Experiment) CheckLanguages(set *item.Set, isos []string) error {
	cov := set.Coverage(nil)
	has := cov.HasLanguages()
	missing := slices.DeleteFunc(slices.Clone(isos), func(iso string) bool { return slices.Contains(has, iso) })
	if ps := e.missingLanguages(set, cov, missing); len(ps) > 0 {
		return ps
	}
	return nil
}

// missingLanguages are the problems of asked languages set lacks.
func (e *Experiment) missingLanguages(set *item.Set, cov item.Coverage, isos []string) Problems {
	reg := lang.New()
	var ps Problems
	for _, iso := range isos {
		line, name := 0, iso
		for i, v := range e.Languages {
			if l, err := reg.Lookup(v); err == nil && l.ISO3 == iso {
				line, name = lineOf(e.src, "languages", strconv.Itoa(i)), fmt.Sprintf("%s (%s, %s)", v, l.Name, iso)
			}
		}
		ps = append(ps, Problem{Line: line, Msg: fmt.Sprintf("languages: %s is not in dataset %s, which has %s",
			name, set.Dataset, strings.Join(cov.HasLanguages(), ", "))})
	}
	return ps
}

// TableGroup is some of a study's tables, built together because they
// share work (an index of the outcomes, the pairs the CLC tables read).
type TableGroup struct {
	// Names are the tables Build may return: every one it can, those its
	// rows and options do not call for (scaling without model sizes)
	// included. A name is in one group only.
	Names []string
	// Build builds the group's tables, in report order. get builds
	// (once) a table of another group that these are laid out from; it
	// returns nil for a table the study does not have.
	Build func(get func(name string) *tables.Table) []*tables.Table
}

// TableGrouper is implemented by a plan whose tables can be built group
// by group, so that asking for one table builds only its group (and the
// groups it reads). Its groups, built in order, give the tables its
// Tables gives, in the same order.
type TableGrouper interface {
	TableGroups(rows []score.Row, opt tables.Options) []TableGroup
}

// TableSet is a study's tables, built on demand: Table builds the group
// that holds the table asked for, All every group. Safe for concurrent
// use.
type TableSet struct {
	mu     sync.Mutex
	groups []TableGroup
	built  [][]*tables.Table // per group, nil until built
	// Builds counts the groups built (a test reads it to see that asking
	// for one table builds one group).
	Builds int
}

// TableSet prepares the study's tables over rows without building any
// (for a plan that is not a TableGrouper, the first Table builds them
// all). extra groups come after the study's (the answers table).
func (e *Experiment) TableSet(rows []score.Row, extra ...TableGroup) (*TableSet, error) {
	if e.plan == nil {
		return nil, fmt.Errorf("experiment %s is not built", e.Name)
	}
	o, err := e.tableOptions()
	if err != nil {
		return nil, err
	}
	var groups []TableGroup
	if g, ok := e.plan.(TableGrouper); ok {
		groups = g.TableGroups(rows, o)
	} else {
		plan := e.plan
		groups = []TableGroup{{Build: func(func(string) *tables.Table) []*tables.Table { return plan.Tables(rows, o) }}}
	}
	groups = append(groups, extra...)
	return &TableSet{groups: groups, built: make([][]*tables.Table, len(groups))}, nil
}

// Table builds (once) and returns the table name; false when the study
// has no such table.
func (s *TableSet) Table(name string) (*tables.Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.get(name)
	return t, t != nil
}

// Built returns table name when the group that holds it is built, and
// builds nothing: false when it is not built (yet).
func (s *TableSet) Built(name string) (*tables.Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ts := range s.built { // nil until built
		if t := find(ts, name); t != nil {
			return t, true
		}
	}
	return nil, false
}

// get is Table with s.mu held (nil: none): the group that declares name
// first, then those that declare none, then every group.
func (s *TableSet) get(name string) *tables.Table {
	for pass := range 3 {
		for i, g := range s.groups {
			if pass == 2 || (pass == 0 && slices.Contains(g.Names, name)) || (pass == 1 && g.Names == nil) {
				if t := find(s.build(i), name); t != nil {
					return t
				}
			}
		}
	}
	return nil
}

// find is the table of ts named name (nil: none).
func find(ts []*tables.Table, name string) *tables.Table {
	if i := slices.IndexFunc(ts, func(t *tables.Table) bool { return t.Name == name }); i >= 0 {
		return ts[i]
	}
	return nil
}

// build builds group i once.
func (s *TableSet) build(i int) []*tables.Table {
	if s.built[i] != nil {
		return s.built[i]
	}
	s.built[i] = []*tables.Table{} // a group reading itself through get finds nothing, not a loop
	s.Builds++
	s.built[i] = append(s.built[i], s.groups[i].Build(s.get)...)
	return s.built[i]
}

// All builds every group and returns every table, in report order.
func (s *TableSet) All() []*tables.Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*tables.Table
	for i := range s.groups {
		out = append(out, s.build(i)...)
	}
	return out
}
