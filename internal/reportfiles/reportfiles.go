// Package reportfiles writes a run's report files from its scored
// answers (runanswers) and its records: the HTML report with its sample
// explorer, the workbook with its samples sheet, and the paper-ready
// exports. It holds a bounded, drawn sample of the answers' texts, never
// all of them, and can read the sample's rows back from the run's store
// instead of holding every row.
package reportfiles

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/internal/runanswers"
	"github.com/bhashalab/bhasha/report"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// Report writes a run's report files: the HTML report and the workbook,
// from its answers (runanswers) and the records' texts, and the paper's
// exports.
type Report struct {
	a        *runanswers.Answers
	dir      string
	exp      *experiment.Experiment
	manifest *run.Manifest

	// The page the HTML report, the workbook and the exports share.
	pageOnce sync.Once
	pg       report.Page
	pageErr  error
}

// New is the report of the run in dir, of experiment exp and manifest m,
// made from its answers a.
func New(a *runanswers.Answers, dir string, exp *experiment.Experiment, m *run.Manifest) *Report {
	return &Report{a: a, dir: dir, exp: exp, manifest: m}
}

// Options are how Write writes the reports.
type Options struct {
	// Progress, when set, is told of each step: at its start, every
	// 20,000 rows and at its end.
	Progress func(report.Step)
	// SheetRows bounds the rows of the workbook's long sheets
	// (report.Options.SheetRows); the samples sheet holds at most
	// report.MaxSampleRows answers.
	SheetRows int
	// Release lets go of the run's scored answers once the tables are
	// built, when the run has more than KeepUpTo of them, and reads the
	// answers the report lists back from the run's store.
	Release  bool
	KeepUpTo int
	// Tables, when set, has Write write every table as CSV under
	// DIR/tables too and call it with them once written.
	Tables func([]*tables.Table)
}

// EarlyRows is the most scored answers a report reads the records' texts
// for beside building its tables (Options.Tables), and the KeepUpTo of
// a report that releases the rows of large runs: their rows are
// about 300 bytes each, so at most about 300 MB held beside that pass.
const EarlyRows = 1 << 20

// sampleRows is the most answers the workbook's samples sheet holds.
func (c Options) sampleRows() int {
	if c.SheetRows > 0 {
		return min(c.SheetRows, report.MaxSampleRows)
	}
	return report.MaxSampleRows
}

// explorerSeed seeds the draw of the explorer's samples (explorerPicks).
const explorerSeed = 20

// reportTables writes the tables' files as the step "tables" and tells done of them.
func (r *Report) reportTables(done func([]*tables.Table), o report.Options) error {
	st := o.Step("tables", 0)
	ts, err := r.a.WriteTables()
	if records.IsReadOnly(err) {
		// Nothing can be written there: the report holds the tables.
		r.a.AddNote(fmt.Sprintf("the run directory %s is read-only: its tables were not written under %s (the report holds them)", r.dir, filepath.Join(r.dir, "tables")))
		ts, err = nil, nil
	}
	if err != nil {
		return err
	}
	st.At(0, true)
	done(ts)
	return nil
}

