package experiment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/studies"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// An experiment naming a study its registry does not hold lists that
// first, before what follows from it (the study's own options read as
// unknown keys), and errors.Is finds it.
func TestUnknownStudyIsListedFirst(t *testing.T) {
	models := "models: [{name: m, served_name: M}]\n"
	for _, c := range []struct {
		name, yaml string
		unknown    bool
	}{
		{"its options before it", "name: x\nanswer_tokens: 12\nbrief_words: 1\nstudy: brevity\n" + models, true},
		{"its options after it", "name: x\nstudy: brevity\nanswer_tokens: 12\n" + models, true},
		{"a known study with a mistyped key", "name: x\nsynthetic: {count: 2}\nzzzzzz: 1\n" + models, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := experiment.Parse(context.Background(), []byte(c.yaml), "x.yaml", experiment.LoadOptions{Studies: studies.Builtin()})
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, experiment.ErrUnknownStudy); got != c.unknown {
				t.Errorf("errors.Is(err, ErrUnknownStudy) = %t, want %t: %v", got, c.unknown, err)
			}
			var ps experiment.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("not Problems: %v", err)
			}
			if first := strings.Contains(ps[0].String(), `unknown study "brevity"`); first != c.unknown {
				t.Errorf("the first problem is %q:\n%v", ps[0], err)
			}
			if c.unknown && len(ps) < 2 {
				t.Errorf("the study's options are not listed after it:\n%v", err)
			}
		})
	}
}
