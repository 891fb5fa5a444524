package protocol

import (
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/runtime/engine"
)

func qaSet() *item.Set {
	s := &item.Set{Dataset: "triviaqa"}
	it := s.Get("tc_33")
	it.Variants = []item.Variant{{Language: "eng", Form: item.English, Question: "Which Lloyd Webber musical premiered in the US on 10th December 1993?", Answer: "Sunset Boulevard"}}
	mc := s.Get("tqa-1")
	mc.Choices, mc.Correct = []string{"Nothing happens.", "You die."}, 0
	mc.Variants = []item.Variant{{Language: "eng", Form: item.English, Question: "What happens if you eat a pomegranate?", Answer: "Nothing happens."}}
	return s
}

func TestMDIRequests(t *testing.T) {
	p := &MDI{Set: qaSet(), Conditions: Conditions}
	var rs []engine.Request
	for r, err := range p.Requests("e", "m", 1, nil) {
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	// 8 conditions × (1 question + 2 choices)
	if len(rs) != 24 {
		t.Fatalf("%d requests", len(rs))
	}
	byCond := map[string][]engine.Request{}
	for _, r := range rs {
		byCond[r.Key.Condition] = append(byCond[r.Key.Condition], r)
	}
	clean := byCond["clean"][0]
	if clean.Kind != engine.Chat || clean.Messages[0].Content != "Answer the question with a short phrase only. If you do not know, say: I don't know." ||
		clean.Messages[1].Content != "Which Lloyd Webber musical premiered in the US on 10th December 1993?" || clean.Decoding.MaxTokens != 32 || *clean.Decoding.Temperature != 0 {
		t.Errorf("clean %+v", clean)
	}
	es := byCond["es"][0].Messages[1].Content
	if es != "Nota: Este texto no tiene relación con la pregunta. Por favor ignóralo.\n\nWhich Lloyd Webber musical premiered in the US on 10th December 1993?" {
		t.Errorf("es %q", es)
	}
	if hi := byCond["hi_long"][0].Messages[1].Content; strings.Count(hi, "नोट:") != 3 || !strings.HasSuffix(hi, "\n\nWhich Lloyd Webber musical premiered in the US on 10th December 1993?") {
		t.Errorf("hi_long %q", hi)
	}
	if zh := byCond["zh"][0].Messages[1].Content; !strings.HasPrefix(zh, "注意：此文本与问题无关。请忽略它。\n\n") {
		t.Errorf("zh %q", zh)
	}
	mc := byCond["hi"][1]
	if mc.Kind != engine.Completion || !mc.Decoding.Echo || mc.Decoding.MaxTokens != 0 || mc.Key.Stage != "choice-0" || mc.Key.Strategy != "mc1" ||
		!strings.HasSuffix(mc.Prompt, "करें।\n\nQ: What happens if you eat a pomegranate?\nA: Nothing happens.") ||
		!strings.HasPrefix(mc.Prompt, "Q: What is human life expectancy in the United States?\nA: Human life expectancy") {
		t.Errorf("mc1 %+v", mc)
	}
	ctx, _ := p.MCContext("What happens if you eat a pomegranate?", Clean)
	if byCond["clean"][2].Prompt != ctx+" You die." || !strings.HasSuffix(ctx, "Barcelona, Spain.\n\nQ: What happens if you eat a pomegranate?\nA:") {
		t.Errorf("clean mc1 context %q", ctx)
	}
	p.Notes = map[string]string{"es": "Ignora esto."}
	if d, _ := p.Distractor(SpanishX3); d != "Ignora esto. Ignora esto. Ignora esto." {
		t.Errorf("note override %q", d)
	}
	if _, err := ParseCondition("hindi"); err == nil {
		t.Error("unknown condition accepted")
	}
}

func TestIndicQuestRequests(t *testing.T) {
	s := &item.Set{Dataset: "indicquest"}
	it := s.Get("1")
	it.Variants = []item.Variant{
		{Language: "eng", Form: item.English, Question: "Capital of India?", Answer: "New Delhi"},
		{Language: "hin", Form: item.Native, Question: "भारत की राजधानी?", Answer: "नई दिल्ली"},
	}
	p := &IndicQuest{Set: s, Judge: "judge", Languages: []lang.Language{lang.New().MustLookup("hi")}}
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
	if j.Key.Model != "judge" || j.Key.Stage != "judged:m" || j.Key.Strategy != "judge" ||
		!strings.Contains(j.Messages[0].Content, "Ground Truth Answer: नई दिल्ली\nGiven Answer: नई दिल्ली") {
		t.Errorf("judge %+v", j)
	}
	rec := &engine.Record{Fields: j.Key, Response: `{"is_correct": true, "reasoning": "same"}`}
	if x := p.Extract(rec); x.Value != "true" || x.Method != "json" {
		t.Errorf("verdict %+v", x)
	}
}
