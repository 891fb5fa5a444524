package experiment

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha/datasets/catalog"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/protocol"
)

// Studies that read a dataset.
const (
	StudyRequests   = "requests"
	StudySynthetic  = "synthetic"
	StudyIndicKLAR  = "indicklar"
	StudyIndicQuest = "indicquest"
	StudyMDI        = "mdi"
)

// DefaultSeed is the IndicKLAR authors' seed.
const DefaultSeed = 12345

// validateStudy checks the study's fields, loads its dataset and builds
// the request generator; it returns every problem found.
func (e *Experiment) validateStudy(ctx context.Context, root *yaml.Node, disk bool) Problems {
	var errs Problems
	add := func(line int, format string, a ...any) {
		errs = append(errs, Problem{Line: line, Msg: fmt.Sprintf(format, a...)})
	}
	switch e.Study {
	case "":
		switch {
		case e.Requests != "":
			e.Study = StudyRequests
		case e.Synthetic != nil:
			e.Study = StudySynthetic
		}
	case StudyRequests, StudySynthetic, StudyIndicKLAR, StudyIndicQuest, StudyMDI:
	default:
		add(lineOf(root, "study"), "unknown study %q (want indicklar, indicquest, mdi, requests or synthetic)", e.Study)
		return errs
	}
	if e.Study == StudyRequests || e.Study == StudySynthetic {
		return errs
	}
	reg := lang.New()
	if len(e.Languages) == 0 && e.Study == StudyIndicKLAR {
		add(lineOf(root, "languages"), "languages is required for study %s", e.Study)
	}
	langs := parseList(root, "languages", e.Languages, reg.Lookup, add)
	forms := parseList(root, "forms", e.Forms, item.ParseForm, add)
	if len(e.Forms) == 0 {
		forms = []item.Form{item.Native}
	}
	strategies := parseList(root, "strategies", e.Strategies, protocol.ParseStrategy, add)
	if len(e.Strategies) == 0 {
		strategies = []protocol.Strategy{protocol.Baseline}
	}
	conditions := parseList(root, "conditions", e.Conditions, protocol.ParseCondition, add)
	// Three independent checks: each is made whatever the others found.
	if e.Study == StudyMDI && len(e.Conditions) == 0 {
		conditions = protocol.Conditions
	}
	if e.Study != StudyMDI && len(e.Conditions) > 0 {
		add(lineOf(root, "conditions"), "conditions apply to study mdi only")
	}
	if e.Study != StudyIndicKLAR && len(e.Strategies) > 0 {
		add(lineOf(root, "strategies"), "strategies apply to study indicklar only")
	}
	for code := range e.Abstain {
		if _, err := reg.Lookup(code); err != nil {
			add(lineOf(root, "abstain", code), "abstain: %v", err)
		}
	}
	if e.HumanLabels != "" && disk {
		if _, err := os.Stat(e.resolve(e.HumanLabels)); err != nil {
			add(lineOf(root, "human_labels"), "human_labels: %v", err)
		}
	}
	for k := range e.Notes {
		if k != "es" && k != "hi" && k != "zh" {
			add(lineOf(root, "notes", k), "notes: unknown language %q (want es, hi or zh)", k)
		}
	}
	switch e.JudgePrompt {
	case "", "v1", "v2":
	default:
		add(lineOf(root, "judge_prompt"), "judge_prompt %q: want v1 or v2", e.JudgePrompt)
	}
	if e.Study == StudyIndicQuest && e.Judge == nil {
		add(lineOf(root), "study indicquest needs a judge (name, served_name)")
	}
	if e.Sample < 0 {
		add(lineOf(root, "sample"), "sample must not be negative")
	}
	if e.Dataset == nil || e.Dataset.Path == "" {
		add(lineOf(root, "dataset"), "dataset.path is required for study %s", e.Study)
		return errs
	}
	var format catalog.Format
	if e.Dataset.Format != "" {
		f, err := catalog.ParseFormat(e.Dataset.Format)
		if err != nil {
			add(lineOf(root, "dataset", "format"), "%v", err)
		}
		format = f
	}
	if !disk {
		return errs
	}
	if _, err := os.Stat(e.resolve(e.Dataset.Path)); err != nil {
		add(lineOf(root, "dataset", "path"), "dataset: %v", err)
	}
	if len(errs) > 0 {
		return errs
	}
	opts := item.Options{SkipInvalid: e.Dataset.SkipInvalid, Seed: e.seed(), StoredCandidateOrder: e.Prompt.StoredCandidateOrder}
	set, _, err := catalog.Load(ctx, e.resolve(e.Dataset.Path), format, reg, nil, opts)
	if err != nil {
		add(lineOf(root, "dataset", "path"), "dataset: %v", err)
		return errs
	}
	e.set = sample(set, e.Sample, e.seed())
	switch e.Study {
	case StudyIndicKLAR:
		e.study = &protocol.IndicKLAR{Set: e.set, Languages: langs, Forms: forms, Strategies: strategies, Seed: e.seed(),
			Shots: e.Prompt.Shots, Chat: e.Prompt.Chat, ReadmeCMNames: e.Prompt.ReadmeCMNames, ScriptNames: e.Prompt.ScriptNames,
			PaperWording: e.Prompt.PaperWording}
	case StudyIndicQuest:
		e.study = &protocol.IndicQuest{Set: e.set, Languages: langs, Judge: e.Judge.Name, JudgeV1: e.JudgePrompt == "v1", JudgeDecoding: e.JudgeDecoding}
	case StudyMDI:
		mdi := &protocol.MDI{Set: e.set, Conditions: conditions, Notes: e.Notes, Paragraph: e.Paragraph, MaxTokens: e.Decoding.MaxTokens, JudgeDecoding: e.JudgeDecoding}
		if e.Judge != nil {
			mdi.Judge = e.Judge.Name
		}
		e.study = mdi
	}
	return errs
}

