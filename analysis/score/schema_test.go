package score

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/runtime/engine"
)

func testSchema() *Schema {
	return NewSchema(
		Text("relation", "a category", func(r *Row) string { return r.Domain }),
		CorrectField("a rule"),
		Mark("translit", "beside", 0),
		Text("judge", "a verdict", func(r *Row) string { return r.Verdict }),
		Int("chosen", "an option", func(r *Row) int { return r.PromptTokens }),
	)
}

// A schema's fields are the common head, the study's own, the common
// tail; each study field reads back from the compact Values by name and
// by position, and a name the schema lacks is not ok.
func TestSchemaValues(t *testing.T) {
	s := testSchema()
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	want := []string{"model", "item", "language", "form", "strategy", "condition", "role", "gold", "prediction", "prediction_norm", "method",
		"relation", "correct", "translit", "judge", "chosen", "abstain", "script", "switched", "failed", "withheld", "empty_response"}
	if !slices.Equal(names, want) {
		t.Errorf("fields %q\nwant %q", names, want)
	}
	if got := s.Criteria(); !slices.Equal(got, []string{"correct", "translit"}) {
		t.Errorf("criteria %q", got)
	}
	row := Row{Key: engine.Key{Model: "m"}, Domain: "capital", Correct: true, Verdict: "correct", PromptTokens: 3, Prediction: " Delhi "}
	v := s.Values(&row)
	for _, tc := range []struct {
		name string
		read func() (any, bool)
		want any
		ok   bool
	}{
		{"correct", func() (any, bool) { return s.FlagOf(v, "correct") }, true, true},
		{"translit", func() (any, bool) { return s.FlagOf(v, "translit") }, false, true},
		{"judge", func() (any, bool) { return s.TextOf(v, "judge") }, "correct", true},
		{"relation", func() (any, bool) { return s.TextOf(v, "relation") }, "capital", true},
		{"chosen", func() (any, bool) { return s.Lookup(v, "chosen") }, 3, true},
		{"a common field is not the study's", func() (any, bool) { return s.FlagOf(v, "failed") }, false, false},
		{"a text is not a flag", func() (any, bool) { return s.FlagOf(v, "judge") }, false, false},
		{"unknown", func() (any, bool) { return s.TextOf(v, "nothing") }, "", false},
	} {
		got, ok := tc.read()
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %v (%v), want %v (%v)", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	for i, f := range s.Study() {
		if got := s.ValueOf(v, i); got != f.Value(&row) {
			t.Errorf("study field %s: Values hold %v, the row %v", f.Name, got, f.Value(&row))
		}
		if got, ok := s.Lookup(v, f.Name); !ok || got != f.Value(&row) {
			t.Errorf("study field %s: Lookup %v (%v), the row %v", f.Name, got, ok, f.Value(&row))
		}
	}
	if _, ok := s.Lookup(v, "model"); ok {
		t.Error("Lookup reads a common field")
	}
	if f, ok := s.Field("prediction_norm"); !ok || f.Text(&row) != "delhi" {
		t.Errorf("prediction_norm %q (%v)", f.Text(&row), ok)
	}
}

// A name declared twice, a common name taken by a study, an unnamed field
// too many flags and two fields of one mark are programming errors.
func TestSchemaPanics(t *testing.T) {
	var many []Field
	for i := range MaxFlags + 1 {
		many = append(many, Flag(fmt.Sprintf("f%d", i), "", func(*Row) bool { return false }))
	}
	for _, tc := range []struct {
		name   string
		fields []Field
	}{
		{"twice", []Field{CorrectField(""), CorrectField("")}},
		{"a common name", []Field{Flag("failed", "", func(*Row) bool { return false })}},
		{"unnamed", []Field{Text("", "", func(*Row) string { return "" })}},
		{"too many flags", many},
		{"one mark twice", []Field{Mark("a", "", 3), Mark("b", "", 3)}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			NewSchema(tc.fields...)
		}()
	}
	if s := NewSchema(many[:MaxFlags]...); len(s.Criteria()) != MaxFlags {
		t.Errorf("%d flags", len(s.Criteria()))
	}
	if s := NewSchema(Mark("a", "", 0), Mark("b", "", MaxMarks-1)); len(s.Criteria()) != 2 {
		t.Errorf("two marks: %q", s.Criteria())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a mark outside [0, MaxMarks): no panic")
			}
		}()
		Mark("c", "", MaxMarks)
	}()
}

// Head's normalised prediction is normalize.Default's, whether the
// prediction was seen before (remembered), is new, or comes after the
// memo is full; two Heads remember apart.
func TestPredictionNorm(t *testing.T) {
	field := func(h []Field) Field {
		for _, f := range h {
			if f.Name == "prediction_norm" {
				return f
			}
		}
		t.Fatal("no prediction_norm in Head")
		return Field{}
	}
	a, b := field(Head()), field(Head())
	texts := []string{"", "  Paris!! ", "नई दिल्ली।", "क़िला", "১২৩ ঢাকা", "PARIS", "Pa\u200dris", "  Paris!! "}
	for i := range normMemo + 100 { // past the memo's bound
		texts = append(texts, fmt.Sprintf("Ans %d!", i))
	}
	texts = append(texts, "नई दिल्ली।", "PARIS", "Ans 7!")
	for _, f := range []Field{a, b, a} {
		for _, s := range texts {
			if got, want := f.Text(&Row{Prediction: s}), normalize.Default.String(s); got != want {
				t.Fatalf("prediction_norm(%q) = %q, want %q", s, got, want)
			}
		}
	}
}

// Value reads the field of r as a bool, string or int, by its type.
func (f Field) Value(r *Row) any {
	switch f.Type {
	case FlagField:
		return f.Flag(r)
	case IntField:
		return f.Int(r)
	}
	return f.Text(r)
}
