package brevity

import "github.com/bhashalab/bhasha/study"

// LengthsTable is the name of the study's own table.
const LengthsTable = "answer_lengths"

// lengths is answer_lengths: per model, in name order, the answers that
// came back, their mean length in words and the brief share with its
// 95% Wilson interval.
func (p *plan) lengths(rows []study.Row) *study.Table {
	t := study.NewTable(LengthsTable, "per model, the answers' mean length in words and the share that is brief (at most brief_words words), with a 95% Wilson interval; failed requests left out",
		study.CategoryColumn("model", "the model asked"),
		study.CountColumn("n", "answers that came back"),
		study.NumberColumn("mean_words", "mean length of the answers in words"),
		study.CountColumn("k", "brief answers"),
		study.ProportionColumn("rate", "share of the answers that are brief"),
		study.LowerColumn("ci_lo", "lower bound of the share's 95% Wilson interval"),
		study.UpperColumn("ci_hi", "upper bound of the share's 95% Wilson interval"))
	type count struct{ n, words, brief int }
	by := map[string]*count{}
	for i := range rows {
		r := &rows[i]
		if r.Failed {
			continue
		}
		c := by[r.Key.Model]
		if c == nil {
			c = &count{}
			by[r.Key.Model] = c
		}
		c.n++
		c.words += Words(r.Prediction)
		if r.Marks.Has(markBrief) {
			c.brief++
		}
	}
	for _, m := range study.SortedKeys(by) {
		c := by[m]
		lo, hi := study.Wilson(c.brief, c.n, 0.95)
		t.Add(m, c.n, float64(c.words)/float64(c.n), c.brief, float64(c.brief)/float64(c.n), lo, hi)
	}
	return t
}
