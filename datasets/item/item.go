// Package item is the aligned data model every loader produces: an Item is
// one fact or question, identified across languages by its ID, with one
// Variant per (language, form) in which it is asked.
package item

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Form is how a question is written.
type Form string

// Forms.
const (
	Native    Form = "native"     // the language's own script and words
	CodeMixed Form = "code-mixed" // native grammar with English content words (e.g. Hinglish)
	English   Form = "english"    // English
	Romanized Form = "romanized"  // native words in Latin script
)

// ParseForm accepts the form names and the common abbreviations
// ("na", "cm", "en", "rom").
func ParseForm(s string) (Form, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "native", "na", "nat":
		return Native, nil
	case "code-mixed", "codemixed", "code_mixed", "cm":
		return CodeMixed, nil
	case "english", "en":
		return English, nil
	case "romanized", "romanised", "rom", "translit", "transliterated":
		return Romanized, nil
	}
	return "", fmt.Errorf("unknown form %q (want native, code-mixed, english or romanized)", s)
}

// Variant is an item in one language and form.
type Variant struct {
	Language string `json:"language"` // registry code (ISO 639-3)
	Form     Form   `json:"form"`
	// Question is the question or filled prompt as the source gives it;
	// for a cloze source (BMLAMA) it is the text before Template's <mask>,
	// which in some languages is the bare subject (package bmlama).
	Question string   `json:"question"`
	Template string   `json:"template,omitempty"` // template with <subject> and <mask>, if the source has one
	Subject  string   `json:"subject,omitempty"`
	Answer   string   `json:"answer"`            // the gold answer
	Aliases  []string `json:"aliases,omitempty"` // other accepted answers
	// Candidates are the answer options: the source's order, or with
	// Options.ShuffleCandidates an order of the seed, item and language
	// (and form), so that one fact's candidates differ in order from one
	// language to another.
	Candidates []string `json:"candidates,omitempty"`
	// StoredCandidates keeps the source's candidate order when Candidates
	// was shuffled (the IndicKLAR authors' matcher walks the stored order).
	// In BMLAMA and KLAR that order is the same in every language, gold
	// last, so StoredCandidates[i] is the same candidate in each of an
	// item's variants: it lines the languages' candidates up.
	StoredCandidates []string `json:"stored_candidates,omitempty"`
	Source           string   `json:"source"` // file and line or record it came from
}

// Golds returns the answer followed by its aliases.
func (v *Variant) Golds() []string { return append([]string{v.Answer}, v.Aliases...) }

// Item is one fact or question across languages.
type Item struct {
	ID       string    `json:"id"`
	Dataset  string    `json:"dataset"`
	Relation string    `json:"relation,omitempty"`
	Domain   string    `json:"domain,omitempty"`
	Variants []Variant `json:"variants"`
	// Choices and Correct describe a multiple-choice item (TruthfulQA mc1).
	Choices []string `json:"choices,omitempty"`
	Correct int      `json:"correct,omitempty"`
}

// Variant returns the item's variant in lang and form.
func (it *Item) Variant(lang string, form Form) (*Variant, bool) {
	for i := range it.Variants {
		if it.Variants[i].Language == lang && it.Variants[i].Form == form {
			return &it.Variants[i], true
		}
	}
	return nil, false
}

