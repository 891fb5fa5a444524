// Package bmlama reads BMLAMA (Qi, Fernández and Bisazza, EMNLP 2023)
// probes: a directory of <lang>.tsv files with the header "Prompt, Ans,
// Candidate Ans, Subject" (tab-separated), aligned by row across
// languages (row i is the same fact everywhere; there is no id column).
// Prompt, with its <mask> slot, is Variant.Template; Variant.Question is
// the text before the slot, trimmed: a cloze prefix, not a question (in
// a verb-final language often the bare subject). "Candidate Ans" is
// ", "-separated, gold last, in the same order in every language
// (Variant.StoredCandidates); item.Options.ShuffleCandidates shuffles
// Variant.Candidates per item and language (klar.SetCandidates).
package bmlama

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/datasets/csvread"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// Load reads every <lang>.tsv in dir; the item ID is the 1-based data row.
func Load(ctx context.Context, dir string, reg *lang.Registry, opts item.Options) (*item.Set, error) {
	tables, notes, err := csvread.ReadLanguageFiles(ctx, dir, ".tsv", '\t', reg)
	if err != nil {
		return nil, err
	}
	s := &item.Set{Dataset: "bmlama:" + filepath.Base(dir), Notes: notes}
	for _, lt := range tables {
		t, l, form, f := lt.Table, lt.Lang, lt.Form, lt.Table.Path
		var cols [4]int
		for i, name := range []string{"prompt", "ans", "candidate ans", "subject"} {
			if cols[i], err = t.Col(name); err != nil {
				return nil, err
			}
		}
		for i := range t.Rows {
			line := t.Lines[i]
			prompt, ans, cand, subj := t.Cell(i, cols[0]), t.Cell(i, cols[1]), t.Cell(i, cols[2]), t.Cell(i, cols[3])
			p := t.Problems[i]
			switch {
			case p != nil:
			case len(t.Rows[i]) < 4:
				p = &item.Problem{File: f, Line: line, Msg: fmt.Sprintf("%d columns, want 4", len(t.Rows[i]))}
			case !strings.Contains(prompt, "<mask>"):
				p = &item.Problem{File: f, Line: line, Field: "Prompt", Msg: "no <mask> slot"}
			case ans == "":
				p = &item.Problem{File: f, Line: line, Field: "Ans", Msg: "empty"}
			}
			if p != nil {
				if err := s.Fail(opts, *p); err != nil {
					return nil, err
				}
				continue
			}
			id := strconv.Itoa(i + 1)
			q, _, _ := strings.Cut(prompt, "<mask>")
			v := item.Variant{Language: l.ISO3, Form: form, Template: prompt, Question: strings.TrimSpace(q), Subject: subj, Answer: ans,
				Source: fmt.Sprintf("%s:%d", f, line)}
			klar.SetCandidates(&v, klar.SplitCandidates(cand), id+"/"+l.ISO3, opts)
			it := s.Get(id)
			it.Variants = append(it.Variants, v)
		}
	}
	s.Sort()
	return s, nil
}
