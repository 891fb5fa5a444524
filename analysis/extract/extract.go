// Package extract pulls the answer out of raw model output and says how:
// every result carries a Method, and output it cannot read is Unparsed,
// never silently taken as some answer.
//
// For a JSON field the order of attempts is: the whole output is one JSON
// object (MethodJSON); the object sits in a ``` fence (MethodFenced); an
// object with text before or after it (MethodEmbedded); Python-style
// single quotes (MethodSingleQuoted); an object cut off by the token limit
// whose field value can still be read up to the cut (MethodTruncated).
// Otherwise the result is MethodUnparsed, and Fallback holds the whole
// output trimmed. Authors is the IndicKLAR authors' own rule (json.loads
// of the whole output, else the raw text is scored): the default of their
// study, Field its named lenient option.
package extract

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Method says how a value was extracted.
type Method string

// Methods.
const (
	MethodJSON         Method = "json"
	MethodFenced       Method = "fenced-json"
	MethodEmbedded     Method = "json-with-text"
	MethodSingleQuoted Method = "single-quoted-json"
	MethodTruncated    Method = "truncated-json"
	MethodFirstLine    Method = "first-line"
	MethodText         Method = "text" // the whole output, trimmed (free-text answers)
	MethodUnparsed     Method = "unparsed"
)

// Result is an extracted value.
type Result struct {
	Value  string `json:"value"`
	Method Method `json:"method"`
	// Null is true when the field was JSON null (IndicQuest's "unknown").
	Null bool `json:"null,omitempty"`
	// Fields holds every string field of the object found, Numbers every
	// number field (a graded judge's scores).
	Fields  map[string]string  `json:"fields,omitempty"`
	Numbers map[string]float64 `json:"numbers,omitempty"`
	// Fallback is the trimmed raw output (the authors' fallback).
	Fallback string `json:"fallback,omitempty"`
	// Note explains an Unparsed result.
	Note string `json:"note,omitempty"`
	// InCandidates is set by Candidates: nil when not checked.
	InCandidates *bool `json:"in_candidates,omitempty"`
}

// OK reports whether a value was extracted.
func (r Result) OK() bool { return r.Method != MethodUnparsed }

// FirstLine is the cloze extraction of the authors' baselines: the first
// line of the output, trimmed. Empty output is Unparsed.
func FirstLine(raw string) Result {
	line, _, _ := strings.Cut(raw, "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return Result{Method: MethodUnparsed, Note: "empty first line", Fallback: strings.TrimSpace(raw)}
	}
	return Result{Value: line, Method: MethodFirstLine}
}

// Authors is the IndicKLAR authors' JSON rule (Evaluation_Scripts, their
// json.loads then .get(field, "").strip()): the whole output, trimmed,
// must parse as one JSON object. A missing field gives the empty answer
// (MethodJSON, Value ""), which their matcher scores wrong. A field that
// is null, a number, a list or an object fails their .strip(), and so does
// output that is not one object (fenced, embedded, single-quoted, cut off
// by the token limit): the result is Unparsed and Fallback, the whole
// output trimmed, is what they score. Field is the lenient rule.
func Authors(raw, field string) Result { return read(raw, field, authors) }

// read is slow's result of raw trimmed, but for the commonest answer
// (onlyValue), which it reads without encoding/json as Authors and Field
// read it (TestOnlyField checks both ways agree).
func read(raw, field string, slow func(trimmed, field string) Result) Result {
	trimmed := strings.TrimSpace(raw)
	if val, ok := onlyValue(trimmed, field); ok {
		return Result{Value: strings.TrimSpace(val), Method: MethodJSON, Fields: map[string]string{field: val}, Fallback: trimmed}
	}
	return slow(trimmed, field)
}

