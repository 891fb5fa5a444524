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
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
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
				t.Fatalf("as written: %v", probs)
			}
			shrink := small[e.Study]
			if shrink == nil {
				t.Fatalf("no sample data for study %s", e.Study)
			}
			shrink(&e)
			dir := t.TempDir()
			r, err := bhasha.Run(context.Background(), &e, bhasha.Simulator(), bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
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
