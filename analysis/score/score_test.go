package score

import (
	"encoding/json"
	"math"
	"testing"
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
