package klar

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

var reg = lang.New()

func TestLoadRealKLAR(t *testing.T) {
	s, err := Load(context.Background(), "../../testdata/klar", reg, nil, item.Options{Seed: 12345, ShuffleCandidates: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 46 {
		t.Fatalf("%d items, want 46", len(s.Items))
	}
	it := s.Items[0]
	if it.ID != "4757" || it.Relation != "instrument" {
		t.Fatalf("first item %s %s", it.ID, it.Relation)
	}
	en, ok := it.Variant("eng", item.English)
	if !ok {
		t.Fatal("no English variant")
	}
	if en.Question != "What instrument does Nat King Cole play? The answer is:" || en.Answer != "piano" || en.Subject != "Nat King Cole" {
		t.Errorf("English variant %+v", en)
	}
	if got := en.StoredCandidates; !slices.Equal(got, []string{"violin", "guitar", "harmonica", "clarinet", "viola", "piano"}) {
		t.Errorf("stored candidates %q", got)
	}
	sorted := func(x []string) []string { y := slices.Clone(x); slices.Sort(y); return y }
	if !slices.Equal(sorted(en.Candidates), sorted(en.StoredCandidates)) {
		t.Errorf("shuffled candidates %q are not a permutation", en.Candidates)
	}
	ja, ok := it.Variant("jpn", item.Native)
	if !ok || ja.Answer == "" || !strings.Contains(ja.Source, "ja/instrument.json:") {
		t.Fatalf("Japanese variant %+v", ja)
	}
	// The gold's position is spread, not always last.
	last := 0
	for _, it := range s.Items {
		v, _ := it.Variant("eng", item.English)
		if v.Candidates[len(v.Candidates)-1] == v.Answer {
			last++
		}
	}
	if last > 20 {
		t.Errorf("gold last in %d of 46 shuffled lists", last)
	}
	// Same seed, same order; the authors' (stored) order by default.
	s2, _ := Load(context.Background(), "../../testdata/klar", reg, []string{"en"}, item.Options{Seed: 12345, ShuffleCandidates: true})
	v2, _ := s2.Items[0].Variant("eng", item.English)
	if !slices.Equal(v2.Candidates, en.Candidates) {
		t.Error("shuffle not deterministic")
	}
	if _, ok := s2.Items[0].Variant("jpn", item.Native); ok {
		t.Error("language filter ignored")
	}
	s3, _ := Load(context.Background(), "../../testdata/klar", reg, nil, item.Options{})
	v3, _ := s3.Items[0].Variant("eng", item.English)
	if v3.Candidates[len(v3.Candidates)-1] != "piano" {
		t.Error("stored order not kept")
	}
	if r := s.Check(); r.PerLF["eng/english"] != 46 || r.PerLF["jpn/native"] != 46 || len(r.Missing) != 0 {
		t.Errorf("report %+v", r)
	}
}

func write(t *testing.T, root, dir, name, content string) {
	t.Helper()
	os.MkdirAll(filepath.Join(root, dir), 0o755)
	if err := os.WriteFile(filepath.Join(root, dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLayoutsAndBadRecords(t *testing.T) {
	root := t.TempDir()
	write(t, root, "hin", "capital.json", `{"prompt_templates": ["<subject> की राजधानी क्या है? उत्तर है: <mask>"],
 "samples": [
  {"index": 1, "subject": "भारत", "object": "दिल्ली", "object_candidates": ["मुंबई", "दिल्ली"]},
  {"index": "2", "subject": "फ्रांस", "object": "पेरिस", "object_candidates": "रोम, पेरिस"}
 ]}`)
	write(t, root, "hin-en", "capital.json", `{"prompt_templates": ["<subject> ki capital kya hai? The answer is: <mask>"],
 "samples": [{"index": 1, "subject": "India", "object": "Delhi", "object_candidates": "Mumbai, Delhi"}]}`)
	write(t, root, "bn-en", "capital.json", `{"prompt_templates": ["<subject> er capital ki? <mask>"],
 "samples": [{"index": 2, "subject": "France", "object": "Paris"}]}`)
	s, err := Load(context.Background(), root, reg, nil, item.Options{})
	if err != nil {
		t.Fatal(err)
	}
	one := s.Items[0]
	if v, ok := one.Variant("hin", item.Native); !ok || v.Question != "भारत की राजधानी क्या है? उत्तर है:" || len(v.Candidates) != 2 {
		t.Errorf("hin %+v", v)
	}
	if v, ok := one.Variant("hin", item.CodeMixed); !ok || v.Answer != "Delhi" {
		t.Errorf("hin-en %+v", v)
	}
	if _, ok := s.Items[1].Variant("ben", item.CodeMixed); !ok {
		t.Error("bn-en not read as Bengali code-mixed")
	}
	r := s.Check()
	if got := r.Missing["ben/code-mixed"]; !slices.Equal(got, []string{"1"}) {
		t.Errorf("alignment gaps %v", r.Missing)
	}

	bad := t.TempDir()
	write(t, bad, "hin", "capital.json", "{\"prompt_templates\": [\"<subject> <mask>\"],\n \"samples\": [\n  {\"index\": 1, \"subject\": \"a\", \"object\": \"b\"},\n  {\"index\": 2, \"subject\": \"c\"},\n  {\"index\": 3, \"subject\": \"d\", \"object\": \"e\", \"object_candidates\": 7}\n ]}")
	_, err = Load(context.Background(), bad, reg, nil, item.Options{})
	if err == nil || !strings.Contains(err.Error(), "capital.json line 4 samples[1] field \"object\": missing or empty") {
		t.Errorf("error %v", err)
	}
	s, err = Load(context.Background(), bad, reg, nil, item.Options{SkipInvalid: true})
	if err != nil || len(s.Items) != 1 || len(s.Skipped) != 2 || s.Skipped[1].Field != "object_candidates" || s.Skipped[1].Line != 5 {
		t.Errorf("skip-invalid: %v %+v", err, s)
	}

	unknown := t.TempDir()
	write(t, unknown, "xyz", "capital.json", `{"prompt_templates": ["<subject>"], "samples": []}`)
	if _, err := Load(context.Background(), unknown, reg, nil, item.Options{}); err == nil || !strings.Contains(err.Error(), `"xyz"`) {
		t.Errorf("unknown language directory: %v", err)
	}
}

func TestFill(t *testing.T) {
	cases := []struct{ tmpl, subj, want string }{
		{"Which country is <subject> a citizen of? The answer is: <mask>", "Bourvil", "Which country is Bourvil a citizen of? The answer is:"},
		{"In which city was <subject> born? The answer is: <mask>.", "X", "In which city was X born? The answer is: ."},
		{" The instrument played by <subject> is <mask>", "Y", "The instrument played by Y is"},
		{"<subject> and <subject>", "Z", "Z and <subject>"},
	}
	for _, c := range cases {
		if got := Fill(c.tmpl, c.subj); got != c.want {
			t.Errorf("Fill(%q) = %q, want %q", c.tmpl, got, c.want)
		}
	}
}

func TestBundles(t *testing.T) {
	s, err := LoadDemoSamples(context.Background(), "../../testdata/indicklar/demo_samples_excerpt.json", reg, item.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 3 || s.Items[0].ID != "5966" || s.Items[0].Relation != "applies_to_jurisdiction" {
		t.Fatalf("items %+v", s.Items)
	}
	hin, ok := s.Items[0].Variant("hin", item.Native)
	if !ok || hin.Answer != "कनाडा" || len(hin.Candidates) != 10 || hin.StoredCandidates[9] != "कनाडा" {
		t.Errorf("hin %+v", hin)
	}
	if r := s.Check(); len(r.PerLF) != 19 {
		t.Errorf("%d language/forms, want 19 (18 + English)", len(r.PerLF))
	}
	p, err := LoadPageDemo(context.Background(), "../../testdata/indicklar/project_page_demo_hin_excerpt.json", reg, item.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Check()
	if r.Items != 24 || r.PerLF["hin/native"] != 24 || r.PerLF["hin/code-mixed"] != 24 || r.PerLF["eng/english"] != 24 {
		t.Errorf("page demo %v", r)
	}
	v, _ := p.Items[0].Variant("hin", item.CodeMixed)
	n, _ := p.Items[0].Variant("hin", item.Native)
	if v.Answer != "France" || n.Answer != "फ्रांस" {
		t.Errorf("golds %q %q", v.Answer, n.Answer)
	}
}
