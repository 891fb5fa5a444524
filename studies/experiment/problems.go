package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
	slices.SortStableFunc(ps, func(a, b Problem) int {
		ca, cb := errors.Is(a.Err, ErrUnknownStudy), errors.Is(b.Err, ErrUnknownStudy)
		switch {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return 0
	})
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// schema is what the keys of an experiment file are checked against: the
// shared fields (Experiment) and every registered study's options.
type schema struct {
	roots   []reflect.Type // Experiment, then the studies' options types
	options []reflect.Type // the studies' options types
	keys    []string       // the top-level keys: Experiment's, then the studies' own
}

func newSchema(r *Registry) schema {
	opts := r.optionRoots()
	return schema{roots: append([]reflect.Type{reflect.TypeFor[Experiment](), reflect.TypeFor[sharedFields]()}, opts...),
		options: opts, keys: append(topKeys(reflect.TypeFor[Experiment]()), r.studyKeys()...)}
}

// top reports whether typ (as reflect.Type.String writes it) is the
// top-level mapping: Experiment or a study's options.
func (sch schema) top(typ string) bool {
	for _, t := range sch.roots {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.String() == typ {
			return true
		}
	}
	return false
}

// decodeStrict decodes the experiment file into v (Experiment, or a
// study's options) with unknown keys refused, and returns the problems:
// type errors at their lines, and unknown keys with the nearest known one.
// A top-level key that the shared fields or some registered study know is
// not unknown; options (a study's options struct) leave every top-level
// key to the Experiment's decoding, which reports them once.
func decodeStrict(b []byte, v any, sch schema, options bool) (Problems, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return nil, nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return nil, err
	}
	return fromYAML(te.Errors, sch, options), nil
}

// fromYAML turns yaml.v3's type errors ("line N: ...") into problems,
// leaving out the top-level keys sch knows (all top-level keys, for a
// study's options).
func fromYAML(msgs []string, sch schema, options bool) Problems {
	var out Problems
	for _, m := range msgs {
		if g := yamlLine.FindStringSubmatch(m); g != nil {
			n, _ := strconv.Atoi(g[1])
			msg, keep := unknownField(g[2], sch, options)
			if keep {
				out = append(out, Problem{Line: n, Msg: msg})
			}
			continue
		}
		out = append(out, Problem{Msg: m})
	}
	return out
}

// unknownField rewrites yaml.v3's "field X not found in type T" as the
// user's words: the unknown key and the nearest valid key of that mapping
// (other messages are returned as they are). keep is false for a
// top-level key that is not unknown (see fromYAML), and for a key in a
// block of options, which checkFileOptions checks against every study.
func unknownField(msg string, sch schema, options bool) (_ string, keep bool) {
	var field, typ string
	if _, err := fmt.Sscanf(msg, "field %s not found in type %s", &field, &typ); err != nil {
		return msg, true
	}
	where, keys := "this section", []string(nil)
	switch {
	case sch.top(typ):
		if options || slices.Contains(sch.keys, field) {
			return "", false
		}
		where, keys = "the experiment", sch.keys
	case sch.isBlockType(typ): // checked against every study's block (checkFileOptions)
		return "", false
	default:
		keys = yamlKeys(typ, sch.roots)
	}
	if len(keys) == 0 {
		return msg, true
	}
	return unknownKey(field, where, keys), true
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

// yamlKeys lists the YAML keys of the struct type named typ (as
// reflect.Type.String writes it) among the roots and the types they hold.
func yamlKeys(typ string, roots []reflect.Type) []string {
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
		if t.String() == typ {
			return topKeys(t)
		}
		for f := range t.Fields() {
			if ks := find(f.Type); ks != nil {
				return ks
			}
		}
		return nil
	}
	for _, r := range roots {
		if ks := find(r); ks != nil {
			return ks
		}
	}
	return nil
}
