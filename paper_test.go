package bhasha_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha"
)

// Every paper setup under experiments/paper validates as written (models,
// languages, strategies, conditions, judge) and runs against the
// simulator on a small sample of the bundled data, with its paper model
// names simulated and every table labelled SIMULATED.
func TestPaperExperiments(t *testing.T) {
	files, err := filepath.Glob("experiments/paper/*.yaml")
	if err != nil || len(files) < 6 {
		t.Fatalf("paper experiments: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			e := paperExperiment(t, f)
			dir := t.TempDir()
			r, err := bhasha.Run(context.Background(), e, bhasha.Simulator(), bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
			if err != nil {
				t.Fatal(err)
			}
			acc, err := r.Table("accuracy")
			if err != nil || len(acc.Rows) == 0 || !acc.Simulated || !r.Simulated() {
				t.Fatalf("accuracy %v %v", acc, err)
			}
			models := map[string]bool{}
			for _, row := range acc.Rows {
				models[acc.Str(row, "model")] = true
			}
			if len(models) != len(e.Models) {
				t.Errorf("accuracy covers %d of %d models", len(models), len(e.Models))
			}
		})
	}
}

// Options that change the requests are compared across two runs of the
// same items: the paper's wording and 10-token limit, and shuffled
// candidates, each against the authors' code.
func TestCompareOptionRuns(t *testing.T) {
	dir := t.TempDir()
	run := func(name string) *bhasha.Results {
		r, err := bhasha.Run(context.Background(), paperExperiment(t, "experiments/paper/"+name+".yaml"), bhasha.Simulator(),
			bhasha.Out(filepath.Join(dir, name)), bhasha.CacheDir(filepath.Join(dir, "cache")))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := run("indicklar-options-base")
	for _, variant := range []string{"indicklar-options-shuffled", "indicklar-options-paper"} {
		v := run(variant)
		c, err := bhasha.Compare(base, v)
		if err != nil {
			t.Fatal(err)
		}
		pooled := 0
		for _, row := range c.Rows {
			if c.Str(row, "language") == "*" {
				pooled++
				if c.Num(row, "pairs") != 3 || !c.Simulated {
					t.Errorf("%s: %v", variant, row)
				}
			}
		}
		if pooled != 3 { // one per strategy
			t.Errorf("%s: %d pooled rows in %v", variant, pooled, c.Rows)
		}
		if variant == "indicklar-options-paper" {
			for group, ds := range v.Manifest().Decodings {
				for _, d := range ds {
					if d.MaxTokens != 10 {
						t.Errorf("%s asked with max_tokens %d, want the paper's 10", group, d.MaxTokens)
					}
				}
			}
		}
	}
}

// paperExperiment reads a paper experiment, checks it validates as
// written, and shrinks it to a small sample of the bundled data.
func paperExperiment(t *testing.T, f string) *bhasha.Experiment {
	t.Helper()
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	small := map[string]func(e *bhasha.Experiment){
		"indicklar": func(e *bhasha.Experiment) {
			e.Dataset = &bhasha.Dataset{Path: abs("testdata/indicklar/project_page_demo_hin_excerpt.json")}
			e.Languages, e.Sample = []string{"hin"}, 3
		},
		"indicquest": func(e *bhasha.Experiment) {
			e.Dataset = &bhasha.Dataset{Path: abs("testdata/indicquest-v1")}
			e.Languages, e.Sample = []string{"en", "hi"}, 3
		},
		"mdi": func(e *bhasha.Experiment) {
			e.Dataset.Path, e.Dataset.Format, e.Sample = abs("testdata/triviaqa/triviaqa_small.jsonl"), "", 3
			if strings.Contains(e.Name, "truthfulqa") {
				e.Dataset.Path, e.Sample = abs("testdata/truthfulqa/mc_task.json"), 2
			}
		},
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var e bhasha.Experiment
	if err := yaml.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	e.Studies = bhasha.BuiltinStudies()
	if probs := e.Validate(); len(probs) > 0 {
		t.Fatalf("%s as written: %v", f, probs)
	}
	shrink := small[e.Study]
	if shrink == nil {
		t.Fatalf("no sample data for study %s", e.Study)
	}
	shrink(&e)
	return &e
}

// A paper setup's report sets the published numbers beside the run's:
// the distractor study's Llama-3.1-8B rows match by served name.
func TestVersusPaper(t *testing.T) {
	dir := t.TempDir()
	e := paperExperiment(t, "experiments/paper/distractors-triviaqa.yaml")
	bhasha.Conditions("clean", "hi")(e)
	r, err := bhasha.Run(context.Background(), e, bhasha.Simulator(), bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`id="table-versus_paper"`, "Table 3", "meta-llama/Llama-3.1-8B-Instruct", ">0.710</td>"} {
		if !strings.Contains(page, want) && !strings.Contains(page, strings.ReplaceAll(want, "meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b")) {
			t.Errorf("versus-the-paper section lacks %q", want)
		}
	}
}