// Problem is one invalid input record.
type Problem struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`   // 1-based line, when the format has lines
	Record string `json:"record,omitempty"` // record path (e.g. samples[12]) otherwise
	Field  string `json:"field,omitempty"`
	Msg    string `json:"message"`
}

func (p Problem) Error() string {
	s := p.File
	if p.Line > 0 {
		s += " line " + strconv.Itoa(p.Line)
	}
	if p.Record != "" {
		s += " " + p.Record
	}
	if p.Field != "" {
		s += " field " + strconv.Quote(p.Field)
	}
	return s + ": " + p.Msg
}

// Place is where p is, as a Variant's Source writes it: "file:line", or
// "file record" for a format without lines.
func (p Problem) Place() string {
	switch {
	case p.Line > 0:
		return p.File + ":" + strconv.Itoa(p.Line)
	case p.Record != "":
		return p.File + " " + p.Record
	}
	return p.File
}

// Options are shared by the loaders.
type Options struct {
	// SkipInvalid skips malformed records (counted in Set.Skipped) instead
	// of failing on the first one.
	SkipInvalid bool
	// Seed drives every deterministic shuffle (candidate order).
	Seed int64
	// ShuffleCandidates shuffles each item's candidates with the seed;
	// without it they keep the source's order (the IndicKLAR authors'
	// code: the gold is always last, a position cue).
	ShuffleCandidates bool
}

// Set is what a loader returns.
type Set struct {
	Dataset string    `json:"dataset"`
	Items   []*Item   `json:"items"`
	Skipped []Problem `json:"skipped,omitempty"`
	Notes   []string  `json:"notes,omitempty"` // observations (quirks handled)
	byID    map[string]*Item
}

// Get returns the item with id, creating it (in insertion order) if new.
func (s *Set) Get(id string) *Item {
	if s.byID == nil {
		s.byID = s.Index()
	}
	if it, ok := s.byID[id]; ok {
		return it
	}
	it := &Item{ID: id, Dataset: s.Dataset}
	s.byID[id] = it
	s.Items = append(s.Items, it)
	return it
}

// Index maps each item's id to the item (a new map, for lookups while
// scoring).
func (s *Set) Index() map[string]*Item {
	m := make(map[string]*Item, len(s.Items))
	for _, it := range s.Items {
		m[it.ID] = it
	}
	return m
}

// Sort orders items by ID, numerically when both IDs are integers, and
// each item's variants by language and form.
func (s *Set) Sort() {
	sort.SliceStable(s.Items, func(i, j int) bool { return lessID(s.Items[i].ID, s.Items[j].ID) })
	for _, it := range s.Items {
		slices.SortStableFunc(it.Variants, func(a, b Variant) int {
			return cmp.Or(cmp.Compare(a.Language, b.Language), cmp.Compare(a.Form, b.Form))
		})
	}
}

func lessID(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case (errA == nil) != (errB == nil):
		return errA == nil // an integer ID first
	}
	return a < b
}

// At is p with its field and message set.
func (p Problem) At(field, msg string) Problem {
	p.Field, p.Msg = field, msg
	return p
}

// Fail records p: an error unless opts.SkipInvalid, when it is kept in Skipped.
func (s *Set) Fail(opts Options, p Problem) error {
	if !opts.SkipInvalid {
		return p
	}
	s.Skipped = append(s.Skipped, p)
	return nil
}

// LangForm is a (language, form) pair.
type LangForm struct {
	Language string `json:"language"`
	Form     Form   `json:"form"`
}

func (lf LangForm) String() string { return lf.Language + "/" + string(lf.Form) }

// Report summarises a set: items per language and form, and the items
// missing from each (alignment gaps, never silently dropped).
type Report struct {
	Dataset string              `json:"dataset"`
	Items   int                 `json:"items"`
	PerLF   map[string]int      `json:"per_language_form"`
	Missing map[string][]string `json:"missing"` // language/form -> item ids absent there
	Skipped []Problem           `json:"skipped,omitempty"`
	Notes   []string            `json:"notes,omitempty"`
	// Warnings are valid records worth a look: each field holding C0 or
	// C1 control characters or DEL (but not tab, line feed or carriage
	// return), with where they are and which they are.
	Warnings []Problem `json:"warnings,omitempty"`
}

// Check builds the report.
func (s *Set) Check() Report {
	r := Report{Dataset: s.Dataset, Items: len(s.Items), PerLF: map[string]int{}, Missing: map[string][]string{}, Skipped: s.Skipped, Notes: s.Notes}
	lfs := map[LangForm]bool{}
	for _, it := range s.Items {
		r.Warnings = append(r.Warnings, controlWarnings(it)...)
		for _, v := range it.Variants {
			lf := LangForm{v.Language, v.Form}
			lfs[lf] = true
			r.PerLF[lf.String()]++
		}
	}
	for lf := range lfs {
		for _, it := range s.Items {
			if _, ok := it.Variant(lf.Language, lf.Form); !ok {
				r.Missing[lf.String()] = append(r.Missing[lf.String()], it.ID)
			}
		}
	}
	for k := range r.Missing {
		sort.Strings(r.Missing[k])
	}
	return r
}

// String renders the report for a terminal.
func (r Report) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %d items\n", r.Dataset, r.Items)
	for _, k := range slices.Sorted(maps.Keys(r.PerLF)) {
		fmt.Fprintf(&sb, "  %-24s %6d items", k, r.PerLF[k])
		if m := r.Missing[k]; len(m) > 0 {
			fmt.Fprintf(&sb, "  (missing %d: %s", len(m), strings.Join(m[:min(5, len(m))], ", "))
			if len(m) > 5 {
				sb.WriteString(", ...")
			}
			sb.WriteString(")")
		}
		sb.WriteString("\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&sb, "  note: %s\n", n)
	}
	for _, ps := range []struct {
		what string
		list []Problem
	}{{"warning(s):", r.Warnings}, {"invalid record(s) skipped:", r.Skipped}} {
		if len(ps.list) > 0 {
			fmt.Fprintf(&sb, "  %d %s\n", len(ps.list), ps.what)
		}
		for _, p := range ps.list {
			fmt.Fprintf(&sb, "    %s\n", p.Error())
		}
	}
	return sb.String()
}

// controlWarnings warns of each field of it holding control characters, at
// its variant's source (the first variant's for the item's own fields).
func controlWarnings(it *Item) []Problem {
	var out []Problem
	check := func(src, field, text string) {
		if msg := controlsIn(text); msg != "" {
			p := problemAt(src)
			p.Field, p.Msg = field, msg
			out = append(out, p)
		}
	}
	first := ""
	if len(it.Variants) > 0 {
		first = it.Variants[0].Source
	}
	check(first, "ID", it.ID)
	check(first, "Relation", it.Relation)
	check(first, "Domain", it.Domain)
	for i, c := range it.Choices {
		check(first, fmt.Sprintf("Choices[%d]", i), c)
	}
	for _, v := range it.Variants {
		check(v.Source, "Question", v.Question)
		check(v.Source, "Template", v.Template)
		check(v.Source, "Subject", v.Subject)
		check(v.Source, "Answer", v.Answer)
		for i, a := range v.Aliases {
			check(v.Source, fmt.Sprintf("Aliases[%d]", i), a)
		}
		for i, c := range v.Candidates {
			check(v.Source, fmt.Sprintf("Candidates[%d]", i), c)
		}
	}
	return out
}

// problemAt reads a variant's Source (Problem.Place) back into a Problem.
func problemAt(src string) Problem {
	if i := strings.LastIndexByte(src, ':'); i > 0 {
		if n, err := strconv.Atoi(src[i+1:]); err == nil && n > 0 {
			return Problem{File: src[:i], Line: n}
		}
	}
	if i := strings.LastIndexByte(src, ' '); i > 0 {
		return Problem{File: src[:i], Record: src[i+1:]}
	}
	return Problem{File: src}
}

// controlsIn describes the control characters in s but tab, LF and CR
// ("" when none): code point, name, first five 1-based character positions.
func controlsIn(s string) string {
	var kinds []rune
	var at [][]int // at[i]: kinds[i]'s 1-based character positions
	pos := 0
	for _, r := range s {
		pos++
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f {
			i := slices.Index(kinds, r)
			if i < 0 {
				i, kinds, at = len(kinds), append(kinds, r), append(at, nil)
			}
			at[i] = append(at[i], pos)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	c0 := [...]string{"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
		"DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US"}
	parts := make([]string, len(kinds))
	var pics []string
	for i, r := range kinds {
		name := "a C1 control"
		switch {
		case r < 0x20:
			name, pics = c0[r], append(pics, string(0x2400+r))
		case r == 0x7f:
			name, pics = "DEL", append(pics, "␡")
		}
		first := make([]string, min(5, len(at[i])))
		for j := range first {
			first[j] = strconv.Itoa(at[i][j])
		}
		more := ""
		if len(at[i]) > len(first) {
			more = fmt.Sprintf(" (%d in all)", len(at[i]))
		}
		parts[i] = fmt.Sprintf("U+%04X %s at character %s%s", r, name, strings.Join(first, ", "), more)
	}
	shown := "the exports keep them"
	if len(pics) > 0 {
		shown = "the figure, LaTeX and Markdown exports show " + strings.Join(pics, " ") + ", the workbook marks its cells, the CSV tables keep the exact text"
	}
	return "control character(s) " + strings.Join(parts, "; ") + " (" + shown + ")"
}
