package experiment

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// A study's own options are a struct of its own package (Optioner),
// decoded from the experiment file's top-level keys into
// Experiment.Options, or set in Go (Set). A key that only another
// registered study reads is a problem naming the studies it applies to; a
// key nobody reads is an unknown key, with the nearest known one. Blocks
// of options that several studies declare (prompt:, scoring:) are checked
// key by key (blocks.go).

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
		if o, ok := e.Options.(*T); ok {
			set(o)
			return
		}
		for _, x := range e.stray {
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

// topKeys lists the yaml keys of a struct type (through pointers), in
// field order.
func topKeys(t reflect.Type) []string {
	if t = structOf(t); t == nil {
		return nil
	}
	var keys []string
	for f := range t.Fields() {
		if name := yamlName(f); name != "" {
			keys = append(keys, name)
		}
	}
	return keys
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

// studyKeys lists the top-level keys the registered studies' options
// declare, in registration order, without the shared ones.
func (r *Registry) studyKeys() []string {
	shared := topKeys(reflect.TypeFor[Experiment]())
	var out []string
	for _, n := range r.Names() {
		s, _ := r.Lookup(n)
		for _, k := range topKeys(optionsType(s)) {
			if !slices.Contains(shared, k) && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// declares reports whether study s reads option k: one of its own
// options (a top-level key, or "block.key" for a key of one of its
// blocks), or a shared field it lists (FieldReader).
func declares(s Study, k string) bool {
	if hasOption(optionsType(s), k) {
		return true
	}
	f, ok := s.(FieldReader)
	return ok && slices.Contains(f.Fields(), k)
}

// usedBy names the registered studies that read key k.
func (e *Experiment) usedBy(k string) string {
	var names []string
	for _, n := range e.Studies.Names() {
		if s, _ := e.Studies.Lookup(n); declares(s, k) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (it applies to " + strings.Join(names, ", ") + ")"
}

// setKeys lists the yaml keys of the fields of a struct value (through a
// pointer) that are set (not unset), in field order, a block (a struct
// field) as "block.key" for each of its keys set; tag keeps the fields
// tagged study:"<tag>" only ("" keeps every field).
func setKeys(v any, tag string) []string {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		name := yamlName(f)
		if name == "" || (tag != "" && f.Tag.Get("study") != tag) || unset(rv.Field(i)) {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			if sub := setKeys(rv.Field(i).Interface(), ""); len(sub) > 0 {
				for _, k := range sub {
					out = append(out, name+"."+k)
				}
				continue
			}
		}
		out = append(out, name)
	}
	return out
}

// unset reports whether an option's value is zero or an empty list or
// mapping (an empty one is not set, as in YAML: emptyNode).
func unset(v reflect.Value) bool {
	if (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0 {
		return true
	}
	return v.IsZero()
}

// emptyNode reports whether a YAML value is empty (null, "", [] or {}):
// an empty option is not set (the experiment.yaml copies of older runs
// write every field, empty ones included).
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

// fileKeys are the top-level keys a parsed file sets to a value that is
// not empty (nil when the experiment was built in Go).
func fileKeys(root *yaml.Node) []string {
	n := topMapping(root)
	if n == nil {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !emptyNode(n.Content[i+1]) {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}

// impliedStudy names the study an experiment without study: implies: the
// first registered study (Implied) whose key the file sets, or whose
// options the Go value holds with that key set; "" when none.
func (e *Experiment) impliedStudy(root *yaml.Node) string {
	keys := fileKeys(root)
	for _, n := range e.Studies.Names() {
		s, _ := e.Studies.Lookup(n)
		im, ok := s.(Implied)
		if !ok {
			continue
		}
		k := im.ImpliedBy()
		if slices.Contains(keys, k) {
			return n
		}
		if t := optionsType(s); t != nil {
			for _, v := range append([]any{e.Options}, e.stray...) {
				if v != nil && reflect.TypeOf(v) == t && slices.Contains(setKeys(v, ""), k) {
					return n
				}
			}
		}
	}
	return ""
}

// impliedKeys are the keys that imply a study (Implied), in registration order.
func (r *Registry) impliedKeys() []string {
	var out []string
	for _, n := range r.Names() {
		s, _ := r.Lookup(n)
		if im, ok := s.(Implied); ok {
			out = append(out, im.ImpliedBy())
		}
	}
	return out
}

// studyRequired is the problem of an experiment that names no study:
// "one of study, requests or synthetic is required" with the built-in
// studies.
func (r *Registry) studyRequired() string {
	keys := append([]string{"study"}, r.impliedKeys()...)
	if len(keys) == 1 {
		return "study is required"
	}
	return "one of " + strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1] + " is required"
}

// placeOptions settles the experiment's options for study s: the value of
// s's type (made when absent) becomes e.Options, and every option set for
// another study (in the file, or kept aside by Set) and every shared field
// tagged study:"reads" that s does not read is a problem at its line.
func (e *Experiment) placeOptions(s Study, root *yaml.Node, c *Checker) {
	t := optionsType(s)
	if e.Options == nil && root != nil && t != nil { // read with yaml.v3 (UnmarshalYAML): decode them now
		v := s.(Optioner).Options()
		ps, err := decodeNode(root, v)
		if err != nil {
			c.Add(nil, "reading the options of study %s: %v", e.Study, err)
			return
		}
		c.errs = append(c.errs, ps...)
		e.Options = v
	}
	var mine any
	var others []any
	for _, v := range append([]any{e.Options}, e.stray...) {
		switch {
		case v == nil:
		case t != nil && reflect.TypeOf(v) == t && mine == nil:
			mine = v
		default:
			others = append(others, v)
		}
	}
	if mine == nil && t != nil {
		mine = s.(Optioner).Options()
	}
	e.Options, e.stray = mine, others // kept: Build refuses them as Validate did
	refuse := func(k string) {
		c.Add(strings.Split(k, "."), "%s does not apply to study %s%s", k, e.Study, e.usedBy(k))
	}
	var refused []string
	once := func(k string) {
		if !slices.Contains(refused, k) {
			refused = append(refused, k)
			refuse(k)
		}
	}
	for _, k := range setKeys(e, "reads") {
		if !declares(s, k) {
			once(k)
		}
	}
	e.checkFileOptions(s, root, c, once)
	for _, v := range others {
		for _, k := range setKeys(v, "") {
			if !declares(s, k) {
				once(k)
			} else {
				c.Add(strings.Split(k, "."), "%s: options of type %T set for study %s, which reads %T", k, v, e.Study, mine)
			}
		}
	}
}

// mergeOptions adds the top-level keys of the experiment's options to the
// mapping of its shared fields (for Portable), after them.
func mergeOptions(doc *yaml.Node, opts any) error {
	if opts == nil {
		return nil
	}
	var on yaml.Node
	if err := on.Encode(opts); err != nil {
		return fmt.Errorf("writing the study's options: %w", err)
	}
	m := topMapping(doc)
	if on.Kind != yaml.MappingNode || m == nil {
		return fmt.Errorf("writing the study's options: %T is not a mapping", opts)
	}
	m.Content = append(m.Content, on.Content...)
	return nil
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

// sharedFields is Experiment without its methods: what its YAML decodes
// into before the study's options (UnmarshalYAML and parse).
type sharedFields Experiment

// UnmarshalYAML decodes the shared fields and keeps the node: the study's
// own options are decoded from it when the experiment is validated, so
// that a program reading an experiment with yaml.v3 gets them too. Load
// and Parse decode them at once, and refuse unknown keys.
func (e *Experiment) UnmarshalYAML(n *yaml.Node) error {
	if err := n.Decode((*sharedFields)(e)); err != nil {
		return err
	}
	e.src = n
	return nil
}
