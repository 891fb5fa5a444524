package experiment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// CheckCoverage compares the (language, form) pairs a study asks with the
// items set has. A language the set has for none of its asked forms, and a
// form the set has for none of the asked languages, are problems at their
// YAML lines naming what the set has: a paper table must not lose a
// language unseen. The other asked pairs without items (a dataset's gaps
// by design) are listed in the set's notes (the manifest's dataset notes,
// the run's log) and in the returned note, for the report; "" when none.
// forms are the values of the study's forms: option (for their lines).
func (e *Experiment) CheckCoverage(set *item.Set, asked []item.LangForm, forms []string) (string, error) {
	cov := set.Coverage(asked)
	ps := e.missingLanguages(set, cov, cov.Languages)
	var langs []string
	for _, lf := range asked {
		langs = append(langs, lf.Language)
	}
	for _, f := range cov.Forms {
		line := 0
		for i, v := range forms {
			if g, err := item.ParseForm(v); err == nil && g == f {
				line = lineOf(e.src, "forms", strconv.Itoa(i))
			}
		}
		ps = append(ps, Problem{Line: line, Msg: fmt.Sprintf("forms: dataset %s has the %s form for none of the asked languages; it has %s for them",
			set.Dataset, f, strings.Join(cov.HasForms(langs...), ", "))})
	}
	if len(ps) > 0 {
		return "", ps
	}
	note := cov.GapNote(set.Dataset)
	if note != "" {
		set.Notes = append(set.Notes, note)
	}
	return note, nil
}

// CheckLanguages refuses asked languages (ISO 639-3 codes) of which set
// has no item in any form, at their YAML lines, naming what set has.
func (e *Experiment) CheckLanguages(set *item.Set, isos []string) error {
	cov := set.Coverage(nil)
	has := cov.HasLanguages()
	missing := slices.DeleteFunc(slices.Clone(isos), func(iso string) bool { return slices.Contains(has, iso) })
	if ps := e.missingLanguages(set, cov, missing); len(ps) > 0 {
		return ps
	}
	return nil
}

// missingLanguages are the problems of asked languages set lacks.
func (e *Experiment) missingLanguages(set *item.Set, cov item.Coverage, isos []string) Problems {
	reg := lang.New()
	var ps Problems
	for _, iso := range isos {
		line, name := 0, iso
		for i, v := range e.Languages {
			if l, err := reg.Lookup(v); err == nil && l.ISO3 == iso {
				line, name = lineOf(e.src, "languages", strconv.Itoa(i)), fmt.Sprintf("%s (%s, %s)", v, l.Name, iso)
			}
		}
		ps = append(ps, Problem{Line: line, Msg: fmt.Sprintf("languages: %s is not in dataset %s, which has %s",
			name, set.Dataset, strings.Join(cov.HasLanguages(), ", "))})
	}
	return ps
}
