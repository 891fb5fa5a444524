package experiment

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha/internal/textdist"
)

// Problem is one thing wrong with an experiment: its message and, when the
// experiment was read from YAML, the line it is on (0 otherwise).
type Problem struct {
	Line int
	Msg  string
	// Err, when set, says what kind of problem it is, for errors.Is on
	// the Problems holding it (ErrUnknownStudy).
	Err error
}

// ErrUnknownStudy is the kind of the problem an experiment naming a study
// its registry does not hold has (errors.Is on the Problems that Load,
// Parse and Validate return). Load and Parse list it first: it is the
// cause of others (the study's own options read as unknown keys).
var ErrUnknownStudy = errors.New("unknown study")

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

// Unwrap is the kinds of the problems that have one (Problem.Err).
func (ps Problems) Unwrap() []error {
	var out []error
	for _, p := range ps {
		if p.Err != nil {
			out = append(out, p.Err)
		}
	}
	return out
}

// causesFirst moves the problems that cause others (ErrUnknownStudy) to
// the front, keeping the order within each group.
func causesFirst(ps Problems) {
	rank := func(p Problem) int {
		if errors.Is(p.Err, ErrUnknownStudy) {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(ps, func(a, b Problem) int { return rank(a) - rank(b) })
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// decodeNode decodes n into v without refusing unknown keys (checkFile
// does), yaml.v3's type errors becoming problems at their lines; any
// other error is returned.
func decodeNode(n *yaml.Node, v any) (Problems, error) {
	err := n.Decode(v)
	var te *yaml.TypeError
	if err == nil || !errors.As(err, &te) {
		return nil, err
	}
	var out Problems
	for _, m := range te.Errors {
		line, msg := lineMsg(m)
		out = append(out, Problem{Line: line, Msg: msg})
	}
	return out, nil
}

// lineMsg splits yaml.v3's "line N: msg" into N and msg (0 and m itself
// for another message).
func lineMsg(m string) (int, string) {
	if g := yamlLine.FindStringSubmatch(m); g != nil {
		n, _ := strconv.Atoi(g[1])
		return n, g[2]
	}
	return 0, m
}

// nestedKeys reports the keys of the mappings in n that type t (through
// pointers, lists and maps) does not declare, each at its line with the
// keys of its mapping. A type that decodes itself (yaml.Unmarshaler) is
// not looked into.
func nestedKeys(n *yaml.Node, t reflect.Type) Problems {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return nil
	}
	var out Problems
	switch k := t.Kind(); {
	case k == reflect.Pointer:
		return nestedKeys(n, t.Elem())
	case n.Kind == yaml.SequenceNode && (k == reflect.Slice || k == reflect.Array):
		for _, v := range n.Content {
			out = append(out, nestedKeys(v, t.Elem())...)
		}
	case n.Kind == yaml.MappingNode && (k == reflect.Map || k == reflect.Struct):
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, ft := n.Content[i], fieldType(t, n.Content[i].Value)
			if k == reflect.Map {
				ft = t.Elem()
			}
			if ft == nil {
				out = append(out, Problem{Line: key.Line, Msg: unknownKey(key.Value, "this section", topKeys(t))})
			} else {
				out = append(out, nestedKeys(n.Content[i+1], ft)...)
			}
		}
	}
	return out
}

// unknownKey says that field is not a key of where (a mapping, which
// takes keys), with the nearest key when one is near.
func unknownKey(field, where string, keys []string) string {
	near, d := textdist.Nearest(field, keys)
	if d >= 0 && d <= max(2, len(field)/3) {
		return fmt.Sprintf("unknown key %q: did you mean %q? (%s takes %s)", field, near, where, strings.Join(keys, ", "))
	}
	return fmt.Sprintf("unknown key %q (%s takes %s)", field, where, strings.Join(keys, ", "))
}
