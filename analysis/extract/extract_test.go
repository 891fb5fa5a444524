package extract

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestField(t *testing.T) {
	cases := []struct {
		name, raw string
		value     string
		method    Method
		null      bool
	}{
		{"plain", `{"answer": "फ्रांस"}`, "फ्रांस", MethodJSON, false},
		{"spaces", "  {\"answer\": \" Paris \"}\n", "Paris", MethodJSON, false},
		{"two fields", `{"translation": "Which country?", "answer": "France"}`, "France", MethodJSON, false},
		{"fenced", "```json\n{\"answer\": \"Rome\"}\n```", "Rome", MethodFenced, false},
		{"fenced no lang", "Here:\n```\n{\"answer\": \"Rome\"}\n```\nDone", "Rome", MethodFenced, false},
		{"json then text", `{"answer": "Oslo"} I am confident because...`, "Oslo", MethodEmbedded, false},
		{"text then json", `Sure! {"answer": "Oslo"}`, "Oslo", MethodEmbedded, false},
		{"brace in text first", `Think {step} then {"answer": "Oslo"}`, "Oslo", MethodEmbedded, false},
		{"single quotes", `{'answer': 'Lima'}`, "Lima", MethodSingleQuoted, false},
		{"truncated", `{"answer": "Buenos Ai`, "Buenos Ai", MethodTruncated, false},
		{"truncated escaped", `{"reasoning": "x", "answer": "a \"b`, `a "b`, MethodTruncated, false},
		{"null", `{"answer": null}`, "", MethodJSON, true},
		{"number", `{"answer": 1947}`, "1947", MethodJSON, false},
		{"missing field", `{"translation": "x"}`, "", MethodUnparsed, false},
		{"prose", `The answer is Paris.`, "", MethodUnparsed, false},
		{"empty", "   ", "", MethodUnparsed, false},
		{"list value", `{"answer": ["a"]}`, "", MethodUnparsed, false},
	}
	for _, c := range cases {
		r := Field(c.raw, "answer")
		if r.Value != c.value || r.Method != c.method || r.Null != c.null {
			t.Errorf("%s: %+v, want %q by %s", c.name, r, c.value, c.method)
		}
		if r.Method == MethodUnparsed && r.Note == "" {
			t.Errorf("%s: unparsed without a note", c.name)
		}
	}
	if r := Field("The answer is Paris.", "answer"); r.Fallback != "The answer is Paris." {
		t.Errorf("fallback %q", r.Fallback)
	}
	if r := Field(`{"translation": "Which?", "answer": "X"}`, "answer"); r.Fields["translation"] != "Which?" {
		t.Errorf("fields %v", r.Fields)
	}
}

func TestFirstLine(t *testing.T) {
	cases := []struct{ raw, want string }{{" Paris\nQ: next", "Paris"}, {"Rome", "Rome"}, {"\nRome", ""}}
	for _, c := range cases {
		r := FirstLine(c.raw)
		if r.Value != c.want || (c.want == "") != (r.Method == MethodUnparsed) {
			t.Errorf("%q: %+v", c.raw, r)
		}
	}
}

func TestCandidates(t *testing.T) {
	cands := []string{"Paris", " Rome"}
	for _, c := range []struct {
		v  string
		in bool
	}{{"paris", true}, {"Rome", true}, {"Lyon", false}} {
		r := Candidates(Result{Value: c.v, Method: MethodJSON}, cands)
		if r.InCandidates == nil || *r.InCandidates != c.in {
			t.Errorf("%s: %+v", c.v, r)
		}
	}
	if r := Candidates(Result{Method: MethodUnparsed}, cands); r.InCandidates != nil {
		t.Error("checked an unparsed result")
	}
}

// The authors' rule reads only a whole JSON object with a string field;
// everything else falls back to the raw text, as their json.loads does.
func TestAuthors(t *testing.T) {
	cases := []struct {
		raw, value string
		method     Method
		fallback   string
	}{
		{`{"answer": " फ्रांस "}`, "फ्रांस", MethodJSON, ""},
		{`  {"answer": "Paris", "translation": "x"}  `, "Paris", MethodJSON, ""},
		{`{"translation": "x"}`, "", MethodJSON, ""}, // .get("answer", "") is empty: scored wrong
		{`{"answer": "फ्रां`, "", MethodUnparsed, `{"answer": "फ्रां`},
		{"```json\n{\"answer\": \"Paris\"}\n```", "", MethodUnparsed, "```json\n{\"answer\": \"Paris\"}\n```"},
		{`The answer: {"answer": "Paris"}`, "", MethodUnparsed, `The answer: {"answer": "Paris"}`},
		{`{'answer': 'Paris'}`, "", MethodUnparsed, `{'answer': 'Paris'}`},
		{`{"answer": null}`, "", MethodUnparsed, `{"answer": null}`},
		{`{"answer": 1947}`, "", MethodUnparsed, `{"answer": 1947}`},
		{`["Paris"]`, "", MethodUnparsed, `["Paris"]`},
		{`Paris`, "", MethodUnparsed, `Paris`},
		{``, "", MethodUnparsed, ``},
	}
	for _, c := range cases {
		r := Authors(c.raw, "answer")
		if r.Value != c.value || r.Method != c.method || (c.method == MethodUnparsed && r.Fallback != c.fallback) {
			t.Errorf("Authors(%q) = %+v", c.raw, r)
		}
	}
	// The lenient rule reads the truncated answer the authors' rule does not.
	if r := Field(`{"answer": "फ्रां`, "answer"); r.Value != "फ्रां" || r.Method != MethodTruncated {
		t.Errorf("Field on truncated output: %+v", r)
	}
}

