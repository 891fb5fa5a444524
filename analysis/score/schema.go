package score

import (
	"fmt"

	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/internal/memo"
)

// FieldType is the type of an answer field's values.
type FieldType uint8

// Field types.
const (
	// FlagField holds a bool: a criterion's verdict or a flag.
	FlagField FieldType = iota
	// TextField holds a string.
	TextField
	// IntField holds an int.
	IntField
)

// Field is one column of an answer: its name (the same in answers.csv,
// the workbook's samples sheet and the HTML explorer), its type, what it
// holds, and how it is read from a scored Row. Build one with Flag,
// Text, Repeated, FreeText or Int.
type Field struct {
	Name        string
	Type        FieldType
	Description string
	// Category: a text field whose values name a category (a model, a
	// language, a verdict): readers filter by it, and a table interns its
	// values. Free text (a gold, a prediction) is not a category.
	Category bool
	// Repeats: the values repeat across answers (a category's, a gold's),
	// so that a table interns them.
	Repeats bool

	flag func(*Row) bool
	// mark is 1 + the Row.Marks bit a Mark field reads, 0 for another.
	mark int
	text func(*Row) string
	num  func(*Row) int
}

// Flag declares a bool field read by of (a criterion: correct, translit).
func Flag(name, description string, of func(*Row) bool) Field {
	return Field{Name: name, Type: FlagField, Description: description, flag: of}
}

// Mark declares a bool field read from the study's mark i (Row.Marks);
// i outside [0, MaxMarks) panics, and so does NewSchema given two fields
// of one mark.
func Mark(name, description string, i int) Field {
	bit(i) // panics outside [0, MaxMarks)
	f := Flag(name, description, func(r *Row) bool { return r.Marks.Has(i) })
	f.mark = i + 1
	return f
}

// Text declares a text field whose values name a category (a verdict, a
// domain), read by of.
func Text(name, description string, of func(*Row) string) Field {
	return Field{Name: name, Type: TextField, Description: description, Category: true, Repeats: true, text: of}
}

// Repeated declares a text field that is not a category but whose values
// repeat across answers (a gold, asked in every form and strategy), read
// by of.
func Repeated(name, description string, of func(*Row) string) Field {
	return Field{Name: name, Type: TextField, Description: description, Repeats: true, text: of}
}

// FreeText declares a text field whose values seldom repeat (a gold, a
// prediction), read by of.
func FreeText(name, description string, of func(*Row) string) Field {
	return Field{Name: name, Type: TextField, Description: description, text: of}
}

// Int declares an int field read by of (a chosen option's index).
func Int(name, description string, of func(*Row) int) Field {
	return Field{Name: name, Type: IntField, Description: description, num: of}
}

// Flag reads a FlagField of r (false for another type).
func (f Field) Flag(r *Row) bool { return f.flag != nil && f.flag(r) }

// Text reads a TextField of r ("" for another type).
func (f Field) Text(r *Row) string {
	if f.text == nil {
		return ""
	}
	return f.text(r)
}

// Int reads an IntField of r (0 for another type).
func (f Field) Int(r *Row) int {
	if f.num == nil {
		return 0
	}
	return f.num(r)
}

// MaxFlags bounds a schema's flag fields (Values keeps them in one word).
const MaxFlags = 64

// Schema is a study's answer schema, declared once: the fields every
// answer has (Head, then the study's own, then Tail) and how each is
// read from a Row. answers.csv, the workbook's samples sheet, the HTML
// explorer's fields and filters, the column descriptions and bhasha's
// Sample are generated from it. A Schema is immutable once built
// (NewSchema); share it by pointer.
type Schema struct {
	study []Field
	all   []Field
	index map[string]int // field name → position in all
	// at places each study field in Values: its bit among the flags, or
	// its position among the texts or the ints.
	at          []int
	texts, ints int
	head        int // len(Head())
}

// NewSchema declares a study's answer schema: its own fields (criteria
// and verdicts: what its Score fills in a Row beside the common ones) in
// the order the tables show them, between Head and Tail. A name used
// twice (or one of the common fields' names) or more than MaxFlags flags
// is a programming error and panics, as are two Mark fields of one bit.
func NewSchema(study ...Field) *Schema {
	s := &Schema{study: study, index: map[string]int{}}
	head := Head()
	s.head = len(head)
	s.all = append(append(append(s.all, head...), study...), Tail()...)
	for i, f := range s.all {
		if _, dup := s.index[f.Name]; dup || f.Name == "" {
			panic(fmt.Sprintf("score: answer schema: field %q declared twice (or unnamed)", f.Name))
		}
		s.index[f.Name] = i
	}
	n := map[FieldType]int{}
	var marks Marks
	for _, f := range study {
		if f.mark > 0 {
			if marks.Has(f.mark - 1) {
				panic(fmt.Sprintf("score: answer schema: field %q reads mark %d, declared before", f.Name, f.mark-1))
			}
			marks.Set(f.mark-1, true)
		}
		s.at = append(s.at, n[f.Type])
		n[f.Type]++
	}
	if n[FlagField] > MaxFlags {
		panic(fmt.Sprintf("score: answer schema: %d flag fields, at most %d", n[FlagField], MaxFlags))
	}
	s.texts, s.ints = n[TextField], n[IntField]
	return s
}

// Fields are every field of an answer in table order: Head, the study's
// own, Tail. The caller must not change the slice.
func (s *Schema) Fields() []Field { return s.all }

// Study are the study's own fields, in order (nil for a study without a
// criterion). The caller must not change the slice.
func (s *Schema) Study() []Field { return s.study }

