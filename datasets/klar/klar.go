// Package klar reads KLAR (Wang et al., ACL 2025) and IndicKLAR (Mazumder
// et al., EMNLP Findings 2026) fact data.
//
// The release layout is ROOT/<lang>/<relation>.json: {"prompt_templates":
// [...], "samples": [{"index", "subject", "object", "object_candidates",
// "subject_en"?, "object_en"?}]}. A directory <code>-en holds the
// code-mixed form of <code>; "en" is English. The question is
// prompt_templates[0] filled (Fill). object_candidates is a list or one
// comma-separated string, gold last, kept in Variant.StoredCandidates;
// item.Options.ShuffleCandidates shuffles Variant.Candidates (SetCandidates).
// The KLAR index is the item ID that joins a fact across languages.
package klar

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/datasets/internal/jsonlist"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/internal/jsonpos"
)

// DirLanguage maps a directory name to a language and form: "hin" →
// Hindi native, "hin-en" and "bn-en" → code-mixed, "en" → English.
func DirLanguage(reg *lang.Registry, dir string) (lang.Language, item.Form, error) {
	base, cm := strings.CutSuffix(dir, "-en")
	l, err := reg.Lookup(base)
	if err != nil {
		return l, "", fmt.Errorf("directory %q: %w", dir, err)
	}
	switch {
	case cm:
		return l, item.CodeMixed, nil
	case l.ISO3 == "eng":
		return l, item.English, nil
	}
	return l, item.Native, nil
}

type sample struct {
	Index      json.RawMessage `json:"index"`
	Subject    *string         `json:"subject"`
	Object     *string         `json:"object"`
	Candidates json.RawMessage `json:"object_candidates"`
	SubjectEN  string          `json:"subject_en"`
	ObjectEN   string          `json:"object_en"`
}

// Load reads every <lang>/<relation>.json under root. langs, when not
// empty, restricts the directories read (codes as the registry accepts;
// "hin" also selects "hin-en").
func Load(ctx context.Context, root string, reg *lang.Registry, langs []string, opts item.Options) (*item.Set, error) {
	files, err := filepath.Glob(filepath.Join(root, "*", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", root, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no <lang>/<relation>.json files", root)
	}
	sort.Strings(files)
	want := map[string]bool{}
	for _, c := range langs {
		l, err := reg.Lookup(c)
		if err != nil {
			return nil, err
		}
		want[l.ISO3] = true
	}
	s := &item.Set{Dataset: "klar"}
	for _, f := range files {
		l, form, err := DirLanguage(reg, filepath.Base(filepath.Dir(f)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(want) > 0 && !want[l.ISO3] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %s: %w", root, err)
		}
		if err := loadFile(ctx, s, f, l, form, opts); err != nil {
			return nil, err
		}
	}
	s.Sort()
	return s, nil
}

func loadFile(ctx context.Context, s *item.Set, path string, l lang.Language, form item.Form, opts item.Options) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	lines := jsonpos.NewCounter(bytes.NewReader(b))
	relation := strings.TrimSuffix(filepath.Base(path), ".json")
	dec := json.NewDecoder(lines)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return item.Problem{File: path, Line: 1, Msg: "not a JSON object"}
	}
	var template string
	haveTemplate := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return item.Problem{File: path, Line: lines.Line(dec.InputOffset()), Msg: err.Error()}
		}
		key, _ := kt.(string)
		switch key {
		case "prompt_templates":
			var ts []string
			if err := dec.Decode(&ts); err != nil || len(ts) == 0 {
				return item.Problem{File: path, Line: lines.Line(dec.InputOffset()), Field: "prompt_templates", Msg: "want a non-empty list of strings"}
			}
			template, haveTemplate = ts[0], true
			if !strings.Contains(template, "<subject>") {
				return item.Problem{File: path, Field: "prompt_templates[0]", Msg: fmt.Sprintf("template %q has no <subject>", template)}
			}
			if !strings.Contains(template, "<mask>") {
				s.Notes = append(s.Notes, fmt.Sprintf("%s: template %q has no <mask>; used as is (a known defect of the release)", path, template))
			}
		case "samples":
			if !haveTemplate {
				return item.Problem{File: path, Field: "prompt_templates", Msg: "must come before samples"}
			}
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return item.Problem{File: path, Field: "samples", Msg: "want a list"}
			}
			err := jsonlist.Each(ctx, dec, path, lines.Line, "samples", s, opts, func(sm *sample, src item.Problem) error {
				return addSample(s, *sm, src, relation, template, l, form, opts)
			})
			if err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return item.Problem{File: path, Line: lines.Line(dec.InputOffset()), Field: key, Msg: err.Error()}
			}
		}
	}
	return nil
}

