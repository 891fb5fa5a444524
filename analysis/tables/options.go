package tables

import (
	"path/filepath"

	"github.com/bhashalab/bhasha/runtime/records"

	"github.com/bhashalab/bhasha/analysis/score"
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

// Report is what WriteReport wrote.
type Report struct {
	Tables []*Table
	Scored int // scored answers
	// Notes say what the report noticed in the run (duplicate records
	// ignored); the commands print them.
	Notes []string
}

// WriteReport scores the run in dir and writes every table of its study,
// answers.csv included, under dir/tables. It holds the run directory's
// shared lock, so it refuses a directory a run is writing.
func WriteReport(exp *experiment.Experiment, dir string, simulated bool) (Report, error) {
	lk, err := records.LockDir(dir, records.Shared)
	if err != nil {
		return Report{}, err
	}
	defer lk.Unlock()
	rows, dups, err := score.Score(exp, dir)
	if err != nil {
		return Report{}, err
	}
	opt, err := OptionsFor(exp)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Tables: append(For(exp.Study, rows, opt), Answers(rows)), Scored: len(rows)}
	if s := dups.String(); s != "" {
		rep.Notes = append(rep.Notes, filepath.Join(dir, records.FileName)+": "+s)
	}
	return rep, Write(filepath.Join(dir, "tables"), rep.Tables, simulated)
}
