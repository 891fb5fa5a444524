package bmlama

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// What the package documents for study authors: Question is the text
// before the <mask> slot (in Hindi, for row 1, the bare subject); the
// stored candidates are in the same order in every language with the
// gold last; Candidates are that order unless shuffled, and shuffled they
// differ in order from one language to another while StoredCandidates
// still line them up.
func TestQuestionAndCandidatesAsDocumented(t *testing.T) {
	for _, c := range []struct {
		name    string
		shuffle bool
	}{{"stored order", false}, {"shuffled", true}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Load(context.Background(), "../../testdata/bmlama/BMLAMA53", lang.New(), item.Options{Seed: 7, ShuffleCandidates: c.shuffle})
			if err != nil {
				t.Fatal(err)
			}
			hi, _ := s.Items[0].Variant("hin", item.Native)
			if hi.Question != hi.Subject {
				t.Errorf("hin row 1: Question %q, Subject %q: want the bare subject", hi.Question, hi.Subject)
			}
			reordered := 0 // items whose gold sits at different places in two languages
			for _, it := range s.Items {
				golds := map[int]bool{}
				for _, v := range it.Variants {
					before, _, _ := strings.Cut(v.Template, "<mask>")
					if v.Question != strings.TrimSpace(before) {
						t.Errorf("item %s %s: Question %q, want the text before <mask> of %q", it.ID, v.Language, v.Question, v.Template)
					}
					n := len(v.StoredCandidates)
					if n != len(it.Variants[0].StoredCandidates) || n == 0 || v.StoredCandidates[n-1] != v.Answer {
						t.Errorf("item %s %s: stored candidates %q, want as many as every language's, gold %q last", it.ID, v.Language, v.StoredCandidates, v.Answer)
					}
					if !c.shuffle && !slices.Equal(v.Candidates, v.StoredCandidates) {
						t.Errorf("item %s %s: candidates %q, stored %q: reordered without ShuffleCandidates", it.ID, v.Language, v.Candidates, v.StoredCandidates)
					}
					if got := slices.Sorted(slices.Values(v.Candidates)); !slices.Equal(got, slices.Sorted(slices.Values(v.StoredCandidates))) {
						t.Errorf("item %s %s: candidates %q are not the stored ones %q", it.ID, v.Language, v.Candidates, v.StoredCandidates)
					}
					golds[slices.Index(v.Candidates, v.Answer)] = true
				}
				if len(golds) > 1 {
					reordered++
				}
			}
			if got := reordered > 0; got != c.shuffle {
				t.Errorf("%d of %d items have their gold at different places in different languages; want some: %t", reordered, len(s.Items), c.shuffle)
			}
		})
	}
}
