package requests

import (
	"github.com/bhashalab/bhasha/study"
)

// AnswerSchema: a request file's answers have no criterion, the common
// fields only.
func (p *plan) AnswerSchema() *study.Schema { return study.NewSchema() }
