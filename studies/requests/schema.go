package requests

import (
	"github.com/bhashalab/bhasha/analysis/score"
)

// AnswerSchema: a request file's answers have no criterion, the common
// fields only.
func (p *plan) AnswerSchema() *score.Schema { return score.NewSchema() }
