package experiment

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/internal/textdist"
	"gopkg.in/yaml.v3"
)

// Option sets something on an experiment built in Go (a field, or a
// study's option: Set).
type Option func(*Experiment)

// Optioner is implemented by a study with options of its own.
type Optioner interface {
	// Options returns a new pointer to the study's zero options struct
	// (yaml-tagged); its defaults are the study's to apply.
	Options() any
}

// FieldReader is implemented by a study that reads some of the shared
// fields that not every study reads (those tagged study:"reads" on
// Experiment: dataset, languages, human_labels); setting one that the
// study does not list is a problem.
type FieldReader interface {
	Fields() []string
}

// Implied is implemented by a study that an experiment without study:
// names by setting one of its options (requests: names the requests
// study): ImpliedBy is that option's YAML key.
type Implied interface {
	ImpliedBy() string
}

// Input is a file a study's options name, relative to the experiment
// file: Key is its YAML key, Path points at the option's value.
type Input struct {
	Key  string
	Path *string
}

// Inputs is implemented by options that name input files: with the disk,
// validation checks each exists (at its key's line); Portable makes them
// absolute and InputHashes hashes them.
type Inputs interface {
	Inputs() []Input
}

// Set returns an Option applying set to the experiment's options of type
// T, a study's options struct, made (zero) when the experiment has none.
// Options of a type other than the study's are kept aside, and Validate
// reports each key they set as not applying to the study.
func Set[T any](set func(*T)) Option {
	return func(e *Experiment) {
		for _, x := range append([]any{e.Options}, e.stray...) {
			if o, ok := x.(*T); ok {
				set(o)
				return
			}
		}
		o := new(T)
		set(o)
		if e.Options == nil {
			e.Options = o
		} else {
			e.stray = append(e.stray, o)
		}
	}
}

// OptionsOf is the experiment's options of type *T (a study's Check and
// Build read their own with it): a new zero value when the experiment
// holds none of that type.
func OptionsOf[T any](e *Experiment) *T {
	if o, ok := e.Options.(*T); ok && o != nil {
		return o
	}
	return new(T)
}

// fields yields the fields with a YAML key of struct type t (through
// pointers), each with its key; none for another type.
func fields(t reflect.Type) iter.Seq2[string, reflect.StructField] {
	return func(yield func(string, reflect.StructField) bool) {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			return
		}
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			name = cmp.Or(name, strings.ToLower(f.Name))
			if name != "-" && f.IsExported() && !yield(name, f) {
				return
			}
		}
	}
}

// topKeys lists the YAML keys of struct type t (through pointers).
func topKeys(t reflect.Type) []string {
	var keys []string
	for k := range fields(t) {
		keys = append(keys, k)
	}
	return keys
}

// fieldType is the type of t's field with YAML key key (nil: none).
func fieldType(t reflect.Type, key string) reflect.Type {
	for k, f := range fields(t) {
		if k == key {
			return f.Type
		}
	}
	return nil
}

