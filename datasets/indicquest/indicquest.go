// Package indicquest reads L3Cube-IndicQuest (v1: Rohera et al., arXiv
// 2409.08706; v2: Jain et al., arXiv 2608.15535): one CSV per
// language, named by the language (v1: "Hindi.csv", v2: "hindi.csv"),
// with the columns Question, Answer and Domain in any case and with stray
// spaces ("Question, Answer,Domain"), a UTF-8 BOM on some files, and cells
// with leading spaces (trimmed). Rows are aligned by position across
// languages, so the item ID is the 1-based row, unless the file has an id
// column, which is then used.
package indicquest

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/bhashalab/bhasha/datasets/csvread"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// Load reads every <Language>.csv in dir.
func Load(ctx context.Context, dir string, reg *lang.Registry, opts item.Options) (*item.Set, error) {
	tables, notes, err := csvread.ReadLanguageFiles(ctx, dir, ".csv", ',', reg)
	if err != nil {
		return nil, err
	}
	s := &item.Set{Dataset: "indicquest", Notes: notes}
	for _, lt := range tables {
		t, l, form, f := lt.Table, lt.Lang, lt.Form, lt.Table.Path
		qc, err := t.Col("question")
		if err != nil {
			return nil, err
		}
		ac, err := t.Col("answer", "ground_truth", "gold")
		if err != nil {
			return nil, err
		}
		dc, _ := t.Col("domain", "category")
		ic, _ := t.Col("id", "question_id", "qid")
		for i := range t.Rows {
			q, a := t.Cell(i, qc), t.Cell(i, ac)
			p := t.Problems[i]
			switch {
			case p != nil:
			case q == "":
				p = &item.Problem{File: f, Line: t.Lines[i], Field: "Question", Msg: "empty"}
			case a == "":
				p = &item.Problem{File: f, Line: t.Lines[i], Field: "Answer", Msg: "empty"}
			}
			if p != nil {
				if err := s.Fail(opts, *p); err != nil {
					return nil, err
				}
				continue
			}
			it := s.Get(cmp.Or(t.Cell(i, ic), strconv.Itoa(i+1)))
			if d := t.Cell(i, dc); d != "" && (it.Domain == "" || l.ISO3 == "eng") {
				it.Domain = d
			}
			it.Variants = append(it.Variants, item.Variant{Language: l.ISO3, Form: form, Question: q, Answer: a,
				Source: fmt.Sprintf("%s:%d", f, t.Lines[i])})
		}
	}
	s.Sort()
	return s, nil
}
