package experiment

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// An option block is a study's option whose value is a mapping of options
// (a struct field, not a pointer, in the study's options): prompt: and
// scoring:. Several studies may declare the same block, each with the keys
// it reads (IndicKLAR's scoring: takes lenient_json, the distractor
// study's multilingual_abstain and unpaired_tests), so a file writes one
// scoring: block whatever its study. Each key of a block is an option of
// its own, named "block.key" in messages: a key set for another study is
// refused at its line naming the study it applies to, and a key no study
// declares is an unknown key, with the keys the block takes.

// yamlName is the YAML key of a struct field ("" for a field YAML skips).
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name
}

// structOf is t through its pointers when that is a struct type, nil
// otherwise.
func structOf(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// fieldType is the type of the field of struct type t (through pointers)
// whose YAML key is key; nil when there is none.
func fieldType(t reflect.Type, key string) reflect.Type {
	if t = structOf(t); t == nil {
		return nil
	}
	for f := range t.Fields() {
		if yamlName(f) == key {
			return f.Type
		}
	}
	return nil
}

// blockType is the struct type of option key in the options type opts
// when that option is a block; nil otherwise.
func blockType(opts reflect.Type, key string) reflect.Type {
	if t := fieldType(opts, key); t != nil && t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

// hasOption reports whether the options type opts declares the option at
// path: a top-level key, or "block.key" for a key of a block.
func hasOption(opts reflect.Type, path string) bool {
	top, sub, nested := strings.Cut(path, ".")
	if !nested {
		return slices.Contains(topKeys(opts), top)
	}
	return slices.Contains(topKeys(blockType(opts, top)), sub)
}

// blockKeys are the keys of block k over the registered studies' options,
// in registration order (nil when no study declares k as a block).
func (r *Registry) blockKeys(k string) []string {
	var out []string
	for _, n := range r.Names() {
		s, _ := r.Lookup(n)
		for _, sk := range topKeys(blockType(optionsType(s), k)) {
			if !slices.Contains(out, sk) {
				out = append(out, sk)
			}
		}
	}
	return out
}

// fileOption is an option a parsed file sets: its path (a top-level key,
// or "block.key") and whether its value is zero (a key of a block left at
// its default: false, 0, "", null or empty).
type fileOption struct {
	path string
	zero bool
}

// fileOptions lists the options a parsed file sets: each top-level key
// set to a value that is not empty, and, for a block some registered
// study declares (set to a mapping), each of its keys instead.
func (r *Registry) fileOptions(root *yaml.Node) []fileOption {
	m := topMapping(root)
	if m == nil {
		return nil
	}
	var out []fileOption
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		switch {
		case emptyNode(v):
		case v.Kind == yaml.MappingNode && r.blockKeys(k) != nil:
			for j := 0; j+1 < len(v.Content); j += 2 {
				out = append(out, fileOption{path: k + "." + v.Content[j].Value, zero: zeroNode(v.Content[j+1])})
			}
		default:
			out = append(out, fileOption{path: k})
		}
	}
	return out
}

// topMapping is the top-level mapping of a parsed file (nil when the
// experiment was built in Go, or the file is not a mapping).
func topMapping(root *yaml.Node) *yaml.Node {
	if root == nil {
		return nil
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

// zeroNode reports whether a YAML value is empty or a scalar that decodes
// to its type's zero (false, 0, ""): an option left at its default, as
// setKeys reads a Go value. The experiment.yaml copies of older runs write
// every key of prompt: and scoring: whatever the study, all of them zero
// but the study's own.
func zeroNode(n *yaml.Node) bool {
	if emptyNode(n) {
		return true
	}
	if n.Kind != yaml.ScalarNode {
		return false
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return false
	}
	return v == nil || reflect.ValueOf(v).IsZero()
}

// checkFileOptions refuses the options the file sets that study s does
// not read: a top-level key of another study's options; a key of a block
// that another study declares, set to a value that is not zero (both
// naming the studies they apply to); and a key of a block that no study
// declares, as unknown, with the keys the block takes (s's own when it
// declares the block, else every study's). What s declares is its own
// decoding's to check.
func (e *Experiment) checkFileOptions(s Study, root *yaml.Node, c *Checker, refuse func(string)) {
	own := e.Studies.studyKeys()
	for _, fo := range e.Studies.fileOptions(root) {
		top, sub, nested := strings.Cut(fo.path, ".")
		switch {
		case declares(s, fo.path):
		case !nested:
			if slices.Contains(own, top) {
				refuse(fo.path)
			}
		case e.usedBy(fo.path) != "":
			if !fo.zero {
				refuse(fo.path)
			}
		default:
			keys := topKeys(blockType(optionsType(s), top))
			if keys == nil {
				keys = e.Studies.blockKeys(top)
			}
			c.Add([]string{top, sub}, "%s", unknownKey(sub, top, keys))
		}
	}
}

// Effective is implemented by a block of a study's options whose unset
// (zero) fields stand for defaults the study applies: Effective returns
// the block with those defaults filled in, the values a run used.
type Effective interface {
	Effective() any
}

// OptionProvenance lists the blocks of the study's options (prompt
// options, scoring options …) as provenance entries: "<block> options"
// and the block as JSON, in the options' field order, with the values in
// force (Effective) where the block fills in defaults. A study without
// blocks has none.
func (e *Experiment) OptionProvenance() [][2]string {
	rv := reflect.ValueOf(e.Options)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	var out [][2]string
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		name := yamlName(f)
		if name == "" || f.Type.Kind() != reflect.Struct {
			continue
		}
		v := rv.Field(i).Interface()
		if d, ok := v.(Effective); ok {
			v = d.Effective()
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(err.Error())
		}
		out = append(out, [2]string{name + " options", string(b)})
	}
	return out
}
