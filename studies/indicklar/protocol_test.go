package indicklar

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/protocol"
)

var reg = lang.New()

// A tiny set: 5 facts of one relation in Hindi native, Hindi code-mixed and English.
func tinySet() *item.Set {
	s := &item.Set{Dataset: "t"}
	for i, f := range []struct{ hi, hiA, cm, en, enA string }{
		{"भारत", "दिल्ली", "India", "India", "Delhi"},
		{"फ्रांस", "पेरिस", "France", "France", "Paris"},
		{"जापान", "टोक्यो", "Japan", "Japan", "Tokyo"},
		{"इटली", "रोम", "Italy", "Italy", "Rome"},
		{"मिस्र", "काहिरा", "Egypt", "Egypt", "Cairo"},
	} {
		it := s.Get(string(rune('1' + i)))
		it.Relation = "capital"
		it.Variants = []item.Variant{
			{Language: "hin", Form: item.Native, Question: klar.Fill("<subject> की राजधानी क्या है? उत्तर है: <mask>", f.hi), Answer: f.hiA, Candidates: []string{"मुंबई", f.hiA}},
			{Language: "hin", Form: item.CodeMixed, Question: klar.Fill("<subject> ki capital kya hai? The answer is: <mask>", f.cm), Answer: f.enA},
			{Language: "eng", Form: item.English, Question: klar.Fill("What is the capital of <subject>? The answer is: <mask>", f.en), Answer: f.enA},
		}
	}
	return s
}

func collect(t *testing.T, p *Protocol, stage int, prior protocol.Lookup) []engine.Request {
	t.Helper()
	out, _ := collectWithheld(t, p, stage, prior)
	return out
}

// collectWithheld also counts the requests yielded as ErrWithheld.
func collectWithheld(t *testing.T, p *Protocol, stage int, prior protocol.Lookup) ([]engine.Request, int) {
	t.Helper()
	var out []engine.Request
	withheld := 0
	for r, err := range p.Requests("e", "m", stage, prior) {
		switch {
		case errors.Is(err, protocol.ErrWithheld):
			withheld++
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, r)
		}
	}
	return out, withheld
}

func none(engine.Key) (*engine.Record, bool) { return nil, false }

func TestBaselinePrompts(t *testing.T) {
	p := &Protocol{Set: tinySet(), Languages: []lang.Language{reg.MustLookup("hi")}, Forms: []item.Form{item.Native, item.CodeMixed, item.English},
		Strategies: []Strategy{Baseline, BaselineCands}, Seed: 12345}
	rs := collect(t, p, 1, none)
	// 2 strategies × 3 forms × 5 items
	if len(rs) != 30 {
		t.Fatalf("%d requests", len(rs))
	}
	r := rs[0]
	if r.Key.String() != "e|m|1|hin|native|baseline||" || r.Kind != engine.Completion || r.Decoding.MaxTokens != 10 || *r.Decoding.Temperature != 0 {
		t.Errorf("first request %+v", r)
	}
	lines := strings.Split(r.Prompt, "\n")
	if len(lines) != 4 || lines[3] != "भारत की राजधानी क्या है? उत्तर है:" || strings.HasSuffix(r.Prompt, "\n") {
		t.Errorf("baseline prompt %q", r.Prompt)
	}
	for _, l := range lines[:3] {
		if strings.Contains(l, "भारत") || !strings.Contains(l, "उत्तर है: ") {
			t.Errorf("demo line %q (the test item must not be its own demonstration)", l)
		}
	}
	var cands *engine.Request
	for i := range rs {
		if rs[i].Key.Strategy == "baseline-cands" && rs[i].Key.Form == "native" {
			cands = &rs[i]
			break
		}
	}
	if !strings.HasSuffix(cands.Prompt, "\nCandidates: मुंबई, दिल्ली\nAnswer:") || len(cands.Decoding.Stop) != 2 {
		t.Errorf("obj-baseline prompt %q stop %q", cands.Prompt, cands.Decoding.Stop)
	}
	// Same demonstrations for both baselines; deterministic across calls.
	if strings.Split(cands.Prompt, "\n")[0] != lines[0] {
		t.Error("baselines drew different demonstrations")
	}
	if again := collect(t, p, 1, none); again[0].Prompt != r.Prompt {
		t.Error("demonstrations not deterministic")
	}
	p.Seed = 7
	differs := false
	for i, x := range collect(t, p, 1, none) {
		differs = differs || x.Prompt != rs[i].Prompt
	}
	if !differs {
		t.Error("the seed does not change the demonstrations")
	}
}

