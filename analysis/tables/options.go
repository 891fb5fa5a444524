package tables

import (
	"github.com/bhashalab/bhasha/studies/experiment"
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
