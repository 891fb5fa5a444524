package tables

import "github.com/bhashalab/bhasha/analysis/score"

// Standard builds the tables every study has: accuracy (its metrics),
// scoring (its criteria), and, when opt names model sizes or families,
// scaling and model_families. A study that reads human labels adds
// HumanAgreement with its criteria.
func Standard(study string, ms []Metric, cs []Criterion, rows []score.Row, opt Options) []*Table {
	ts := []*Table{Accuracy(study, ms, rows), Scoring(study, cs)}
	if len(opt.Sizes) > 0 {
		ts = append(ts, Scaling(rows, opt.Sizes))
	}
	if len(opt.Families) > 0 {
		ts = append(ts, ModelFamilies(rows, opt.Families, opt.Sizes))
	}
	return ts
}