func TestJSONStrategyPrompts(t *testing.T) {
	p := &Protocol{Set: tinySet(), Languages: []lang.Language{reg.MustLookup("hin")}, Forms: []item.Form{item.Native, item.CodeMixed},
		Strategies: []Strategy{TinTCM, OneStepEN}, Seed: 12345}
	rs := collect(t, p, 1, none)
	if len(rs) != 10 { // native only
		t.Fatalf("%d requests", len(rs))
	}
	tint := rs[0].Prompt
	for _, want := range []string{
		"You are answering factual questions written in Hindi (Hindi script).",
		"- Convert the question into Hinglish using Hindi grammar with English content words",
		"{\"answer\": \"<answer in Hindi script>\"}",
		"- Do NOT output any explanation\nQ: ", // demos follow directly
		"\nOutput: {\"answer\": \"",
		"\n\nQ: भारत की राजधानी क्या है? उत्तर है:\nCandidates: मुंबई, दिल्ली\nOutput:",
	} {
		if !strings.Contains(tint, want) {
			t.Errorf("TinT-CM prompt lacks %q:\n%s", want, tint)
		}
	}
	if strings.Contains(tint, "{SOURCE") || strings.Contains(tint, "{TARGET") || strings.Contains(tint, "---8<---") {
		t.Error("placeholders or template header left in the prompt")
	}
	d := rs[0].Decoding
	if d.MaxTokens != 80 || d.StructuredOutputs == nil {
		t.Errorf("TinT decoding %+v", d)
	}
	one := rs[5]
	if one.Key.Strategy != "1step-en" || one.Decoding.MaxTokens != 120 || !strings.Contains(one.Prompt, "1. Translate the question into English") {
		t.Errorf("1Step-EN %+v", one)
	}
	p.ScriptNames, p.Chat = true, true
	rs = collect(t, p, 1, none)
	if !strings.Contains(rs[0].Messages[0].Content, "(Devanagari script)") || rs[0].Kind != engine.Chat {
		t.Errorf("options not applied: %+v", rs[0])
	}
}

func TestTwoStep(t *testing.T) {
	p := &Protocol{Set: tinySet(), Languages: []lang.Language{reg.MustLookup("hin")}, Forms: []item.Form{item.Native},
		Strategies: []Strategy{Baseline, TwoStepEN, TwoStepTranslit}, Seed: 1}
	if p.Stages() != 2 {
		t.Fatal("stages")
	}
	s1 := collect(t, p, 1, none)
	if len(s1) != 15 {
		t.Fatalf("stage 1: %d requests", len(s1))
	}
	en1 := s1[5]
	if en1.Key.Role != engine.Translation() || !strings.HasPrefix(en1.Prompt, "You are a translator.\nTranslate the following question from Hindi (Hindi) into English.") ||
		!strings.HasSuffix(en1.Prompt, "\"...\"}\n\nQ: भारत की राजधानी क्या है? उत्तर है:\nOutput:") {
		t.Errorf("2Step-EN stage 1 %q", en1.Prompt)
	}
	tr1 := s1[10]
	if !strings.Contains(tr1.Prompt, "<romanized question>\"}\n\n\nQ: ") {
		t.Errorf("2Step-Translit stage 1 spacing %q", tr1.Prompt[len(tr1.Prompt)-80:])
	}
	// Stage 2 asks the stage-1 translation; items whose stage 1 failed are withheld.
	prior := func(k engine.Key) (*engine.Record, bool) {
		switch {
		case k.Item == "1" && k.Strategy == "2step-en":
			return &engine.Record{Status: engine.StatusOK, Response: `{"translation": "What is the capital of India?"}`}, true
		case k.Item == "2" && k.Strategy == "2step-en":
			return &engine.Record{Status: engine.StatusOK, Response: `Translation: What is the capital of France`}, true
		case k.Item == "3":
			return &engine.Record{Status: engine.StatusFailed}, true
		}
		return nil, false
	}
	s2, withheld := collectWithheld(t, p, 2, prior)
	if len(s2) != 2 || withheld != 8 {
		t.Fatalf("stage 2: %d requests, %d withheld", len(s2), withheld)
	}
	if !strings.HasSuffix(s2[0].Prompt, "Q: What is the capital of India?\nCandidates: मुंबई, दिल्ली\nOutput:") || !s2[0].Key.Role.IsZero() ||
		!strings.Contains(s2[0].Prompt, "Select the correct answer from the candidates and write it in Hindi (Hindi).") {
		t.Errorf("stage 2 prompt %q", s2[0].Prompt)
	}
	if !strings.Contains(s2[1].Prompt, "Q: Translation: What is the capital of France\n") {
		t.Errorf("unparsed stage 1 must be used whole (authors' fallback): %q", s2[1].Prompt)
	}
}

