package bhasha_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// Every paper setup under experiments/paper, and the benchmark's run under
// experiments/bench, validates as written (models,
// languages, strategies, conditions, judge) and runs against the
// simulator on a small sample of the bundled data, with its paper model
// names simulated and every table labelled SIMULATED.
func TestPaperExperiments(t *testing.T) {
	files, err := filepath.Glob("experiments/*/*.yaml")
	if err != nil || len(files) < 15 {
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

// Each paper file asks what the published rows it reproduces need: every
// row of the tables and sections named here (studies/<study>/published/)
// has its model served (by served_name), its language and form asked, its
// strategy run and its condition run; an empty field asks for nothing, a
// language "*" is pooled. Table 7 without the base models, Table 11
// without code-mixed questions or the scaling file without TinT fail.
func TestPaperFilesCoverTheirPublishedRows(t *testing.T) {
	const (
		klar       = "studies/indicklar/published/indicklar.csv"
		distractor = "studies/distractors/published/distractors.csv"
		quest      = "studies/indicquest/published/indicquest.csv"
	)
	cases := []struct {
		file, published string
		where           []string
		unserved        []string // models of the text that no file serves (commercial)
	}{
		{"indicklar-main", klar, []string{"Table 5", "Table 6", "Table 9", "Table 10", "§5.5"}, nil},
		{"indicklar-scaling", klar, []string{"§5.3", "§A.4"}, nil},
		{"indicklar-base-instruct", klar, []string{"Table 7", "§A.6"}, nil},
		{"indicklar-sarvam", klar, []string{"Table 11"}, nil},
		{"indicklar-ablations", klar, []string{"Table 2", "Table 8"}, nil},
		{"distractors-triviaqa", distractor, []string{"Table 3", "Table 4", "§5.3", "rerun"}, nil},
		{"indicquest-v2", quest, []string{"Table 4 / §5", "§5"}, []string{"GPT-5.4 Mini"}},
	}
	reg := lang.New()
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile("experiments/paper/" + c.file + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			var f struct {
				Languages, Forms, Strategies, Conditions []string
				Models                                   []struct {
					ServedName string `yaml:"served_name"`
				}
			}
			if err := yaml.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			served := map[string]bool{}
			for _, m := range f.Models {
				served[m.ServedName] = true
			}
			asked := map[string]bool{}
			for _, l := range f.Languages {
				asked[reg.MustLookup(l).ISO3] = true
			}
			if slices.Contains(f.Forms, "english") {
				asked["eng"] = true
			}
			fh, err := os.Open(c.published)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			recs, err := csv.NewReader(fh).ReadAll()
			if err != nil || len(recs) < 2 {
				t.Fatalf("%s: %d records, %v", c.published, len(recs), err)
			}
			col := map[string]int{}
			for i, h := range recs[0] {
				col[h] = i
			}
			seen := map[string]int{}
			for _, r := range recs[1:] {
				get := func(k string) string { return r[col[k]] }
				if !slices.Contains(c.where, get("where")) {
					continue
				}
				seen[get("where")]++
				row := strings.Join(r, ",")
				if m := get("model"); m != "" && !served[m] && !slices.Contains(c.unserved, m) {
					t.Errorf("%s: model %s not served: %s", get("where"), m, row)
				}
				if l := get("language"); l != "" && l != "*" && len(f.Languages) > 0 && !asked[l] {
					t.Errorf("%s: language %s not asked: %s", get("where"), l, row)
				}
				if fm := get("form"); fm != "" && len(f.Forms) > 0 && !slices.Contains(f.Forms, fm) {
					t.Errorf("%s: form %s not asked: %s", get("where"), fm, row)
				}
				if s := get("strategy"); s != "" && len(f.Strategies) > 0 && !slices.Contains(f.Strategies, s) {
					t.Errorf("%s: strategy %s not run: %s", get("where"), s, row)
				}
				if cd := get("condition"); cd != "" && len(f.Conditions) > 0 && !slices.Contains(f.Conditions, cd) {
					t.Errorf("%s: condition %s not run: %s", get("where"), cd, row)
				}
			}
			for _, w := range c.where {
				if seen[w] == 0 {
					t.Errorf("no published row is cited as %q in %s", w, c.published)
				}
			}
		})
	}
}

// Options that change the requests are compared across two runs of the
// same items: the paper's wording and 10-token limit, shuffled
// candidates, the test item kept out of the 2Step demonstrations and the
// English demonstrations, each against the authors' code.
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
	for _, c := range []struct {
		variant    string
		strategies int      // pooled comparison rows: one per strategy both ran
		same       []string // strategies whose requests the option leaves as they were
	}{
		{"indicklar-options-shuffled", 3, nil},
		{"indicklar-options-paper", 3, nil},
		{"indicklar-options-demos-excluded", 3, []string{"baseline-cands"}},
		{"indicklar-options-demos-english", 5, nil},
	} {
		variant := c.variant
		v := run(variant)
		cmp, err := bhasha.Compare(base, v)
		if err != nil {
			t.Fatal(err)
		}
		pooled := 0
		for _, row := range cmp.Rows {
			if cmp.Str(row, "language") == "*" {
				pooled++
				if cmp.Num(row, "pairs") != 3 || !cmp.Simulated {
					t.Errorf("%s: %v", variant, row)
				}
				if slices.Contains(c.same, cmp.Str(row, "strategy")) && cmp.Num(row, "diff") != 0 {
					t.Errorf("%s: %s's requests are unchanged, yet its accuracy moved: %v", variant, cmp.Str(row, "strategy"), row)
				}
			}
		}
		if pooled != c.strategies {
			t.Errorf("%s: %d pooled rows, want %d, in %v", variant, pooled, c.strategies, cmp.Rows)
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
	if err := writeHTML(r, &b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`id="table-versus_paper"`, "Table 3", "meta-llama/Llama-3.1-8B-Instruct", ">0.710</td>"} {
		if !strings.Contains(page, want) && !strings.Contains(page, strings.ReplaceAll(want, "meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b")) {
			t.Errorf("versus-the-paper section lacks %q", want)
		}
	}
}