// addSample adds sample sm of a relation's file, at src, to s.
func addSample(s *item.Set, sm sample, src item.Problem, relation, template string, l lang.Language, form item.Form, opts item.Options) error {
	fail := func(field, msg string) error { return s.Fail(opts, src.At(field, msg)) }
	id, err := parseIndex(sm.Index)
	if err != nil {
		return fail("index", err.Error())
	}
	if sm.Subject == nil || strings.TrimSpace(*sm.Subject) == "" {
		return fail("subject", "missing or empty")
	}
	if sm.Object == nil || strings.TrimSpace(*sm.Object) == "" {
		return fail("object", "missing or empty")
	}
	cands, err := parseCandidates(sm.Candidates)
	if err != nil {
		return fail("object_candidates", err.Error())
	}
	v := item.Variant{
		Language: l.ISO3, Form: form, Template: template, Subject: *sm.Subject, Answer: *sm.Object,
		Question: Fill(template, *sm.Subject), Source: src.Place(),
	}
	SetCandidates(&v, cands, id+"/"+v.Language+"/"+string(v.Form), opts)
	it := s.Get(id)
	it.Relation = cmp.Or(it.Relation, relation)
	if _, dup := it.Variant(v.Language, v.Form); dup {
		return fail("index", fmt.Sprintf("fact %s appears twice for %s/%s", id, v.Language, v.Form))
	}
	it.Variants = append(it.Variants, v)
	return nil
}

// Fill builds the question from a template the authors' way: the first
// <subject> becomes the subject, every <mask> is deleted, and the result
// is trimmed (so "... is: <mask>." ends in "is: .").
func Fill(template, subject string) string {
	q := strings.Replace(template, "<subject>", subject, 1)
	q = strings.ReplaceAll(q, "<mask>", "")
	return strings.TrimSpace(q)
}

func parseIndex(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", fmt.Errorf("missing")
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return string(n), nil
		}
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil && str != "" {
		return str, nil
	}
	return "", fmt.Errorf("want an integer or a non-empty string, got %s", raw)
}

// parseCandidates accepts a JSON list of strings or one comma-separated
// string (SplitCandidates).
func parseCandidates(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return clean(list), nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		return SplitCandidates(str), nil
	}
	return nil, fmt.Errorf("want a list of strings or a comma-separated string, got %.60s", raw)
}

// SplitCandidates splits a comma-separated list of candidates on ',',
// trims each piece and drops the empty ones.
func SplitCandidates(s string) []string { return clean(strings.Split(s, ",")) }

func clean(in []string) []string {
	var out []string
	for _, c := range in {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// SetCandidates sets v's stored candidates to cands, and those it shows:
// cands again, or with opts.ShuffleCandidates a permutation that depends
// only on opts.Seed and salt (a PCG stream seeded by both), so reruns
// agree and the gold's stored position gives nothing away.
func SetCandidates(v *item.Variant, cands []string, salt string, opts item.Options) {
	v.StoredCandidates, v.Candidates = cands, cands
	if !opts.ShuffleCandidates {
		return
	}
	h := fnv.New64a()
	h.Write([]byte(salt))
	r := rand.New(rand.NewPCG(uint64(opts.Seed), h.Sum64()))
	v.Candidates = append([]string(nil), cands...)
	r.Shuffle(len(v.Candidates), func(i, j int) { v.Candidates[i], v.Candidates[j] = v.Candidates[j], v.Candidates[i] })
}