// TestCaseless: for every rune, caseless agrees with unicode.SimpleFold
// (U+FFFD and an invalid byte are never caseless).
func TestCaseless(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) {
			if got, want := caseless(string(r)), unicode.SimpleFold(r) == r && r != utf8.RuneError; got != want {
				t.Fatalf("caseless(%U) = %v, want %v", r, got, want)
			}
		}
	}
	if caseless("অ\xff") {
		t.Error("an invalid byte is caseless")
	}
}

// TestListedIsEqualFold: Listed answers as comparing every candidate with
// strings.EqualFold does, on texts mixing caseless Bengali with letters
// whose case orbits cross scripts (k, K and the Kelvin sign; s, S and
// the long s; the Greek sigmas), U+FFFD and invalid bytes.
func TestListedIsEqualFold(t *testing.T) {
	want := func(v string, cands []string) bool {
		return slices.ContainsFunc(cands, func(c string) bool { return strings.EqualFold(strings.TrimSpace(c), v) })
	}
	cases := []struct {
		value string
		cands []string
	}{
		{"ঢাকা", []string{" ঢাকা ", "দিল্লি"}},
		{"ঢাকা", []string{"ঢাকাা", "ঢাক"}},
		{"kelvin", []string{"\u212Aelvin"}},
		{"\u212Aelvin", []string{"KELVIN"}},
		{"ſa", []string{"SA"}},
		{"σ", []string{"Σ", "ς"}},
		{"\uFFFD", []string{"\xff"}},
		{"\xff", []string{"\xfe", "\uFFFD"}},
		{"৫০", []string{"৫০"}},
		{"", []string{"", " "}},
	}
	alphabet := []string{"অ", "া", "ক", "k", "K", "\u212A", "s", "S", "ſ", "σ", "Σ", "ς", "\uFFFD", "\xff", " ", "1", "-", "ß", "ẞ"}
	rng := rand.New(rand.NewPCG(7, 11))
	word := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		c := struct {
			value string
			cands []string
		}{value: word()}
		for range 1 + rng.IntN(4) {
			c.cands = append(c.cands, word())
		}
		cases = append(cases, c)
	}
	for _, c := range cases {
		if got := Listed(c.value, c.cands); got != want(c.value, c.cands) {
			t.Errorf("Listed(%q, %q) = %v, EqualFold says %v", c.value, c.cands, got, !got)
		}
	}
}

// TestOnlyField: Authors and Field read every output as encoding/json
// does (authors, lenient), whether or not the one-member shortcut takes
// it: outputs built from pieces that are JSON or nearly (escapes, other
// keys, more members, control characters, invalid UTF-8, numbers, null,
// padding, fences, single quotes, a cut-off end).
func TestOnlyField(t *testing.T) {
	pieces := []string{`{`, `}`, `"answer"`, `"translation"`, `:`, `,`, ` `, "\t", "\n", `"ঢাকা"`, `" ঢাকা "`, `"a\"b"`, `"\u0041"`,
		`"x` + "\x01" + `"`, `"` + "\xff" + `"`, `1`, `null`, `[`, `]`, "```json", "```", `'answer'`, `"`, `"Paris"`, "\u00a0", `""`}
	cases := []string{`{"answer":"ঢাকা"}`, `{ "answer" : " ঢাকা " }`, "\n{\"answer\":\"x\"}\n", `{"answer":"x"}}`, `{"answer":"x",}`,
		`{"answer":"x","answer":"y"}`, `{"answer":"a\nb"}`, `{"answer":"` + "\xe0\xa6" + `"}`, `{"translation":"x"}`, `{"answer":1}`, `{"answer":null}`, `{}`, ``}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 30000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		cases = append(cases, b.String(), `{"answer":`+b.String()+`}`, `{"answer":"`+b.String()+`"}`)
	}
	took := 0
	for _, raw := range cases {
		trimmed := strings.TrimSpace(raw)
		for _, field := range []string{"answer", "translation"} {
			if _, ok := onlyValue(trimmed, field); ok {
				took++
			}
			if RulesAgree(raw, field) && !reflect.DeepEqual(Authors(raw, field), Field(raw, field)) {
				t.Errorf("RulesAgree(%q, %q), but Authors %+v and Field %+v", raw, field, Authors(raw, field), Field(raw, field))
			}
			if got, want := Authors(raw, field), authors(trimmed, field); !reflect.DeepEqual(got, want) {
				t.Errorf("Authors(%q, %q) = %+v, by encoding/json %+v", raw, field, got, want)
			}
			if got, want := Field(raw, field), lenient(trimmed, field); !reflect.DeepEqual(got, want) {
				t.Errorf("Field(%q, %q) = %+v, by encoding/json %+v", raw, field, got, want)
			}
		}
	}
	if took < 1000 {
		t.Errorf("the shortcut took %d outputs: the test hardly exercises it", took)
	}
}
