package cli

import (
	"io"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/runtime/progress"
)

// scoringProgress shows scoring's MB read on w: a bar on a terminal, else
// plain lines every progress.DefaultEvery.
func scoringProgress(w io.Writer) bhasha.ReadOption {
	const mb = 1 << 20
	if progress.IsTerminal(w) {
		var bar *progress.Bar
		return bhasha.OnScoring(func(p bhasha.ScoringProgress) {
			if p.Step != "scoring" || (bar == nil && p.Total <= 0) {
				return
			}
			if bar == nil {
				bar = progress.New(w, "scoring (MB of records)", int(p.Total/mb))
			}
			if p.Final {
				bar.Finish(int(p.Total/mb), 0)
				bar = nil
				return
			}
			bar.Update(int(p.Done/mb), 0)
		})
	}
	plain := progress.NewPlain(w, progress.DefaultEvery)
	return bhasha.OnScoring(func(p bhasha.ScoringProgress) {
		if p.Step != "scoring" || (p.Total == 0 && !p.Final) || (p.Final && p.Elapsed < progress.DefaultEvery) {
			return // a short scoring (or a store read) prints nothing
		}
		plain.Update(progress.State{Label: "scoring (MB of records)", Done: int(p.Done / mb), Total: int(p.Total / mb), Elapsed: p.Elapsed, Final: p.Final})
	})
}