// authors is Authors of trimmed output, by encoding/json.
func authors(trimmed, field string) Result {
	fail := Result{Method: MethodUnparsed, Fallback: trimmed}
	var v any
	if err := json.Unmarshal([]byte(trimmed), &v); err != nil {
		fail.Note = "not one JSON value (the authors' json.loads fails)"
		return fail
	}
	obj, ok := v.(map[string]any)
	if !ok {
		fail.Note = "JSON but not an object (the authors' .get fails)"
		return fail
	}
	r := Result{Method: MethodJSON, Fields: map[string]string{}, Fallback: trimmed}
	for k, x := range obj {
		if s, ok := x.(string); ok {
			r.Fields[k] = s
		}
	}
	x, present := obj[field]
	if !present {
		return r // .get(field, "") is the empty answer
	}
	str, ok := x.(string)
	if !ok {
		fail.Fields = r.Fields
		fail.Note = "field " + field + " is not a string (the authors' .strip fails)"
		return fail
	}
	r.Value = strings.TrimSpace(str)
	return r
}

var fence = regexp.MustCompile("(?s)```[a-zA-Z]*\\s*\\n?(.*?)```")

// Field extracts the string field of the JSON object in raw.
func Field(raw, field string) Result { return read(raw, field, lenient) }

// lenient is Field of trimmed output, by encoding/json.
func lenient(trimmed, field string) Result {
	fail := Result{Method: MethodUnparsed, Fallback: trimmed}
	if trimmed == "" {
		fail.Note = "empty output"
		return fail
	}
	if obj, ok := wholeObject(trimmed); ok {
		return fromObject(obj, field, MethodJSON, trimmed)
	}
	if m := fence.FindStringSubmatch(trimmed); m != nil {
		if obj, ok := wholeObject(strings.TrimSpace(m[1])); ok {
			return fromObject(obj, field, MethodFenced, trimmed)
		}
	}
	for i := range len(trimmed) {
		var obj map[string]any
		if trimmed[i] == '{' && json.NewDecoder(strings.NewReader(trimmed[i:])).Decode(&obj) == nil {
			return fromObject(obj, field, MethodEmbedded, trimmed)
		}
	}
	if strings.Contains(trimmed, "'") {
		if obj, ok := singleQuoted(trimmed); ok {
			return fromObject(obj, field, MethodSingleQuoted, trimmed)
		}
	}
	if v, ok := truncated(trimmed, field); ok {
		return Result{Value: v, Method: MethodTruncated, Fallback: trimmed}
	}
	fail.Note = "no JSON object with field " + field
	return fail
}

// RulesAgree reports that Authors(raw, field) and Field(raw, field) are
// the same result, without reading raw under either: true for the
// outputs both read by the same shortcut (onlyValue); false says
// nothing.
func RulesAgree(raw, field string) bool {
	_, ok := onlyValue(strings.TrimSpace(raw), field)
	return ok
}

// onlyValue is the value of field in the commonest answer, an object of
// one member, field, whose value is a string, both without escapes (no
// '\\', no control character, valid UTF-8); ok is false for any other
// text, which Authors and Field read with encoding/json.
func onlyValue(trimmed, field string) (val string, ok bool) {
	i := jsonSpace(trimmed, 0)
	if i >= len(trimmed) || trimmed[i] != '{' {
		return "", false
	}
	key, i, ok := plainString(trimmed, jsonSpace(trimmed, i+1))
	if !ok || key != field {
		return "", false
	}
	if i = jsonSpace(trimmed, i); i >= len(trimmed) || trimmed[i] != ':' {
		return "", false
	}
	val, i, ok = plainString(trimmed, jsonSpace(trimmed, i+1))
	if !ok {
		return "", false
	}
	if i = jsonSpace(trimmed, i); i >= len(trimmed) || trimmed[i] != '}' || jsonSpace(trimmed, i+1) != len(trimmed) {
		return "", false
	}
	return val, true
}

// jsonSpace is the index of the first byte at or after i that is not
// JSON whitespace.
func jsonSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the JSON string at s[i:] when it has no escape, no
// control character and is valid UTF-8: its text and the index after it.
func plainString(s string, i int) (_ string, next int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	j := i + 1
	for ; j < len(s) && s[j] != '"'; j++ {
		if s[j] == '\\' || s[j] < 0x20 {
			return "", i, false
		}
	}
	if j >= len(s) || !utf8.ValidString(s[i+1:j]) {
		return "", i, false
	}
	return s[i+1 : j], j + 1, true
}

