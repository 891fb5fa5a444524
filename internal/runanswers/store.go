package runanswers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/internal/codeid"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// progress reports a step's start and returns what reports its end.
func (r *Answers) progress(step string) func() {
	fn := r.cfg.Progress
	if fn == nil {
		return func() {}
	}
	start := time.Now()
	fn(Step{Step: step})
	return func() { fn(Step{Step: step, Elapsed: time.Since(start), Final: true}) }
}

// scoringKey names what the scored answers are made from: records, scoring
// inputs, store format, tool version and code (codeid.Program).
func (r *Answers) scoringKey() (scored.Key, error) {
	inputs, err := r.inputs()
	if err != nil {
		return nil, err
	}
	k := scored.Key(maps.Clone(inputs))
	k["scored format"] = scored.Version
	k["tool"] = run.ToolVersion
	code, err := codeid.Program()
	if err != nil {
		return nil, err
	}
	k["code"] = code.Digest
	fp, err := records.Fingerprint(r.dir)
	if err != nil {
		return nil, err
	}
	k["records"] = fp
	return k, nil
}

// scoredRows reads the scored answers from a current store, else scores and
// stores them, with notes on a stale, unreadable or unwritable store.
func (r *Answers) scoredRows(ctx context.Context) ([]score.Row, []string, error) {
	path := filepath.Join(r.dir, scored.FileName)
	var notes, changed []string
	var key scored.Key
	var m scored.Meta // the store's, when it reads
	if !r.cfg.NoStore {
		var err error
		if key, err = r.scoringKey(); err != nil {
			return nil, nil, fmt.Errorf("scoring run %s: %w", r.dir, err)
		}
		m, err = scored.ReadMeta(path)
		if err == nil {
			if changed = key.Changed(m.Key); len(changed) == 0 {
				done := r.progress("reading scored answers")
				var rows []score.Row
				rows, m, err = scored.Read(path)
				done()
				if err == nil {
					r.storeKey = key
					return rows, m.Notes, nil
				}
			}
		} else if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("scored answers recomputed: %s could not be read (%v); it is a cache, rewritten from the records", path, err))
		}
	}
	done := r.progress("scoring")
	start := time.Now()
	sc, err := r.exp.ScoreContext(ctx, r.dir, experiment.ScoreOptions{Records: r.manifest.Counts.Records, Progress: func(read, total int64) {
		if fn := r.cfg.Progress; fn != nil {
			fn(Step{Step: "scoring", Done: read, Total: total, Elapsed: time.Since(start)})
		}
	}})
	if err != nil {
		return nil, nil, err
	}
	done()
	scoreNotes := sc.Findings.Notes()
	if note := staleNote(changed, m, sc.Lines); note != "" {
		notes = append(notes, note)
	}
	if !r.cfg.NoStore {
		if note := r.store(path, key, sc, scoreNotes); note != "" {
			notes = append(notes, note)
		}
	}
	return sc.Rows, append(notes, scoreNotes...), nil
}

// staleNote says why the store of m is not the run's now, whose records
// have lines lines ("" when nothing changed or only the inputs did).
func staleNote(changed []string, m scored.Meta, lines int) string {
	var opts []string
	recs := false
	for _, c := range changed {
		switch {
		case c == "records":
			recs = true
		case strings.HasPrefix(c, "input "):
		case c == "tool":
			opts = append(opts, fmt.Sprintf("another Bhasha scored them (%s; this is %s)", m.Key["tool"], run.ToolVersion))
		case c == "code":
			opts = append(opts, codeChangedNote(m.Key["code"]))
		default:
			opts = append(opts, c)
		}
	}
	switch {
	case len(opts) > 0 && recs:
		return fmt.Sprintf("scored answers recomputed: scoring option(s) changed since they were stored: %s; the records changed too", strings.Join(opts, ", "))
	case len(opts) > 0:
		return fmt.Sprintf("scored answers recomputed: scoring option(s) changed since they were stored: %s", strings.Join(opts, ", "))
	case recs && lines > m.Lines:
		return fmt.Sprintf("scored answers recomputed: %d new record(s) since they were stored", lines-m.Lines)
	case recs:
		return "scored answers recomputed: new records since they were stored"
	}
	return ""
}

// codeChangedNote says that the code that stored the rows is not this.
func codeChangedNote(stored string) string {
	id, err := codeid.Program()
	if err != nil {
		return "the program's code could not be named (" + err.Error() + ")"
	}
	stored = cmp.Or(stored[:min(len(stored), 12)], "none")
	return fmt.Sprintf("the program's code is not the code that scored them (this is %s; they were scored by %s)", id, stored)
}

// store writes the scored answers under the directory's shared lock when
// the records are still those scored; it returns a note when it cannot.
func (r *Answers) store(path string, key scored.Key, sc *experiment.Scored, notes []string) string {
	notStored := func(err error) string {
		switch {
		case errors.Is(err, records.ErrReadOnly):
			return fmt.Sprintf("the run directory %s is read-only: its scored answers were not stored (they are kept in memory only, and scored again at the next open)", r.dir)
		case errors.Is(err, os.ErrPermission):
			return fmt.Sprintf("the run directory %s cannot be written: the scored answers are kept in memory only, and scored again at the next open", r.dir)
		}
		return fmt.Sprintf("scored answers not stored (%v): they are scored again at the next open", err)
	}
	lk, err := records.LockDir(r.dir, records.Shared)
	if err != nil {
		return notStored(err)
	}
	defer lk.Unlock()
	if fp, err := records.Fingerprint(r.dir); err != nil || fp != key["records"] {
		return "" // records added while scoring: the next open scores them
	}
	if err := scored.Write(path, sc.Rows, r.exp.AnswerSchema(), scored.Meta{Key: key, Notes: notes, Lines: sc.Lines}); err != nil {
		return notStored(err)
	}
	r.storeKey = key
	return ""
}
