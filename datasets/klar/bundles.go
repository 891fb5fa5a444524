package klar

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/internal/jsonpos"
)

type pageDemo struct {
	Model string `json:"model"`
	Langs map[string]struct {
		Name  string `json:"name"`
		Facts []struct {
			Idx    string `json:"idx"`
			Native string `json:"native"`
			CM     string `json:"cm"`
			En     string `json:"en"`
			Gold   string `json:"gold"`
		} `json:"facts"`
	} `json:"langs"`
}

// LoadPageDemo reads docs/static/data/demo.json: per language, facts with
// the filled question in native, code-mixed and English form and the gold
// written "native (English)". The gold of a native question is the native
// object; code-mixed and English questions take the English object (the
// bundle's recorded correct answers are English for both); English
// questions belong to English (eng), once per fact. A form that is
// missing is left out (and shows as an alignment gap), never invented.
func LoadPageDemo(ctx context.Context, path string, reg *lang.Registry, opts item.Options) (*item.Set, error) {
	d, err := readJSON[pageDemo](ctx, path, "demo")
	if err != nil {
		return nil, err
	}
	s := &item.Set{Dataset: "indicklar-page-demo"}
	for _, code := range slices.Sorted(maps.Keys(d.Langs)) {
		l, err := reg.Lookup(code)
		if err != nil {
			return nil, fmt.Errorf("%s: langs.%s: %w", path, code, err)
		}
		for i, f := range d.Langs[code].Facts {
			rec := fmt.Sprintf("langs.%s.facts[%d]", code, i)
			if f.Idx == "" || strings.TrimSpace(f.Gold) == "" {
				field := "gold"
				if f.Idx == "" {
					field = "idx"
				}
				if err := s.Fail(opts, item.Problem{File: path, Record: rec, Field: field, Msg: "empty"}); err != nil {
					return nil, err
				}
				continue
			}
			native, english := SplitGold(f.Gold)
			it := s.Get(f.Idx)
			for _, v := range []struct {
				form item.Form
				text string
			}{{item.Native, f.Native}, {item.CodeMixed, f.CM}, {item.English, f.En}} {
				if strings.TrimSpace(v.text) == "" {
					continue
				}
				ans, code := native, l.ISO3
				if v.form != item.Native && english != "" {
					ans = english
				}
				if v.form == item.English {
					code = "eng" // the same English question in every language block
					if _, dup := it.Variant(code, item.English); dup {
						continue
					}
				}
				it.Variants = append(it.Variants, item.Variant{Language: code, Form: v.form, Question: v.text, Answer: ans,
					Source: path + " " + rec})
			}
		}
	}
	return s, nil
}

// SplitGold splits "फ्रांस (France)" into "फ्रांस" and "France".
func SplitGold(g string) (string, string) {
	g = strings.TrimSpace(g)
	if strings.HasSuffix(g, ")") {
		if i := strings.LastIndex(g, " ("); i > 0 {
			return strings.TrimSpace(g[:i]), strings.TrimSpace(g[i+2 : len(g)-1])
		}
	}
	return g, ""
}

// LoadDemoSamples reads demo-backend/tools/samples.json: {"relations",
// "languages": {code: {name, cm}}, "facts": {index: {"r": relation,
// "<code>": [subject, object, candidates]}}}. The bundle has no filled
// questions, so variants carry subject, object and candidates only.
func LoadDemoSamples(ctx context.Context, path string, reg *lang.Registry, opts item.Options) (*item.Set, error) {
	d, err := readJSON[struct {
		Facts map[string]map[string]json.RawMessage `json:"facts"`
	}](ctx, path, "samples")
	if err != nil {
		return nil, err
	}
	s := &item.Set{Dataset: "indicklar-samples", Notes: []string{path + ": no question templates in this bundle; variants have subject, object and candidates only"}}
	for _, id := range slices.Sorted(maps.Keys(d.Facts)) {
		f := d.Facts[id]
		it := s.Get(id)
		for _, code := range slices.Sorted(maps.Keys(f)) {
			rec := fmt.Sprintf("facts.%s.%s", id, code)
			if code == "r" {
				if err := json.Unmarshal(f[code], &it.Relation); err != nil {
					return nil, item.Problem{File: path, Record: rec, Msg: "relation is not a string"}
				}
				continue
			}
			l, form, err := DirLanguage(reg, code)
			var triple []string
			msg := ""
			switch {
			case err != nil:
				msg = err.Error()
			case json.Unmarshal(f[code], &triple) != nil || len(triple) != 3 || triple[0] == "" || triple[1] == "":
				msg = "want [subject, object, candidates] with subject and object non-empty"
			}
			if msg != "" {
				if err := s.Fail(opts, item.Problem{File: path, Record: rec, Msg: msg}); err != nil {
					return nil, err
				}
				continue
			}
			v := item.Variant{Language: l.ISO3, Form: form, Subject: triple[0], Answer: triple[1], Source: path + " " + rec}
			SetCandidates(&v, SplitCandidates(triple[2]), id+"/"+v.Language+"/"+string(v.Form), opts)
			it.Variants = append(it.Variants, v)
		}
	}
	s.Sort()
	return s, nil
}

// readJSON reads a whole-file JSON bundle (what: demo or samples) into a
// T, refusing text that is not UTF-8 with the line and field of the first
// bad byte.
func readJSON[T any](ctx context.Context, path, what string) (*T, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading IndicKLAR %s bundle: reading %s: %w", what, path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading IndicKLAR %s bundle: reading IndicKLAR bundle: %w", what, err)
	}
	if off, key, msg, bad := jsonpos.BadUTF8(b); bad {
		return nil, fmt.Errorf("reading IndicKLAR %s bundle: %w", what, item.Problem{File: path, Line: bytes.Count(b[:off], []byte("\n")) + 1, Field: key, Msg: msg})
	}
	d := new(T)
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}
