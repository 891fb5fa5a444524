package indicquest

import (
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/runtime/engine"
)

func TestIndicQuestRequests(t *testing.T) {
	s := &item.Set{Dataset: "indicquest"}
	it := s.Get("1")
	it.Variants = []item.Variant{
		{Language: "eng", Form: item.English, Question: "Capital of India?", Answer: "New Delhi"},
		{Language: "hin", Form: item.Native, Question: "भारत की राजधानी?", Answer: "नई दिल्ली"},
	}
	p := &Protocol{Set: s, Judge: "judge", Languages: []lang.Language{lang.New().MustLookup("hi")}}
	var s1 []engine.Request
	for r, err := range p.Requests("e", "m", 1, nil) {
		if err != nil {
			t.Fatal(err)
		}
		s1 = append(s1, r)
	}
	if len(s1) != 1 || !strings.Contains(s1[0].Messages[0].Content, "Answer the following question in Hindi") || !strings.HasSuffix(s1[0].Messages[0].Content, "Question: भारत की राजधानी?") {
		t.Fatalf("stage 1 %+v", s1)
	}
	prior := func(k engine.Key) (*engine.Record, bool) {
		return &engine.Record{Status: engine.StatusOK, Response: `{"answer": "नई दिल्ली"}`}, k == s1[0].Key
	}
	var s2 []engine.Request
	for r, err := range p.Requests("e", "m", 2, prior) {
		if err != nil {
			t.Fatal(err)
		}
		s2 = append(s2, r)
	}
	if len(s2) != 1 {
		t.Fatalf("stage 2: %d", len(s2))
	}
	j := s2[0]
	if j.Key.Model != "judge" || j.Key.Role != engine.Judge("m") || j.Key.Strategy != "" ||
		!strings.Contains(j.Messages[0].Content, "Ground Truth Answer: नई दिल्ली\nGiven Answer: नई दिल्ली") {
		t.Errorf("judge %+v", j)
	}
	rec := &engine.Record{Fields: j.Key, Response: `{"is_correct": true, "reasoning": "same"}`}
	if x := p.Extract(rec); x.Value != "true" || x.Method != "json" {
		t.Errorf("verdict %+v", x)
	}
}
