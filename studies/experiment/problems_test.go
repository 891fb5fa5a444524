package experiment

import (
	"context"
	"strings"
	"testing"
)

// A mistyped key is named with the nearest valid key of its mapping, not
// the Go type that holds it.
func TestUnknownKeys(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"langauges: [hi]\n", `line 3: unknown key "langauges": did you mean "languages"?`},
		{"models: [{name: a, served_nam: b}]\n", `line 3: unknown key "served_nam": did you mean "served_name"?`},
		{"decoding: {max_token: 3}\n", `line 3: unknown key "max_token": did you mean "max_tokens"?`},
		{"judge: {name: j, servd_name: J}\n", `line 3: unknown key "servd_name": did you mean "served_name"?`},
		{"dataset:\n  path: d\n  formt: klar\n", `line 5: unknown key "formt": did you mean "format"?`},
		{"models:\n  - name: a\n    endpoints: [{url: x}]\n", `line 5: cannot unmarshal !!map into string`},
		{"zzzzzz: 1\n", `line 3: unknown key "zzzzzz" (the experiment takes name, description, study,`},
	} {
		_, err := Parse(context.Background(), []byte("name: x\nstudy: indicklar\n"+c.yaml), "x.yaml", LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "type experiment.") {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}
