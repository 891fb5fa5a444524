package indicquest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
)

func TestLoadRealV1(t *testing.T) {
	s, err := Load(context.Background(), "../../testdata/indicquest-v1", lang.New(), item.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Check()
	for _, lf := range []string{"eng/english", "hin/native", "mni/native", "mar/native", "tam/native"} {
		if r.PerLF[lf] != 15 {
			t.Errorf("%s: %d rows, want 15 (%v)", lf, r.PerLF[lf], r.PerLF)
		}
	}
	it := s.Items[0]
	en, _ := it.Variant("eng", item.English)
	if en.Question != "Whose death coincided with the launch of the non-cooperation movement in 1920?" || it.Domain != "Politics" {
		t.Errorf("row 1 %+v %s", en, it.Domain)
	}
	mr, _ := it.Variant("mar", item.Native) // header "Question, Answer,Domain"
	hi, _ := it.Variant("hin", item.Native)
	mni, _ := it.Variant("mni", item.Native) // BOM
	for _, v := range []*item.Variant{mr, hi, mni} {
		if v == nil || v.Question == "" || v.Answer == "" || v.Question != strings.TrimSpace(v.Question) || strings.HasPrefix(v.Question, "\ufeff") {
			t.Errorf("variant %+v", v)
		}
	}
}

func TestV2HeadersAndIDs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "english.csv"), []byte("ID,QUESTION,answer,domain\nq7,Capital of India?,New Delhi,Geography\nq8,\"Who wrote \"\"Gitanjali\"\"?\",Tagore,Literature\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "hindi.csv"), []byte("id,question,answer,domain\nq7, भारत की राजधानी?, नई दिल्ली,Geography\n"), 0o644)
	s, err := Load(context.Background(), dir, lang.New(), item.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Check()
	if r.Items != 2 || r.PerLF["hin/native"] != 1 || len(r.Missing["hin/native"]) != 1 || r.Missing["hin/native"][0] != "q8" {
		t.Fatalf("report %v", r)
	}
	v, _ := s.Items[1].Variant("eng", item.English)
	if v.Question != `Who wrote "Gitanjali"?` {
		t.Errorf("quoted cell %q", v.Question)
	}
	os.WriteFile(filepath.Join(dir, "hindi.csv"), []byte("id,question,answer\nq7,,x\n"), 0o644)
	if _, err := Load(context.Background(), dir, lang.New(), item.Options{}); err == nil || !strings.Contains(err.Error(), "hindi.csv line 2 field \"Question\": empty") {
		t.Errorf("error %v", err)
	}
	os.Remove(filepath.Join(dir, "hindi.csv"))
	os.WriteFile(filepath.Join(dir, "klingon.csv"), []byte("question,answer\na,b\n"), 0o644)
	if _, err := Load(context.Background(), dir, lang.New(), item.Options{}); err == nil || !strings.Contains(err.Error(), "klingon") {
		t.Errorf("unknown language file: %v", err)
	}
}
