package experiment

import "github.com/bhashalab/bhasha/analysis/score"

// AnswerSchemer is implemented by a plan that declares its answer schema:
// the criteria and verdicts its Score fills in each Row beside the common
// fields. answers.csv, the workbook's samples sheet, the HTML explorer,
// the column descriptions and bhasha.Sample are generated from it. A plan
// without one gets score.DefaultSchema (its strict criterion, correct).
type AnswerSchemer interface {
	AnswerSchema() *score.Schema
}

// AnswerSchema is the plan's answer schema (AnswerSchemer), else
// score.DefaultSchema; a plan not yet built has the default too.
func (e *Experiment) AnswerSchema() *score.Schema {
	if s, ok := e.plan.(AnswerSchemer); ok {
		if schema := s.AnswerSchema(); schema != nil {
			return schema
		}
	}
	return score.DefaultSchema()
}
