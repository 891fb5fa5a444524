package score

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/script"
	"github.com/bhashalab/bhasha/runtime/engine"
)

func TestMC1(t *testing.T) {
	cases := []struct {
		scores         []float64
		correct        int
		strict, argmax bool
	}{
		{[]float64{-1, -2, -3}, 0, true, true},
		{[]float64{-2, -1, -3}, 0, false, false},
		{[]float64{-1, -1, -3}, 0, false, true}, // a tie: wrong by the original rule, right by lm-eval's argmax
		{[]float64{-3, -1, -1}, 2, false, false},
		{[]float64{-3, -1, -0.5}, 2, true, true},
	}
	for _, c := range cases {
		s, a := MC1(c.scores, c.correct)
		if s != c.strict || a != c.argmax {
			t.Errorf("MC1(%v, %d) = %v %v", c.scores, c.correct, s, a)
		}
	}
}

func TestContinuationLogprob(t *testing.T) {
	raw := json.RawMessage(`{"tokens":["Q","A:"," Yes","."],"token_logprobs":[null,-1.5,-0.25,-0.5],"text_offset":[0,1,3,7]}`)
	got, err := ContinuationLogprob(raw, 3)
	if err != nil || math.Abs(got-(-0.75)) > 1e-12 {
		t.Errorf("got %v %v", got, err)
	}
	if _, err := ContinuationLogprob(raw, 99); err == nil {
		t.Error("no continuation accepted")
	}
	if _, err := ContinuationLogprob(json.RawMessage(`{"tokens":[]}`), 0); err == nil {
		t.Error("malformed logprobs accepted")
	}
}

// A mark is one bit: setting it leaves the others, clearing it clears
// only it, and a bit outside [0, MaxMarks) panics.
func TestMarks(t *testing.T) {
	var m Marks
	for _, c := range []struct {
		bit  int
		v    bool
		want Marks
	}{
		{0, true, 1},
		{63, true, 1 | 1<<63},
		{5, true, 1 | 1<<5 | 1<<63},
		{0, false, 1<<5 | 1<<63},
		{7, false, 1<<5 | 1<<63},
	} {
		m.Set(c.bit, c.v)
		if m != c.want || m.Has(c.bit) != c.v {
			t.Errorf("Set(%d, %v): %b, want %b", c.bit, c.v, m, c.want)
		}
	}
	for _, bit := range []int{-1, MaxMarks} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("mark %d did not panic", bit)
				}
			}()
			m.Has(bit)
		}()
	}
}

// Script, switch and abstention are read from the answer, not the JSON
// around it: a native Hindi answer in a JSON object has not switched.
// Common.Row sets no study's mark or verdict, and RowExtracted with an
// extraction gives Row's row of the record holding it.
func TestScriptOfTheAnswer(t *testing.T) {
	s := NewCommon(nil)
	cases := []struct {
		name, response string
		extracted      *extract.Result
		language       string
		script         string
		switched, dsw  bool
	}{
		{"json native answer", `{"answer": "फ्रांस"}`, &extract.Result{Value: "फ्रांस", Method: extract.MethodJSON}, "hin", "Devanagari", false, true},
		{"json english answer to a native question", `{"answer": "France"}`, &extract.Result{Value: "France", Method: extract.MethodJSON}, "hin", "Latin", true, false},
		{"indicquest answer", `{"answer": "जापान"}`, &extract.Result{Value: "जापान", Method: extract.MethodJSON}, "hin", "Devanagari", false, true},
		{"unparsed: the fallback is what is scored", `फ्रांस है`, &extract.Result{Method: extract.MethodUnparsed, Fallback: "फ्रांस है"}, "hin", "Devanagari", false, true},
		{"no extraction: the raw response", "Paris", nil, "eng", "Latin", false, false},
	}
	for _, c := range cases {
		r := &engine.Record{Status: engine.StatusOK, Response: c.response, Extracted: c.extracted, Fields: engine.Key{Language: c.language}}
		row := s.Row(r)
		dsw := script.DistractorSwitch(AnswerText(r))
		if row.Script != c.script || row.Switched != c.switched || dsw != c.dsw {
			t.Errorf("%s: script %s switched %v distractor %v", c.name, row.Script, row.Switched, dsw)
		}
		if row.Marks != 0 || row.Verdict != "" {
			t.Errorf("%s: Common.Row set a study's marks %b or verdict %q", c.name, row.Marks, row.Verdict)
		}
		bare := *r
		bare.Extracted = nil
		if got := s.RowExtracted(&bare, c.extracted); got != row {
			t.Errorf("%s: RowExtracted gave %+v, Row %+v", c.name, got, row)
		}
	}
}
