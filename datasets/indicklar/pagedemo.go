// Package indicklar reads IndicKLAR data.
//
// This file reads the project-page demo bundle (docs/static/data/demo.json
// of the authors' repository): per language, facts with the question
// filled in three forms (native, code-mixed, English) and the gold answer
// written "native (English)".
package indicklar

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Forms of a question.
const (
	FormNative    = "native"
	FormCodeMixed = "code-mixed"
	FormEnglish   = "english"
)

// Question is one filled question of the demo bundle.
type Question struct {
	ID       string // KLAR fact index
	Language string // IndicKLAR 3-letter code, e.g. "hin"
	Form     string // FormNative, FormCodeMixed or FormEnglish
	Text     string
	// GoldNative and GoldEnglish split the bundle's "native (English)" gold.
	GoldNative, GoldEnglish string
}

// Gold is the answer expected in the question's form: the English gold for
// English and code-mixed questions (the bundle's recorded correct answers
// are English for both), the native one otherwise.
func (q Question) Gold() string {
	if q.Form == FormNative || q.GoldEnglish == "" {
		return q.GoldNative
	}
	return q.GoldEnglish
}

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

// ReadPageDemo reads a demo bundle; errors name the file and the field.
func ReadPageDemo(path string) ([]Question, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading IndicKLAR demo bundle: %w", err)
	}
	var d pageDemo
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	langs := make([]string, 0, len(d.Langs))
	for l := range d.Langs {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	var out []Question
	for _, l := range langs {
		for i, f := range d.Langs[l].Facts {
			at := fmt.Sprintf("%s: langs.%s.facts[%d]", path, l, i)
			if f.Idx == "" {
				return nil, fmt.Errorf("%s: field \"idx\" is empty", at)
			}
			if f.Gold == "" {
				return nil, fmt.Errorf("%s (idx %s): field \"gold\" is empty", at, f.Idx)
			}
			native, english := splitGold(f.Gold)
			for _, v := range []struct{ form, text string }{{FormNative, f.Native}, {FormCodeMixed, f.CM}, {FormEnglish, f.En}} {
				if strings.TrimSpace(v.text) == "" {
					continue // missing form: reported by alignment checks, never invented
				}
				out = append(out, Question{ID: f.Idx, Language: l, Form: v.form, Text: v.text, GoldNative: native, GoldEnglish: english})
			}
		}
	}
	return out, nil
}

// splitGold splits "फ्रांस (France)" into "फ्रांस" and "France".
func splitGold(g string) (string, string) {
	g = strings.TrimSpace(g)
	if strings.HasSuffix(g, ")") {
		if i := strings.LastIndex(g, " ("); i > 0 {
			return strings.TrimSpace(g[:i]), strings.TrimSpace(g[i+2 : len(g)-1])
		}
	}
	return g, ""
}
