package experiment_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// An experiment's scoring inputs are those of its run directory's copy
// (its portable YAML, in another directory): a relative dataset path,
// flow-style options and comments name the same experiment as the
// copy's absolute path and block style. A scoring option changed in the
// copy changes its key, and only that key.
func TestScoringInputsOfTheCopy(t *testing.T) {
	for _, f := range []string{"smoke-klar.yaml", "smoke-indicklar.yaml", "smoke-mdi.yaml", "smoke-indicquest.yaml"} {
		t.Run(f, func(t *testing.T) {
			e, err := load(filepath.Join("../../testdata/experiments", f))
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.ScoringInputs(nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := e.Portable()
			if err != nil {
				t.Fatal(err)
			}
			c, err := load(write(t, t.TempDir(), "experiment.yaml", string(b)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ScoringInputs(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) {
				var differ []string
				for k := range maps.Keys(want) {
					if got[k] != want[k] {
						differ = append(differ, k)
					}
				}
				t.Errorf("the copy's inputs differ: %v", slices.Sorted(slices.Values(differ)))
			}
			if _, ok := want["experiment.yaml seed"]; !ok {
				t.Fatalf("no key for the seed among %v", slices.Sorted(maps.Keys(want)))
			}
			seed := c.SeedOrDefault() + 1
			c.Seed = &seed
			seeded, err := c.ScoringInputs(nil)
			if err != nil {
				t.Fatal(err)
			}
			for k := range want {
				if (seeded[k] != want[k]) != (k == "experiment.yaml seed") {
					t.Errorf("seed changed: key %s changed %v", k, seeded[k] != want[k])
				}
			}
		})
	}
}

// The scoring inputs of an experiment loaded lazily (its plan not yet
// built: a run reopened to read its kept tables) are those of the built
// experiment, the same when the input hashes are handed in.
func TestScoringInputsLazy(t *testing.T) {
	for _, f := range []string{"smoke-klar.yaml", "smoke-indicklar.yaml", "smoke-mdi.yaml", "smoke-indicquest.yaml"} {
		t.Run(f, func(t *testing.T) {
			p := filepath.Join("../../testdata/experiments", f)
			e, err := load(p)
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.ScoringInputs(nil)
			if err != nil {
				t.Fatal(err)
			}
			lazy, err := experiment.Load(context.Background(), p, experiment.LoadOptions{Studies: studies.Builtin(), Lazy: true})
			if err != nil {
				t.Fatal(err)
			}
			inputs, err := lazy.InputHashes()
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range []map[string]string{nil, inputs} {
				got, err := lazy.ScoringInputs(in)
				if err != nil || !maps.Equal(got, want) {
					t.Errorf("lazy, inputs %v: %v, want %v (%v)", in != nil, got, want, err)
				}
			}
		})
	}
}