// Write writes the run's HTML report to html and its workbook to xlsx
// (either may be "", for none), each atomically (atomicfile): when ctx
// ends or anything fails, a file not yet complete is left as it was. Both
// show one seeded, stratified draw of the answers (explorerPicks) with
// their records' texts, read in one pass over the records (ReadTexts):
// the explorer its first ExplorerSamples that fit its bytes, the
// samples sheet its first Options.sampleRows, in table order.
func (r *Report) Write(ctx context.Context, html, xlsx string, c Options) error {
	// The texts are read beside the tables only for a workbook of at
	// most EarlyRows answers; else the tables are written first.
	early := false
	if c.Tables != nil && xlsx != "" && !r.a.Built() {
		n, err := r.a.Scored() // counted from the store when it is current
		if err != nil {
			return err
		}
		early = n <= EarlyRows
	}
	if c.Tables != nil && !early {
		if err := r.reportTables(c.Tables, report.Options{Progress: c.Progress}); err != nil {
			return err
		}
	}
	var files [2]*atomicfile.File // the HTML report's, the workbook's
	for i, path := range []string{html, xlsx} {
		if path == "" {
			continue
		}
		f, err := atomicfile.Create(path)
		if err != nil {
			return fmt.Errorf("%s of %s: %w", [2]string{"HTML report", "workbook"}[i], r.dir, err)
		}
		defer f.Abort()
		files[i] = f
	}
	hw, xw := files[0], files[1] // committed each once written

	o := report.Options{Progress: c.Progress, SheetRows: c.SheetRows}
	if fn := o.Progress; fn != nil {
		// Steps running at once tell of themselves in turn.
		var mu sync.Mutex
		o.Progress = func(s report.Step) {
			mu.Lock()
			defer mu.Unlock()
			fn(s)
		}
	}
	// One draw: the explorer's its first ExplorerSamples, the workbook's
	// its first sampleRows; texts[j] and keys[j] are picks[j]'s.
	var picks []int
	var keys []string
	var how string
	var texts []SampleText
	explorerN, bookN := 0, 0
	if hw != nil || xw != nil {
		if err := r.a.Score(); err != nil {
			return err
		}
		if hw != nil {
			explorerN = ExplorerSamples
		}
		if xw != nil {
			bookN = c.sampleRows()
		}
		picks, how = r.explorerPicks(max(explorerN, bookN))
		keys = r.rowKeys(picks)
		texts = make([]SampleText, len(picks))
	}
	keep := func(j int, t SampleText) error { texts[j] = t; return nil }
	// The records' texts read beside the tables; pass ends with the pass.
	var pass chan error
	if early {
		ctx, stop := context.WithCancel(ctx)
		pass = make(chan error, 1)
		go func() { pass <- r.ReadTexts(ctx, o, keys, keep) }()
		defer func() {
			stop()
			if pass != nil { // the report ended before the pass was waited for
				<-pass
			}
		}()
		if err := r.reportTables(c.Tables, o); err != nil {
			return err
		}
	}
	p, err := r.Page()
	if err != nil {
		return err
	}
	answers, ok := r.a.AnswersTable() // made row by row: the report holds none of them
	if !ok {
		return fmt.Errorf("report of %s: the run has no answers table", r.dir)
	}
	n := len(r.a.Rows())
	rowAt := answers.Row                 // the samples' rows
	check := func() error { return nil } // whether the rows read back were read
	if c.Release && r.a.StoreKey() != nil && n > c.KeepUpTo {
		// A store that cannot be read back leaves the rows in memory.
		if st, err := openStoredAnswers(filepath.Join(r.dir, scored.FileName), r.a.StoreKey(), n, r.a.Schema()); err == nil {
			defer st.rd.Close()
			if picked, err := st.picked(ctx, picks); err == nil {
				rowAt, answers, check = picked, st.table, st.check
				p.Tables = slices.Clone(p.Tables)
				for i, t := range p.Tables {
					if t.Name == "answers" && t.Source != nil {
						p.Tables[i] = st.table
					}
				}
				// let go of the scored answers and the page built from them
				r.a.Forget()
				r.pg, r.pageErr, r.pageOnce = report.Page{}, nil, sync.Once{}
			} else if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	if pass != nil {
		err := <-pass
		pass = nil
		if err != nil {
			return err // ReadTexts says what it was reading, or ctx's error
		}
	} else if hw != nil || xw != nil {
		if err := r.ReadTexts(ctx, o, keys, keep); err != nil {
			return err
		}
	}
	var book *tables.Table // the workbook's samples
	if xw != nil {
		book = r.samplesTable(answers, rowAt, picks[:min(len(picks), bookN)], texts, nil)
	}
	// The page is written beside the workbook and committed whatever the
	// workbook does; the workbook is kept only once the page is written.
	page := make(chan error, 1)
	go func() {
		if hw == nil {
			page <- nil
			return
		}
		hp := p
		k := min(len(picks), explorerN)
		hp.Samples = r.samplesTable(answers, rowAt, picks[:k], texts, keys[:k])
		if hp.Samples.Len() < n {
			hp.SamplesTotal, hp.SamplesHow = n, how
		}
		write, err := report.PrepareHTML(ctx, hp, o)
		if err == nil {
			err = check()
		}
		if err == nil {
			err = write(hw)
		}
		if err == nil {
			err = hw.Commit()
		}
		if err != nil {
			err = fmt.Errorf("HTML report of %s: %w", r.dir, err)
		}
		page <- err
	}()
	if xw != nil {
		xp := p
		xp.Samples, xp.SamplesTotal, xp.SamplesHow = book, n, how
		if err = report.WriteXLSXContext(ctx, xw, xp, o); err == nil {
			err = check()
		}
	}
	if pageErr := <-page; err == nil && pageErr != nil {
		return pageErr
	}
	if err == nil && xw != nil {
		err = xw.Commit()
	}
	if err != nil {
		return fmt.Errorf("workbook of %s: %w", r.dir, err)
	}
	return nil
}

// SampleText is what a sample has from its record: the prompt as sent
// (PromptText), the raw response, why the request failed.
type SampleText struct {
	Prompt, Response, Error string
}

// ReadTexts reads the records once and calls fn with the text of the
// record of keys[j] for each j: the first ok record of its key, else its
// first (as records.Unique chooses), possibly after an earlier call
// for the same j with a failed one, which the later call replaces. A key
// without a record of its own (a multiple-choice item's, a withheld
// second stage) gets no call. Every record is read; only those of keys
// are decoded further than their key.
func (r *Report) ReadTexts(ctx context.Context, o report.Options, keys []string, fn func(j int, t SampleText) error) error {
	const unseen, seenFailed, seenOK = 0, 1, 2
	want := make(map[string]int, len(keys))
	for j, k := range keys {
		want[k] = j
	}
	state := make([]byte, len(keys))
	prompts := map[string]string{} // each distinct prompt once: a run's models share them
	st := o.Step("reading the records' prompts and responses", r.manifest.Counts.Records)
	// Records are decoded (their texts only) and matched on every core;
	// which record of a key is kept is decided here, in line order.
	type text struct {
		j int // the key's index, -1 for a record of no key asked for
		t SampleText
	}
	lines := 0
	asked := func(key string) bool { _, ok := want[key]; return ok }
	_, err := records.Each(ctx, r.dir, records.StreamOptions{WithRequests: true, SkipExtracted: true, SkipDigests: true, TextsOnly: true, Want: asked}, func(_ int, rec *engine.Record) (text, error) {
		j, ok := want[rec.Key]
		if !ok {
			return text{j: -1}, nil
		}
		return text{j: j, t: SampleText{Prompt: PromptText(rec.Request), Response: rec.Response, Error: rec.Error}}, nil
	}, func(_ int, _ string, ok bool, v text) error {
		lines++
		st.At(lines, false)
		j := v.j
		if j < 0 || state[j] == seenOK || (state[j] == seenFailed && !ok) {
			return nil
		}
		state[j] = seenFailed
		if ok {
			state[j] = seenOK
		}
		if p, held := prompts[v.t.Prompt]; held {
			v.t.Prompt = p
		} else {
			prompts[v.t.Prompt] = v.t.Prompt
		}
		return fn(j, v.t)
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("samples of %s: %w", r.dir, err)
	}
	st.At(lines, true)
	return nil
}

// explorerPicks draws at most limit answers, ranked: for each flag of the
// answer schema one where it holds and one where not, then one from each
// model × language × strategy group in turn (each in key order, then
// shuffled, explorerSeed), the same whatever the order of the rows.
// A draw of k is the first k of any larger draw; how says how it was drawn.
func (r *Report) explorerPicks(limit int) (picks []int, how string) {
	rows := r.a.Rows()
	n := len(rows)
	type group struct{ model, language, strategy string }
	byGroup := map[group][]int32{}
	for i := range rows {
		k := &rows[i].Key
		g := group{k.Model, k.Language, k.Strategy}
		byGroup[g] = append(byGroup[g], int32(i))
	}
	var members [][]int32 // the groups in key order
	for _, g := range slices.SortedFunc(maps.Keys(byGroup), func(a, b group) int {
		return cmp.Or(strings.Compare(a.model, b.model), strings.Compare(a.language, b.language), strings.Compare(a.strategy, b.strategy))
	}) {
		members = append(members, byGroup[g])
	}
	rng := rand.New(rand.NewPCG(explorerSeed, uint64(n)))
	for _, m := range members {
		// By key first, so that the draw does not depend on the order
		// the answers arrived in.
		slices.SortFunc(m, func(a, b int32) int {
			x, y := &rows[a], &rows[b]
			return cmp.Or(strings.Compare(x.Key.Item, y.Key.Item), strings.Compare(x.Key.Form, y.Key.Form), strings.Compare(x.Key.Condition, y.Key.Condition),
				cmp.Compare(x.Key.Role.Kind, y.Key.Role.Kind), strings.Compare(x.Key.Role.Of, y.Key.Role.Of), cmp.Compare(x.Key.Role.Choice, y.Key.Role.Choice),
				strings.Compare(x.Key.Experiment, y.Key.Experiment), strings.Compare(x.Domain, y.Domain), strings.Compare(x.Gold, y.Gold),
				strings.Compare(x.Prediction, y.Prediction), cmp.Compare(a, b))
		})
		rng.Shuffle(len(m), func(a, b int) { m[a], m[b] = m[b], m[a] })
	}
	// The round-robin order over the groups, all of it.
	order := make([]int32, 0, n)
	for round := 0; len(order) < n; round++ {
		for _, m := range members {
			if round < len(m) {
				order = append(order, m[round])
			}
		}
	}
	taken := make(map[int]bool, limit)
	take := func(i int) {
		if !taken[i] && len(picks) < limit {
			taken[i] = true
			picks = append(picks, i)
		}
	}
	var flags []string
	for _, f := range r.a.Schema().Fields() {
		if f.Type != score.FlagField {
			continue
		}
		found := [2]int{-1, -1}
		for _, i := range order {
			v := 0
			if f.Flag(&r.a.Rows()[i]) {
				v = 1
			}
			if found[v] < 0 {
				found[v] = int(i)
				if found[1-v] >= 0 {
					break
				}
			}
		}
		if found[0] >= 0 && found[1] >= 0 {
			take(found[0])
			take(found[1])
			flags = append(flags, f.Name)
		}
	}
	for _, i := range order {
		if len(picks) >= limit {
			break
		}
		take(int(i))
	}
	return picks, fmt.Sprintf("drawn at random (seed %d) in turn from each of the %d model × language × strategy groups, so that each group shows as many answers as the others (all of a smaller group), and for each of %s an answer where it holds and one where it does not",
		explorerSeed, len(members), strings.Join(flags, ", "))
}

// rowKeys are the record keys of the rows sel.
func (r *Report) rowKeys(sel []int) []string {
	keys := make([]string, len(sel))
	for j, i := range sel {
		keys[j] = r.a.Rows()[i].Key.String()
	}
	return keys
}

// samplesTable is the answers' rows of picks, in table order, each with
// its record's text (texts[j]). For the explorer (keys set) long texts
// are cut (report.CutSampleTexts) and only the longest prefix of picks
// that fits in report.MaxExplorerBytes is kept.
func (r *Report) samplesTable(answers *tables.Table, rowAt func(i int, buf []any) []any, picks []int, texts []SampleText, keys []string) *tables.Table {
	cols := append(slices.Clone(answers.Columns()), SampleColumns()...)
	desc := "a sample of the scored answers with their prompts and responses: the study's answer schema"
	if keys != nil {
		desc = "one row per scored answer with its prompt and response: the study's answer schema"
	}
	t := tables.New("samples", desc, cols...)
	kept := map[int][]any{} // each pick's row
	size := 0
	for j, i := range picks {
		tx := texts[j]
		row := append(rowAt(i, make([]any, 0, len(cols))), tx.Prompt, tx.Response, tx.Error, r.manifest.Simulated)
		if keys != nil {
			row = report.CutSampleTexts(t.Header, row, keys[j])
			b, _ := json.Marshal(row)
			if size += len(b) + 1; size > report.MaxExplorerBytes {
				break
			}
		}
		kept[i] = row
	}
	t.Rows = make([][]any, 0, len(kept))
	for _, i := range slices.Sorted(maps.Keys(kept)) {
		t.Rows = append(t.Rows, kept[i])
	}
	return t
}