func (e *Experiment) seed() int64 {
	if e.Seed != nil {
		return *e.Seed
	}
	return DefaultSeed
}

// parseList parses each value of the list under key, reporting a bad one
// at its own line.
func parseList[T any](root *yaml.Node, key string, vals []string, parse func(string) (T, error), add func(int, string, ...any)) []T {
	var out []T
	for i, v := range vals {
		x, err := parse(v)
		if err != nil {
			add(lineOf(root, key, strconv.Itoa(i)), "%v", err)
			continue
		}
		out = append(out, x)
	}
	return out
}

// sample keeps n items chosen with a seeded shuffle of the ids (the same
// facts in every language), in their original order; n = 0 keeps all.
func sample(s *item.Set, n int, seed int64) *item.Set {
	if n <= 0 || n >= len(s.Items) {
		return s
	}
	idx := make([]int, len(s.Items))
	for i := range idx {
		idx[i] = i
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x5a3c))
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	keep := idx[:n]
	slices.Sort(keep)
	out := &item.Set{Dataset: s.Dataset, Skipped: s.Skipped, Notes: append(s.Notes, fmt.Sprintf("sampled %d of %d items (seed %d)", n, len(s.Items), seed))}
	for _, i := range keep {
		out.Items = append(out.Items, s.Items[i])
	}
	return out
}

// Items returns the study's items (nil for requests and synthetic).
func (e *Experiment) Items() *item.Set { return e.set }

// Stages is the number of request stages (2 for two-step strategies).
func (e *Experiment) Stages() int {
	if e.study != nil {
		return e.study.Stages()
	}
	return 1
}

// Templates names the prompt templates used, with their SHA-256.
func (e *Experiment) Templates() map[string]string {
	if e.study != nil {
		return e.study.Templates()
	}
	return nil
}

// StreamStage yields the requests of one stage for every model; prior
// finds the records of earlier stages. Requests that cannot be built yet
// (their first stage has no answer) are not yielded; when withheld is not
// nil it counts them, over every model, as the stream is read.
func (e *Experiment) StreamStage(stage int, prior protocol.Lookup, withheld *int) iter.Seq2[engine.Request, error] {
	if e.study == nil {
		if stage == 1 {
			return e.Stream()
		}
		return func(func(engine.Request, error) bool) {}
	}
	return func(yield func(engine.Request, error) bool) {
		for _, m := range e.Models {
			for r, err := range e.study.Requests(e.Name, m.Name, stage, prior) {
				if errors.Is(err, protocol.ErrWithheld) {
					if withheld != nil {
						*withheld++
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

// Extract fills rec.Extracted when the experiment is a study.
func (e *Experiment) Extract(rec *engine.Record) {
	if e.study != nil && rec.Status == engine.StatusOK {
		rec.Extracted = e.study.Extract(rec)
	}
}

// Protocol returns the study's request builder (nil for requests and synthetic).
func (e *Experiment) Protocol() protocol.Study { return e.study }
