// Package bhasha is the front door for notebooks and programs: build an
// experiment (in Go or from YAML), run it against vLLM endpoints or the
// built-in simulator, and read its results: typed tables, figures,
// per-answer samples, and the report (Results.WriteReport: the HTML
// report and the workbook).
//
//	exp := bhasha.IndicKLAR("data/IndicKLAR", bhasha.Languages("hin", "ben"), bhasha.Strategies("baseline", "tint-en"))
//	r, err := bhasha.Run(ctx, exp, bhasha.Endpoint("http://gpu1:8000/v1"))
//	acc, err := r.Table("accuracy")
//	fmt.Println(acc.Markdown())
//	df := acc.DataFrame()
//	err = r.WriteReport(ctx, "report.html", "report.xlsx", bhasha.ReportOptions{})
//
// With no endpoint a run answers from the in-process simulator, and says
// so (SIMULATED) in its first line, its manifest and every table.
//
// A study is a Study registered by name (BuiltinStudies: indicklar,
// indicquest, mdi, requests, synthetic); a program's own study is one
// package and one Register option:
//
//	exp := bhasha.New("brevity", "data/triviaqa.jsonl", bhasha.Register(brevity.Study{}))  // examples/brevity
package bhasha

import (
	"context"
	"slices"

	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
	"github.com/bhashalab/bhasha/studies/requests"
	"github.com/bhashalab/bhasha/study"
)

// Experiment is one experiment: a study (or a request file), its models,
// decoding and options. It is a plain value; Validate checks it without
// the disk or the network.
type Experiment = experiment.Experiment

// Model is one model of an experiment and where it is served.
type Model = experiment.Model

// Dataset names a study's data (path, format, skip_invalid).
type Dataset = experiment.Dataset

// Decoding holds the sampling parameters of a request-file experiment.
type Decoding = study.Decoding

// Study is one study (its options, requests, extraction, scoring and
// tables), registered by name; see package studies/experiment.
type Study = experiment.Study

// Registry holds the studies an experiment can name.
type Registry = experiment.Registry

// BuiltinStudies is a new registry of the built-in studies (indicklar,
// indicquest, mdi, requests, synthetic); add a program's own with Add.
func BuiltinStudies() *Registry { return studies.Builtin() }

// Load reads, validates and builds an experiment file (YAML).
func Load(ctx context.Context, path string, opts ...ReadOption) (*Experiment, error) {
	return experiment.Load(ctx, path, experiment.LoadOptions{Studies: readWith(opts).studies})
}

// Parse reads an experiment from YAML text; relative paths in it are
// relative to the working directory.
func Parse(ctx context.Context, yaml []byte, opts ...ReadOption) (*Experiment, error) {
	return experiment.Parse(ctx, yaml, "experiment.yaml", experiment.LoadOptions{Studies: readWith(opts).studies})
}

// Option sets one field or study option of an experiment built in Go (a
// study's own setters, such as indicklar.WithStrategies, are Options too).
type Option = experiment.Option

// IndicKLAR is the cross-lingual knowledge-consistency study over a KLAR /
// IndicKLAR dataset (the release directory or a project-page bundle).
// Without Models it asks the simulated models.
func IndicKLAR(dataset string, opts ...Option) *Experiment {
	return New("indicklar", dataset, opts...)
}

// IndicQuest is the multilingual factual QA study over IndicQuest CSV
// files; without Judge it is judged by a simulated judge.
func IndicQuest(dataset string, opts ...Option) *Experiment {
	return New("indicquest", dataset, judged(opts)...)
}

// Distractors is the prompt-contamination study over TriviaQA or
// TruthfulQA; without Judge the switched answers go to a simulated judge.
func Distractors(dataset string, opts ...Option) *Experiment {
	return New("mdi", dataset, judged(opts)...)
}

// Requests sends each line of a JSON Lines request file to every model.
func Requests(path string, opts ...Option) *Experiment {
	e := New("requests", "", opts...)
	requests.WithFile(path)(e)
	return e
}

// New is an experiment of any registered study (a program's own study is
// registered with Register) over a dataset ("" when it reads none);
// without Models it asks the simulated models.
func New(study, dataset string, opts ...Option) *Experiment {
	e := &Experiment{Name: study, Study: study, Studies: BuiltinStudies()}
	if dataset != "" {
		e.Dataset = &experiment.Dataset{Path: dataset}
	}
	for _, o := range opts {
		o(e)
	}
	if len(e.Models) == 0 {
		e.Models = SimulatedModels()
	}
	return e
}

// judged adds, after opts, the simulated judge unless opts set one.
func judged(opts []Option) []Option {
	return append(slices.Clone(opts), func(e *Experiment) {
		if e.Judge == nil {
			j := simulatedJudge()
			e.Judge = &j
		}
	})
}

// Register adds a study to the experiment's registry (a copy of it: the
// registry the experiment came with is not changed). A registration error
// (a name already taken) is reported by Validate.
func Register(s Study) Option {
	return func(e *Experiment) {
		r := e.Studies.Clone()
		if err := r.Add(s); err != nil {
			e.Study = s.Name() + " (not registered: " + err.Error() + ")"
			return
		}
		e.Studies = r
	}
}

// SimulatedModels are the in-process simulator's models (1B, 8B and 70B
// parameters, SIMULATED), the default of every constructor.
func SimulatedModels() []Model {
	var out []Model
	for _, m := range sim.DefaultModels() {
		out = append(out, Model{Name: m.ID, ServedName: m.ID, SizeB: m.ParamsB})
	}
	return out
}

// simulatedJudge is the simulator's judge model.
func simulatedJudge() Model { return Model{Name: "sim-judge", ServedName: "sim-base-8b"} }

// Name names the experiment (it goes into every record key).
func Name(name string) Option { return func(e *Experiment) { e.Name = name } }

// Languages sets the languages, as codes or names the registry reads.
func Languages(codes ...string) Option { return func(e *Experiment) { e.Languages = codes } }

// Forms sets IndicKLAR's question forms: native, code-mixed, english
// (indicklar.WithForms).
func Forms(forms ...string) Option { return indicklar.WithForms(forms...) }

// Strategies sets IndicKLAR's prompting strategies (indicklar.WithStrategies).
func Strategies(names ...string) Option { return indicklar.WithStrategies(names...) }

// Conditions sets the distractor conditions (distractors.WithConditions).
func Conditions(names ...string) Option { return distractors.WithConditions(names...) }

// Models sets the models.
func Models(models ...Model) Option { return func(e *Experiment) { e.Models = models } }

// Judge sets the judge model.
func Judge(m Model) Option { return func(e *Experiment) { e.Judge = &m } }

// SampleItems keeps a seeded subset of n items (the same in every language;
// YAML: sample).
func SampleItems(n int) Option { return func(e *Experiment) { e.Sample = n } }

// Seed sets the seed of sampling, demonstrations and shuffles.
func Seed(seed int64) Option { return func(e *Experiment) { e.Seed = &seed } }

// WithDecoding sets the decoding of request files and the distractor
// study's answers.
func WithDecoding(d Decoding) Option { return func(e *Experiment) { e.Decoding = d } }
