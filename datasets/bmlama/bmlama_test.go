package bmlama

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
)

func TestLoadReal(t *testing.T) {
	s, err := Load(context.Background(), "../../testdata/bmlama/BMLAMA53", lang.New(), item.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Check()
	if r.Items != 40 || len(r.PerLF) != 5 || r.PerLF["hin/native"] != 40 || r.PerLF["eng/english"] != 40 || len(r.Missing) != 0 {
		t.Fatalf("report %v", r)
	}
	hi, _ := s.Items[0].Variant("hin", item.Native)
	if hi.Question != "माइकल एंजेलो" || hi.Answer != "रोम" || hi.Subject != "माइकल एंजेलो" || len(hi.Candidates) != 2 || strings.ContainsRune(hi.Answer, '\r') {
		t.Errorf("hin row 1: %+v", hi)
	}
	en, _ := s.Items[0].Variant("eng", item.English)
	if en.Answer == "" || !strings.Contains(en.Template, "<mask>") || !strings.HasSuffix(en.Source, "en.tsv:2") {
		t.Errorf("eng row 1: %+v", en)
	}
}

func TestBadRows(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "en.tsv"), []byte("Prompt\tAns\tCandidate Ans\tSubject\r\nX was born in <mask>.\tParis\tRome, Paris\tX\r\nY was born.\tRome\tRome\tY\r\nZ <mask>\t\tA\tZ\r\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "hi.tsv"), []byte("Prompt\tAns\tCandidate Ans\tSubject\r\nएक्स <mask>\tपेरिस\tपेरिस\tएक्स\r\n"), 0o644)
	_, err := Load(context.Background(), dir, lang.New(), item.Options{})
	if err == nil || !strings.Contains(err.Error(), "en.tsv line 3 field \"Prompt\": no <mask> slot") {
		t.Fatalf("error %v", err)
	}
	s, err := Load(context.Background(), dir, lang.New(), item.Options{SkipInvalid: true})
	if err != nil || len(s.Skipped) != 2 || s.Skipped[1].Field != "Ans" || s.Skipped[1].Line != 4 {
		t.Fatalf("%v %+v", err, s.Skipped)
	}
	if len(s.Notes) == 0 || !strings.Contains(s.Notes[0], "row count") {
		t.Errorf("notes %v", s.Notes)
	}
}