func wholeObject(s string) (map[string]any, bool) {
	var obj map[string]any
	if json.Unmarshal([]byte(s), &obj) != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

func fromObject(obj map[string]any, field string, m Method, raw string) Result {
	r := Result{Method: m, Fields: map[string]string{}, Fallback: raw}
	for k, v := range obj {
		switch x := v.(type) {
		case string:
			r.Fields[k] = x
		case float64:
			if r.Numbers == nil {
				r.Numbers = map[string]float64{}
			}
			r.Numbers[k] = x
		}
	}
	v, present := obj[field]
	switch t := v.(type) {
	case string:
		r.Value = strings.TrimSpace(t)
	case nil:
		if !present {
			return Result{Method: MethodUnparsed, Fields: r.Fields, Numbers: r.Numbers, Fallback: raw, Note: "JSON object has no field " + field}
		}
		r.Null = true
	case float64, bool:
		b, _ := json.Marshal(t)
		r.Value = string(b)
	default:
		return Result{Method: MethodUnparsed, Fields: r.Fields, Fallback: raw, Note: "field " + field + " is not a string"}
	}
	return r
}

// singleQuoted reads {'a': 'b'} by swapping the quote characters of a
// string that has no double quotes of its own.
func singleQuoted(s string) (map[string]any, bool) {
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i || strings.Contains(s[i:j+1], `"`) {
		return nil, false
	}
	return wholeObject(strings.ReplaceAll(s[i:j+1], "'", `"`))
}

// truncated reads "field": "value... up to the end of the text or the
// closing quote, for output cut at the token limit.
func truncated(s, field string) (string, bool) {
	re := regexp.MustCompile(`"` + regexp.QuoteMeta(field) + `"\s*:\s*"((?:[^"\\]|\\.)*)`)
	m := re.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	var v string
	if err := json.Unmarshal([]byte(`"`+m[1]+`"`), &v); err != nil {
		v = m[1]
	}
	v = strings.TrimSpace(v)
	return v, v != ""
}

// Candidates records in r.InCandidates whether the extracted value is
// one of cands (Listed); an answer outside the list is flagged, not
// changed. An unparsed result or empty cands leave r as it is.
func Candidates(r Result, cands []string) Result {
	if !r.OK() || len(cands) == 0 {
		return r
	}
	in := Listed(r.Value, cands)
	r.InCandidates = &in
	return r
}

// Listed reports whether value is one of cands, each compared trimmed and
// case-insensitively (strings.EqualFold; byte equality when value is
// caseless, which EqualFold then is).
func Listed(value string, cands []string) bool {
	if caseless(value) {
		return slices.ContainsFunc(cands, func(c string) bool {
			// trimming never lengthens a candidate
			return len(c) >= len(value) && (len(c) > len(value) || c == value) && strings.TrimSpace(c) == value
		})
	}
	return slices.ContainsFunc(cands, func(c string) bool { return strings.EqualFold(strings.TrimSpace(c), value) })
}

// caseless reports whether s is valid UTF-8 without U+FFFD and every rune
// of it r has unicode.SimpleFold(r) == r (no other case).
func caseless(s string) bool {
	var folds *[0x10000 / 64]uint64
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return false
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' {
				return false
			}
		case r < 0x10000:
			if folds == nil {
				folds = foldsBMP()
			}
			if folds[r/64]&(1<<(r%64)) != 0 {
				return false
			}
		case unicode.SimpleFold(r) != r:
			return false
		}
	}
	return true
}

// foldsBMP marks the runes below U+10000 that have another case
// (unicode.SimpleFold(r) != r), one bit each: made once, read only.
var foldsBMP = sync.OnceValue(func() *[0x10000 / 64]uint64 {
	var b [0x10000 / 64]uint64
	for r := rune(0); r < 0x10000; r++ {
		if unicode.SimpleFold(r) != r {
			b[r/64] |= 1 << (r % 64)
		}
	}
	return &b
})
