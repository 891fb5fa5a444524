package experiment

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/internal/textdist"
)

// Problem is one thing wrong with an experiment: its message and, when the
// experiment was read from YAML, the line it is on (0 otherwise).
type Problem struct {
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// Problems is every problem found at once; as an error it lists them, one
// per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return fmt.Sprintf("%d problem(s):\n  %s", len(ps), strings.Join(lines, "\n  "))
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// fromYAML turns yaml.v3's type errors ("line N: ...") into problems.
func fromYAML(msgs []string) Problems {
	var out Problems
	for _, m := range msgs {
		if g := yamlLine.FindStringSubmatch(m); g != nil {
			n, _ := strconv.Atoi(g[1])
			out = append(out, Problem{Line: n, Msg: unknownField(g[2])})
			continue
		}
		out = append(out, Problem{Msg: m})
	}
	return out
}

// unknownField rewrites yaml.v3's "field X not found in type T" as the
// user's words: the unknown key and the nearest valid key of that mapping
// (other messages are returned as they are).
func unknownField(msg string) string {
	var field, typ string
	if _, err := fmt.Sscanf(msg, "field %s not found in type %s", &field, &typ); err != nil {
		return msg
	}
	keys := yamlKeys(typ)
	if len(keys) == 0 {
		return msg
	}
	where := "the experiment"
	if typ != reflect.TypeFor[Experiment]().String() {
		where = "this section"
	}
	near, d := textdist.Nearest(field, keys)
	if d >= 0 && d <= max(2, len(field)/3) {
		return fmt.Sprintf("unknown key %q: did you mean %q? (%s takes %s)", field, near, where, strings.Join(keys, ", "))
	}
	return fmt.Sprintf("unknown key %q (%s takes %s)", field, where, strings.Join(keys, ", "))
}

// yamlKeys lists the YAML keys of the struct type named typ (as
// reflect.Type.String writes it) among Experiment and the types it holds.
func yamlKeys(typ string) []string {
	seen := map[reflect.Type]bool{}
	var find func(t reflect.Type) []string
	find = func(t reflect.Type) []string {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return nil
		}
		seen[t] = true
		var keys []string
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			keys = append(keys, name)
		}
		if t.String() == typ {
			return keys
		}
		for f := range t.Fields() {
			if ks := find(f.Type); ks != nil {
				return ks
			}
		}
		return nil
	}
	return find(reflect.TypeFor[Experiment]())
}
