package chart

import (
	"errors"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/tables"
)

func TestDraw(t *testing.T) {
	full := tables.New("full", "", tables.Text("x", "x"))
	full.Add("a")
	empty := tables.New("empty", "", tables.Text("x", "x"))
	by := ByName([]*tables.Table{full, empty})
	named := func(name string) func(*tables.Table) ([]Figure, error) {
		return func(t *tables.Table) ([]Figure, error) { return []Figure{{Name: name + ":" + t.Name}}, nil }
	}
	failing := func(*tables.Table) ([]Figure, error) { return []Figure{{Name: "half"}}, errors.New("no axis") }
	for _, tc := range []struct {
		name   string
		makers []Maker
		want   string
		err    string
	}{
		{"in the makers' order", []Maker{{Table: "full", Make: named("b")}, {Table: "full", Make: named("a")}}, "b:full a:full", ""},
		{"an absent table draws nothing", []Maker{{Table: "absent", Empty: true, Make: named("a")}, {Table: "full", Make: named("b")}}, "b:full", ""},
		{"an empty table only when asked", []Maker{{Table: "empty", Make: named("skipped")}, {Table: "empty", Empty: true, Make: named("why")}}, "why:empty", ""},
		{"an error names its table", []Maker{{Table: "full", Make: named("a")}, {Table: "full", Make: failing}, {Table: "full", Make: named("c")}}, "", "figures of full: no axis"},
	} {
		figs, err := Draw(by, tc.makers)
		var names []string
		for _, f := range figs {
			names = append(names, f.Name)
		}
		if got := strings.Join(names, " "); got != tc.want {
			t.Errorf("%s: figures %q, want %q", tc.name, got, tc.want)
		}
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}
