package extract

import "testing"

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
