package item

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Coverage says how a set covers the (language, form) pairs a study asks.
type Coverage struct {
	// Languages lists the asked languages for which the set has no item
	// in any asked form: an experiment asking them is refused.
	Languages []string
	// Forms lists the asked forms that no asked language has in the set:
	// refused too.
	Forms []Form
	// Gaps are the other asked pairs without any item: gaps a dataset may
	// have by design (IndicKLAR's code-mixed form exists for 11 of its 18
	// languages), listed, never refused.
	Gaps []LangForm
	// Has lists the pairs the set has (language/form), sorted.
	Has []string
}

// Coverage reports which of the asked pairs the set has items for.
func (s *Set) Coverage(asked []LangForm) Coverage {
	have := map[LangForm]int{}
	for _, it := range s.Items {
		for _, v := range it.Variants {
			have[LangForm{v.Language, v.Form}]++
		}
	}
	var c Coverage
	for lf := range have {
		c.Has = append(c.Has, lf.String())
	}
	slices.Sort(c.Has)
	langOK, formOK := map[string]bool{}, map[Form]bool{}
	for _, lf := range asked {
		if have[lf] > 0 {
			langOK[lf.Language], formOK[lf.Form] = true, true
		}
	}
	for _, lf := range asked {
		if !langOK[lf.Language] && !slices.Contains(c.Languages, lf.Language) {
			c.Languages = append(c.Languages, lf.Language)
		}
		if !formOK[lf.Form] && !slices.Contains(c.Forms, lf.Form) {
			c.Forms = append(c.Forms, lf.Form)
		}
		if have[lf] == 0 && langOK[lf.Language] && formOK[lf.Form] {
			c.Gaps = append(c.Gaps, lf)
		}
	}
	return c
}

// HasLanguages lists the languages the set has, sorted.
func (c Coverage) HasLanguages() []string { return c.has(0, nil) }

// HasForms lists the forms the set has for the given languages (all when
// none are given), sorted.
func (c Coverage) HasForms(langs ...string) []string { return c.has(1, langs) }

// has lists part 0 (language) or 1 (form) of the pairs of langs (all when
// none are given), sorted, each once.
func (c Coverage) has(part int, langs []string) []string {
	set := map[string]bool{}
	for _, h := range c.Has {
		l, f, _ := strings.Cut(h, "/")
		if len(langs) == 0 || slices.Contains(langs, l) {
			set[[2]string{l, f}[part]] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// GapNote is the line that lists the gaps, "" when there are none.
func (c Coverage) GapNote(dataset string) string {
	if len(c.Gaps) == 0 {
		return ""
	}
	var parts []string
	for _, g := range c.Gaps {
		parts = append(parts, g.String())
	}
	return fmt.Sprintf("%d asked language/form pair(s) have no items in %s (the dataset's gaps; nothing is asked there): %s", len(c.Gaps), dataset, strings.Join(parts, ", "))
}
