package indicquest

import (
	"embed"

	"github.com/bhashalab/bhasha/study"
)

// publishedFS holds the numbers transcribed from the paper
// (published/*.csv; see studies/indicklar/published/SOURCE.md).
//
//go:embed published/*.csv
var publishedFS embed.FS

// The plan sets the run beside its paper (experiment.Publisher).
var _ study.Publisher = (*plan)(nil)

// Published reads the numbers transcribed from the paper, for the
// report's versus_paper table (experiment.Publisher).
func (p *plan) Published() ([]study.PublishedValue, error) { return Published() }

// Published reads the numbers transcribed from the paper
// (published/indicquest.csv).
func Published() ([]study.PublishedValue, error) {
	return study.ReadPublished(publishedFS, "published/*.csv")
}
