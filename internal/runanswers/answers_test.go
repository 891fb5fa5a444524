package runanswers_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/internal/runanswers"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// A table is built with its group alone (and the groups it is laid out
// from), and the tables built one by one are those Experiment.Tables
// builds at once.
func TestTableBuildsOnlyItsGroup(t *testing.T) {
	dir := t.TempDir()
	exp := bhasha.IndicKLAR("../../testdata/indicklar/project_page_demo_hin_excerpt.json", bhasha.Languages("hin"), bhasha.SampleItems(4),
		bhasha.Strategies("baseline", "2step-en", "tint-cm"), bhasha.Models(bhasha.SimulatedModels()[0]))
	res, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	m, err := run.ReadManifest(res.Dir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := experiment.Load(context.Background(), filepath.Join(res.Dir(), run.ExperimentFile), experiment.LoadOptions{Studies: studies.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	r := runanswers.New(context.Background(), res.Dir(), e, m, nil, runanswers.Config{NoStore: true})
	if _, err := r.Table("accuracy"); err != nil {
		t.Fatal(err)
	}
	if r.Builds() != 1 {
		t.Errorf("Table(accuracy) built %d groups, want 1", r.Builds())
	}
	if _, err := r.Table("acc_clc_wide"); err != nil { // laid out from accuracy and clc_mean
		t.Fatal(err)
	}
	if r.Builds() != 3 {
		t.Errorf("after acc_clc_wide: %d groups built, want 3 (standard, KLAR, layouts)", r.Builds())
	}
	all, err := r.Tables()
	if err != nil {
		t.Fatal(err)
	}
	want, err := e.Tables(r.Rows())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want)+1 { // and answers
		t.Fatalf("%d tables, want %d", len(all), len(want)+1)
	}
	for i, w := range want {
		got, err := r.Table(w.Name)
		if err != nil || all[i].Name != w.Name || fmt.Sprint(got.Rows) != fmt.Sprint(w.Rows) { // NaN statistics print alike
			t.Errorf("table %d %s: %v, listed as %s", i, w.Name, err, all[i].Name)
		}
	}
}
