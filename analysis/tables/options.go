package tables

import (
	"path/filepath"

	"github.com/bhashalab/bhasha/analysis/experiment"
	"github.com/bhashalab/bhasha/analysis/score"
)

// OptionsFor reads the model sizes and human labels an experiment names.
func OptionsFor(exp *experiment.Experiment) (Options, error) {
	o := Options{Sizes: map[string]float64{}}
	for _, m := range exp.Models {
		if m.SizeB > 0 {
			o.Sizes[m.Name] = m.SizeB
		}
	}
	if p := exp.HumanLabelsPath(); p != "" {
		h, err := ReadHumanLabels(p)
		if err != nil {
			return o, err
		}
		o.Human = h
	}
	return o, nil
}

// WriteReport scores the run in dir and writes every table of its study,
// answers.csv included, under dir/tables; it returns the tables and the
// number of scored answers.
func WriteReport(exp *experiment.Experiment, dir string, simulated bool) ([]*Table, int, error) {
	rows, err := score.Score(exp, dir)
	if err != nil {
		return nil, 0, err
	}
	opt, err := OptionsFor(exp)
	if err != nil {
		return nil, 0, err
	}
	ts := append(For(exp.Study, rows, opt), Answers(rows))
	return ts, len(rows), Write(filepath.Join(dir, "tables"), ts, simulated)
}