func TestParseStrategy(t *testing.T) {
	for in, want := range map[string]Strategy{"TinT-CM": TinTCM, "1Step-EN+Ans": OneStepEN, "Obj-Baseline": BaselineCands, "2Step-Translit": TwoStepTranslit, "baseline": Baseline} {
		if got, err := ParseStrategy(in); err != nil || got != want {
			t.Errorf("%s: %s %v", in, got, err)
		}
	}
	if _, err := ParseStrategy("tint"); err == nil || !strings.Contains(err.Error(), "tint-cm") {
		t.Errorf("unknown: %v", err)
	}
}

func TestAblations(t *testing.T) {
	set, err := klar.Load(context.Background(), "../../testdata/klar", reg, nil, item.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := &Protocol{Set: set, Languages: []lang.Language{reg.MustLookup("ja")}, Forms: []item.Form{item.Native},
		Strategies: []Strategy{EntityEN, ContextEN}, Seed: 1}
	rs := collect(t, p, 1, none)
	if len(rs) != 2*46 {
		t.Fatalf("%d requests", len(rs))
	}
	ent, ctx := rs[0], rs[46]
	lines := strings.Split(ent.Prompt, "\n")
	// Japanese template around the English subject; Japanese candidates.
	if !strings.Contains(lines[3], "Nat King Cole") || strings.Contains(lines[3], "What instrument") || !strings.HasPrefix(lines[4], "Candidates: ") || lines[5] != "Answer:" {
		t.Errorf("entity-en prompt %q", ent.Prompt)
	}
	ja, _ := set.Items[0].Variant("jpn", item.Native)
	if !strings.Contains(ctx.Prompt, "What instrument does "+ja.Subject+" play? The answer is:") || !strings.Contains(ctx.Prompt, "piano") {
		t.Errorf("context-en prompt %q", ctx.Prompt)
	}
	if ent.Decoding.MaxTokens != 10 || len(ent.Decoding.Stop) != 2 {
		t.Errorf("decoding %+v", ent.Decoding)
	}

	r := &Protocol{Set: tinySet(), Languages: []lang.Language{reg.MustLookup("hi")}, Forms: []item.Form{item.Native}, Strategies: []Strategy{Romanized}, Seed: 1}
	rr := collect(t, r, 1, none)
	if q := strings.Split(rr[0].Prompt, "\n")[3]; len(rr) != 5 || q != "bharat ki rajadhani kya hai? uttar hai:" {
		t.Errorf("romanized prompt %q", rr[0].Prompt)
	}
}

func TestPaperWording(t *testing.T) {
	all := []Strategy{TinTCM, TinTEN, OneStepCM, OneStepEN, TwoStepCM, TwoStepEN, TwoStepTranslit}
	code := &Protocol{Set: tinySet(), Languages: []lang.Language{reg.MustLookup("hi")}, Forms: []item.Form{item.Native}, Strategies: all, Seed: 1}
	paper := &Protocol{Set: code.Set, Languages: code.Languages, Forms: code.Forms, Strategies: all, Seed: 1, PromptOptions: PromptOptions{PaperWording: true}}
	c, pp := collect(t, code, 1, none), collect(t, paper, 1, none)
	if len(c) != len(pp) || len(c) != 35 {
		t.Fatalf("%d and %d requests", len(c), len(pp))
	}
	for i := range c {
		if c[i].Key.Strategy == "2step-en" { // stage 1 reads the same in paper and code
			if c[i].Prompt != pp[i].Prompt {
				t.Errorf("2Step-EN stage 1 differs: %q vs %q", c[i].Prompt, pp[i].Prompt)
			}
			continue
		}
		if c[i].Prompt == pp[i].Prompt || len(pp[i].Prompt) >= len(c[i].Prompt) {
			t.Errorf("%s: the paper's wording should differ and be shorter", c[i].Key)
		}
	}
	if !strings.Contains(pp[0].Prompt, "Before answering, internally convert the question to Hinglish by keeping Hindi grammar") {
		t.Errorf("paper TinT-CM %q", pp[0].Prompt)
	}
	if !strings.HasSuffix(pp[25].Prompt, "{\"translation\": \"...\"}\n\nQ: भारत की राजधानी क्या है? उत्तर है:\nOutput:") {
		t.Errorf("paper 2Step-EN stage 1 %q", pp[25].Prompt)
	}
	if len(paper.Templates()) != 9 {
		t.Errorf("templates %v", paper.Templates())
	}
	for name := range paper.Templates() {
		if !strings.HasPrefix(name, "indicklar/paper/") {
			t.Errorf("template %s", name)
		}
	}
}
