package indicquest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// Rows that would be read wrongly are errors naming file, line and field:
// a row shifted by an unquoted comma, a Latin-1 cell, a UTF-16 file.
func TestRowsThatWouldBeReadWrongly(t *testing.T) {
	cases := []struct {
		name, content  string
		line           int
		field, message string
	}{
		{"unquoted comma", "Question,Answer,Domain\nWho founded the party?,Gandhi,Politics\nWho was born, in 1920?,Raj Kapoor,Arts\n",
			3, "column 4", "4 fields but the header 3"},
		{"latin-1 cell", "Question,Answer,Domain\nCapital of France?,Paris,Geography\nWhere is the caf\xe9?,Paris,Food\n",
			3, "Question", "Latin-1"},
		{"latin-1 on a later line of a quoted cell", "Question,Answer,Domain\n\"Two\nlines?\",R\xe9sum\xe9,X\n",
			3, "Answer", "invalid UTF-8"},
		{"utf-16", "\xff\xfeQ\x00u\x00", 1, "", "UTF-16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "English.csv")
			os.WriteFile(f, []byte(c.content), 0o644)
			_, err := Load(context.Background(), dir, lang.New(), item.Options{})
			var p item.Problem
			if !errors.As(err, &p) || p.File != f || p.Line != c.line || p.Field != c.field || !strings.Contains(p.Msg, c.message) {
				t.Fatalf("%v (%+v)", err, p)
			}
			if c.name == "utf-16" {
				return
			}
			s, err := Load(context.Background(), dir, lang.New(), item.Options{SkipInvalid: true})
			if err != nil || len(s.Skipped) != 1 || s.Skipped[0].Line != c.line {
				t.Fatalf("skip_invalid: %v %+v", err, s)
			}
			for _, it := range s.Items {
				for _, v := range it.Variants {
					if strings.ContainsRune(v.Question+v.Answer, '\uFFFD') || strings.HasPrefix(v.Answer, " ") {
						t.Errorf("kept a wrongly read row: %+v", v)
					}
				}
			}
		})
	}
}