// blockType is the struct type of option key of opts (nil: not a block).
func blockType(opts reflect.Type, key string) reflect.Type {
	if t := fieldType(opts, key); t != nil && t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

// optionsType is the type a study's options decode into (nil without).
func optionsType(s Study) reflect.Type {
	if o, ok := s.(Optioner); ok {
		if v := o.Options(); v != nil {
			return reflect.TypeOf(v)
		}
	}
	return nil
}

// optionKeys lists once each the keys that keys gives for the registered
// studies' options types.
func (r *Registry) optionKeys(keys func(reflect.Type) []string) []string {
	var out []string
	for _, s := range r.all() {
		for _, k := range keys(optionsType(s)) {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// declares reports whether study s reads option k (a top-level key or
// "block.key"), or lists it as a shared field it reads.
func declares(s Study, k string) bool {
	t, key := optionsType(s), k
	if top, sub, nested := strings.Cut(k, "."); nested {
		t, key = blockType(t, top), sub
	}
	if slices.Contains(topKeys(t), key) {
		return true
	}
	f, ok := s.(FieldReader)
	return ok && slices.Contains(f.Fields(), k)
}

// usedBy names the registered studies that read option k.
func (e *Experiment) usedBy(k string) string {
	var names []string
	for _, s := range e.Studies.all() {
		if declares(s, k) {
			names = append(names, s.Name())
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (it applies to " + strings.Join(names, ", ") + ")"
}

// emptyNode reports whether a YAML value is null, "", [] or {}.
func emptyNode(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Tag == "!!null" || (n.Tag == "!!str" && n.Value == "")
	case yaml.SequenceNode, yaml.MappingNode:
		return len(n.Content) == 0
	case yaml.AliasNode:
		return n.Alias == nil || emptyNode(n.Alias)
	}
	return false
}

// zeroNode reports whether a YAML value is empty or a scalar that decodes
// to its type's zero.
func zeroNode(n *yaml.Node) bool {
	var v any
	return emptyNode(n) || (n.Kind == yaml.ScalarNode && n.Decode(&v) == nil && (v == nil || reflect.ValueOf(v).IsZero()))
}

// topMapping is the top-level mapping of a parsed file (nil: none).
func topMapping(root *yaml.Node) *yaml.Node {
	n := root
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

// nodeOf is a Go value encoded as a YAML mapping (nil when it is not one).
func nodeOf(v any) *yaml.Node {
	var n yaml.Node
	if n.Encode(v) != nil {
		return nil
	}
	return topMapping(&n)
}

// sets reports whether mapping m sets key k to a value that is not unset.
func sets(m *yaml.Node, k string, unset func(*yaml.Node) bool) bool {
	for i := 0; m != nil && i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k && !unset(m.Content[i+1]) {
			return true
		}
	}
	return false
}

// impliedStudy names the first registered study (Implied) whose key the
// file or the Go options set; "" when none.
func (e *Experiment) impliedStudy(root *yaml.Node) string {
	for _, s := range e.Studies.all() {
		im, ok := s.(Implied)
		if !ok {
			continue
		}
		if sets(topMapping(root), im.ImpliedBy(), emptyNode) {
			return s.Name()
		}
		for _, v := range append([]any{e.Options}, e.stray...) {
			if v != nil && reflect.TypeOf(v) == optionsType(s) && sets(nodeOf(v), im.ImpliedBy(), zeroNode) {
				return s.Name()
			}
		}
	}
	return ""
}

// studyRequired is the problem of an experiment that names no study.
func (r *Registry) studyRequired() string {
	keys := []string{"study"}
	for _, s := range r.all() {
		if im, ok := s.(Implied); ok {
			keys = append(keys, im.ImpliedBy())
		}
	}
	if len(keys) == 1 {
		return "study is required"
	}
	return "one of " + strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1] + " is required"
}

// placeOptions makes the options of s's type (decoded from root when
// absent) e.Options, keeps the others aside, and checks the keys set by
// the shared fields, the file and the options kept aside.
func (e *Experiment) placeOptions(s Study, root *yaml.Node, c *Checker) {
	t := optionsType(s)
	if e.Options == nil && root != nil && t != nil {
		v := s.(Optioner).Options()
		ps, err := decodeNode(root, v)
		if err != nil {
			c.Add(nil, "reading the options of study %s: %v", e.Study, err)
			return
		}
		c.errs = append(c.errs, ps...)
		e.Options = v
	}
	others := slices.DeleteFunc(append([]any{e.Options}, e.stray...), func(v any) bool { return v == nil })
	var mine any
	if i := slices.IndexFunc(others, func(v any) bool { return t != nil && reflect.TypeOf(v) == t }); i >= 0 {
		mine = others[i]
		others = slices.Delete(others, i, i+1)
	} else if t != nil {
		mine = s.(Optioner).Options()
	}
	e.Options, e.stray = mine, others // kept: Build refuses them as Validate did
	var refused []string
	refuse := func(k string) {
		if !slices.Contains(refused, k) {
			refused = append(refused, k)
			c.Add(strings.Split(k, "."), "%s does not apply to study %s%s", k, e.Study, e.usedBy(k))
		}
	}
	e.checkKeys(s, nodeOf(e), e, c, refuse)
	e.checkKeys(s, topMapping(root), nil, c, refuse)
	for _, v := range others {
		e.checkKeys(s, nodeOf(v), v, c, refuse)
	}
}

// checkKeys checks the keys mapping m sets against study s (nil: none
// found), refuse reporting another study's. m is the file's top level
// (from nil: unknown keys are problems, an empty value is unset) or the
// encoding of from (the experiment: the shared fields it reads; options
// Set kept aside: s's own keys in them are problems; a zero is unset).
func (e *Experiment) checkKeys(s Study, m *yaml.Node, from any, c *Checker, refuse func(string)) {
	if m == nil {
		return
	}
	shared, own, file, unset := reflect.TypeFor[Experiment](), optionsType(s), from == nil, zeroNode
	known := append(topKeys(shared), e.Studies.optionKeys(topKeys)...)
	var reads []string
	for k, f := range fields(shared) {
		if f.Tag.Get("study") == "reads" {
			reads = append(reads, k)
		}
	}
	if file {
		unset = emptyNode
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		block := topKeys(blockType(reflect.TypeOf(from), k.Value)) // nil: not a block
		if file {
			block = e.Studies.optionKeys(func(t reflect.Type) []string { return topKeys(blockType(t, k.Value)) })
			if own := topKeys(blockType(own, k.Value)); own != nil {
				block = own
			}
		}
		paths := []string{k.Value}
		switch {
		case file && fieldType(shared, k.Value) != nil:
			c.errs = append(c.errs, nestedKeys(v, fieldType(shared, k.Value))...)
			continue
		case file && !slices.Contains(known, k.Value):
			c.errs = append(c.errs, Problem{Line: k.Line, Msg: unknownKey(k.Value, "the experiment", known)})
			continue
		case s == nil || unset(v) || (from == any(e) && !slices.Contains(reads, k.Value)):
			continue
		case v.Kind == yaml.MappingNode && block != nil:
			paths = nil
			for j := 0; j+1 < len(v.Content); j += 2 {
				sub, path := v.Content[j], k.Value+"."+v.Content[j].Value
				switch {
				case file && declares(s, path):
				case file && e.usedBy(path) == "":
					c.errs = append(c.errs, Problem{Line: sub.Line, Msg: unknownKey(sub.Value, k.Value, block)})
				case !zeroNode(v.Content[j+1]):
					paths = append(paths, path)
				}
			}
		}
		for _, p := range paths {
			switch {
			case !declares(s, p):
				refuse(p)
			case file && fieldType(own, k.Value) != nil:
				c.errs = append(c.errs, nestedKeys(v, fieldType(own, k.Value))...)
			case file:
			case from != any(e):
				c.Add(strings.Split(p, "."), "%s: options of type %T set for study %s, which reads %T", p, from, e.Study, e.Options)
			}
		}
	}
}

// cloneOptions is a shallow copy of a pointer to an options struct (v
// itself when it is not one).
func cloneOptions(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return v
	}
	c := reflect.New(rv.Elem().Type())
	c.Elem().Set(rv.Elem())
	return c.Interface()
}

// inputs are the files the experiment's options name.
func (e *Experiment) inputs() []Input {
	if in, ok := e.Options.(Inputs); ok {
		return in.Inputs()
	}
	return nil
}

// sharedFields is Experiment without its methods (its YAML decoding).
type sharedFields Experiment

// UnmarshalYAML decodes the shared fields and keeps the node: the study's
// own options are decoded from it, and its unknown keys reported, when
// the experiment is validated (Validate, Build, and Load and Parse, which
// validate).
func (e *Experiment) UnmarshalYAML(n *yaml.Node) error {
	if err := n.Decode((*sharedFields)(e)); err != nil {
		return err
	}
	e.src = n
	return nil
}

// Effective is implemented by a block of a study's options whose unset
// (zero) fields stand for defaults the study applies: Effective returns
// the block with those defaults filled in, the values a run used.
type Effective interface {
	Effective() any
}

// OptionProvenance lists the blocks of the study's options as provenance
// entries: "<block> options" and the block as JSON (as Effective returns
// it where the block fills in defaults), in field order. A study without
// blocks has none.
func (e *Experiment) OptionProvenance() [][2]string {
	rv := reflect.Indirect(reflect.ValueOf(e.Options))
	if rv.Kind() != reflect.Struct {
		return nil
	}
	var out [][2]string
	for k, f := range fields(rv.Type()) {
		if f.Type.Kind() != reflect.Struct {
			continue
		}
		v := rv.FieldByIndex(f.Index).Interface()
		if d, ok := v.(Effective); ok {
			v = d.Effective()
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(err.Error())
		}
		out = append(out, [2]string{k + " options", string(b)})
	}
	return out
}

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

// decodeNode decodes n into v, yaml.v3's type errors becoming problems at
// their lines (unknown keys are checkFile's); other errors are returned.
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
	num, msg, ok := strings.Cut(strings.TrimPrefix(m, "line "), ": ")
	n, err := strconv.ParseUint(num, 10, 0)
	if !strings.HasPrefix(m, "line ") || !ok || err != nil || strings.Contains(msg, "\n") {
		return 0, m
	}
	return int(n), msg
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