// Criteria names the study's flag fields, in order.
func (s *Schema) Criteria() []string {
	var out []string
	for _, f := range s.study {
		if f.Type == FlagField {
			out = append(out, f.Name)
		}
	}
	return out
}

// Field finds a field (common or the study's) by name.
func (s *Schema) Field(name string) (Field, bool) {
	i, ok := s.index[name]
	if !ok {
		return Field{}, false
	}
	return s.all[i], true
}

// Values are one answer's study fields, compactly: the flags as bits of
// one word, the texts and ints in the schema's order (no map per
// answer). Read them with Schema.FlagOf, TextOf, Lookup or ValueOf.
type Values struct {
	flags uint64
	texts []string
	ints  []int
}

// Values reads r's study fields.
func (s *Schema) Values(r *Row) Values {
	var v Values
	if s.texts > 0 {
		v.texts = make([]string, s.texts)
	}
	if s.ints > 0 {
		v.ints = make([]int, s.ints)
	}
	for i, f := range s.study {
		switch f.Type {
		case FlagField:
			if f.Flag(r) {
				v.flags |= 1 << s.at[i]
			}
		case TextField:
			v.texts[s.at[i]] = f.Text(r)
		case IntField:
			v.ints[s.at[i]] = f.Int(r)
		}
	}
	return v
}

// FlagOf reads the study flag name from v; ok is false when the schema
// has no such flag.
func (s *Schema) FlagOf(v Values, name string) (value, ok bool) {
	x, _ := s.Lookup(v, name)
	value, ok = x.(bool)
	return value, ok
}

// TextOf reads the study text field name from v; ok is false when the
// schema has no such text field.
func (s *Schema) TextOf(v Values, name string) (string, bool) {
	x, _ := s.Lookup(v, name)
	text, ok := x.(string)
	return text, ok
}

// Lookup reads the study field name from v as a bool, string or int; ok
// is false when the schema has no such study field.
func (s *Schema) Lookup(v Values, name string) (any, bool) {
	i, ok := s.index[name]
	if i -= s.head; !ok || i < 0 || i >= len(s.study) {
		return nil, false
	}
	x := s.ValueOf(v, i)
	return x, x != nil
}

// ValueOf reads the i-th study field (Study()[i]) from v as a bool,
// string or int; nil for Values not read by this schema.
func (s *Schema) ValueOf(v Values, i int) any {
	switch a, t := s.at[i], s.study[i].Type; {
	case t == FlagField:
		return v.flags&(1<<a) != 0
	case t == TextField && a < len(v.texts):
		return v.texts[a]
	case t == IntField && a < len(v.ints):
		return v.ints[a]
	}
	return nil
}

// Head are the fields every answer starts with: what was asked (the key)
// and what came back, read the same way in every study. The normalised
// prediction is remembered per prediction text (at most normMemo of
// them), for the fields' life: a run's answers repeat, and every writer
// of the answers (their CSV, the workbook's samples) reads it again.
func Head() []Field {
	norm := memo.New[string, string](normMemo)
	return []Field{
		Text("model", "the model asked", func(r *Row) string { return r.Key.Model }),
		Repeated("item", "the item's id in its dataset", func(r *Row) string { return r.Key.Item }),
		Text("language", "ISO 639-3 code of the language asked", func(r *Row) string { return r.Key.Language }),
		Text("form", "question form: native, code-mixed or english", func(r *Row) string { return r.Key.Form }),
		Text("strategy", "the study's prompting strategy or answer format, or empty", func(r *Row) string { return r.Key.Strategy }),
		Text("condition", "the study's condition, or empty", func(r *Row) string { return r.Key.Condition }),
		Text("role", "what the request asked: empty (the answer), translation, judge:<model>, choice:<n>", func(r *Row) string { return r.Key.Role.String() }),
		Repeated("gold", "the gold answer", func(r *Row) string { return r.Gold }),
		FreeText("prediction", "the answer as extracted (the text scored when extraction failed)", func(r *Row) string { return r.Prediction }),
		FreeText("prediction_norm", "the prediction normalised (normalize.Default; scoring lists the steps)", func(r *Row) string { return norm.Get(r.Prediction, normalize.Default.String) }),
		Text("method", "how the answer was extracted", func(r *Row) string { return string(r.Method) }),
	}
}

// normMemo bounds the normalised predictions Head's fields remember.
const normMemo = 1 << 16

// Tail are the fields every answer ends with: abstention, script and
// switch, and whether the answer is missing.
func Tail() []Field {
	return []Field{
		Flag("abstain", "the answer abstains under the study's abstention rule", func(r *Row) bool { return r.Abstain }),
		Text("script", "main script of the answer", func(r *Row) string { return r.Script }),
		Flag("switched", "letters outside the scripts of the language asked", func(r *Row) bool { return r.Switched }),
		Flag("failed", "the request failed, or was withheld: counted as a wrong answer", func(r *Row) bool { return r.Failed }),
		Flag("withheld", "a second stage never sent because its first stage failed (counted as a failed, wrong answer)", func(r *Row) bool { return r.Withheld }),
		Flag("empty_response", "the model produced an empty text", func(r *Row) bool { return r.EmptyResponse }),
	}
}

// CorrectField is the study's strict criterion (Row.Correct), described
// by rule.
func CorrectField(rule string) Field {
	return Flag("correct", "the study's strict criterion: "+rule, func(r *Row) bool { return r.Correct })
}

// DefaultSchema is the schema of a study that declares none: its strict
// criterion (correct) beside the common fields.
func DefaultSchema() *Schema {
	return NewSchema(CorrectField("as the study scores it"))
}
