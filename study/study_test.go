package study_test

import (
	"testing"

	"github.com/bhashalab/bhasha/study"
)

// TestNormalize: Normalize applies every normalisation step, so that
// forms of one answer that differ in case, punctuation, white space or
// digits compare equal.
func TestNormalize(t *testing.T) {
	cases := []struct{ a, b string }{
		{"  Paris. ", "paris"},
		{"NEW   Delhi", "new delhi"},
		{"१९४७", "1947"},
	}
	for _, c := range cases {
		if got, want := study.Normalize(c.a), study.Normalize(c.b); got != want {
			t.Errorf("Normalize(%q) = %q, want Normalize(%q) = %q", c.a, got, c.b, want)
		}
	}
}
