package experiment_test

import (
	"errors"
	"math"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
	"github.com/bhashalab/bhasha/studies/indicquest"
)

func table(name string, header []string, rows ...[]any) *tables.Table {
	return &tables.Table{Name: name, Header: header, Rows: rows, Simulated: true}
}

// The published numbers beside a run's: matched by served name, with the
// difference and whether the published value is inside the interval.
func TestVersus(t *testing.T) {
	var pub []experiment.PublishedValue
	var err error
	for _, read := range []func() ([]experiment.PublishedValue, error){indicklar.Published, distractors.Published, indicquest.Published} {
		p, e := read()
		pub, err = append(pub, p...), errors.Join(err, e)
	}
	if err != nil || len(pub) < 70 {
		t.Fatalf("%d published values, %v", len(pub), err)
	}
	acc := table("accuracy", []string{"model", "language", "form", "strategy", "condition", "metric", "k", "n", "rate", "ci_lo", "ci_hi"},
		[]any{"llama", "eng", "english", "qa", "hi", "hallucination", 133, 200, 0.665, 0.597, 0.727},
		[]any{"llama", "eng", "english", "qa", "clean", "correct", 120, 200, 0.6, 0.531, 0.665})
	clc := table("clc_mean", []string{"model", "strategy", "form", "language", "others", "mean_jaccard"},
		[]any{"llama", "baseline", "native", "hin", 17, 0.5})
	v := experiment.Versus(pub, acc, clc, map[string]string{"llama": "meta-llama/Llama-3.1-8B-Instruct"})
	found := map[string][]any{}
	for _, r := range v.Rows {
		found[v.Str(r, "metric")+"/"+v.Str(r, "condition")+v.Str(r, "language")] = r
	}
	h := found["hallucination/hieng"]
	if h == nil || h[v.Col("published")] != 0.710 || h[v.Col("inside")] != true || math.Abs(h[v.Col("diff")].(float64)+0.045) > 1e-9 {
		t.Errorf("hallucination row %v", h)
	}
	c := found["correct/cleaneng"]
	if c == nil || c[v.Col("inside")] != false { // 0.518 is below [0.531, 0.665]
		t.Errorf("clean accuracy row %v", c)
	}
	if l := found["clc/hin"]; l == nil || l[v.Col("published")] != 0.539 || l[v.Col("n")] != 17 {
		t.Errorf("CLC row %v", l)
	}
}
