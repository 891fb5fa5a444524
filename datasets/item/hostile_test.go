package item

import (
	"strings"
	"testing"
)

// Check warns of every field holding control characters, with its file,
// line (or record), field, and which characters stand where; tab, line
// feed and carriage return are text, not warnings.
func TestCheckWarnsOfControlCharacters(t *testing.T) {
	s := &Set{Dataset: "d"}
	it := s.Get("1")
	it.Domain = "Geo\x00graphy"
	it.Variants = []Variant{
		{Language: "eng", Form: English, Question: "Who\x00\x01\x1b?", Answer: "a\tb\nc\r\n", Aliases: []string{"ok", "x\x7f"}, Source: "data/English.csv:2"},
		{Language: "hin", Form: Native, Question: "क\u0085", Answer: "उ", Source: "klar/hi/capital.json samples[3]"},
	}
	s.Get("2").Variants = []Variant{{Language: "eng", Form: English, Question: "fine", Answer: "fine", Source: "data/English.csv:3"}}
	rep := s.Check()
	want := []Problem{
		{File: "data/English.csv", Line: 2, Field: "Domain", Msg: "U+0000 NUL at character 4"},
		{File: "data/English.csv", Line: 2, Field: "Question", Msg: "U+0000 NUL at character 4; U+0001 SOH at character 5; U+001B ESC at character 6"},
		{File: "data/English.csv", Line: 2, Field: "Aliases[1]", Msg: "U+007F DEL at character 2"},
		{File: "klar/hi/capital.json", Record: "samples[3]", Field: "Question", Msg: "U+0085 a C1 control at character 2"},
	}
	if len(rep.Warnings) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%s", len(rep.Warnings), len(want), rep)
	}
	for i, w := range want {
		g := rep.Warnings[i]
		if g.File != w.File || g.Line != w.Line || g.Record != w.Record || g.Field != w.Field || !strings.Contains(g.Msg, w.Msg) {
			t.Errorf("warning %d: %+v, want %+v", i, g, w)
		}
	}
	if !strings.Contains(rep.Warnings[1].Msg, "␀ ␁ ␛") || !strings.Contains(rep.String(), "4 warning(s):") {
		t.Errorf("the report does not say how exports show them:\n%s", rep)
	}
	many := controlsIn(strings.Repeat("\x1b", 7))
	if !strings.Contains(many, "at character 1, 2, 3, 4, 5 (7 in all)") {
		t.Errorf("seven ESCs: %s", many)
	}
}
