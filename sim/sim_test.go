package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bhashalab/bhasha/runtime/engine"
)

func TestTokenizer(t *testing.T) {
	var tok Tokenizer
	cases := []struct {
		in       string
		maxCount int // upper bound on the count, to pin the per-script ratio
	}{
		{"", 0},
		{"a", 1},
		{"What is the capital of France?", 10},
		{"फ्रांस की राजधानी क्या है?", 20},
		{"Bourvil किस country का citizen है?", 14},
		{"注意：此文本与问题无关。", 9},
	}
	for _, c := range cases {
		ids := tok.Encode(c.in)
		if len(ids) != tok.Count(c.in) || len(ids) > c.maxCount {
			t.Errorf("%q: %d ids, count %d, at most %d", c.in, len(ids), tok.Count(c.in), c.maxCount)
		}
		back, err := tok.Decode(ids)
		if err != nil || back != c.in {
			t.Errorf("%q: decoded %q, %v", c.in, back, err)
		}
	}
	if _, err := tok.Decode([]int64{5}); err == nil {
		t.Error("decoded a non-simulator id")
	}
	for n := range 8 {
		cut, _ := tok.Truncate("फ्रांस की राजधानी", n)
		if !utf8.ValidString(cut) || tok.Count(cut) > n {
			t.Errorf("truncate to %d: %q (%d tokens)", n, cut, tok.Count(cut))
		}
	}
}

func TestLookupPrefersLastCue(t *testing.T) {
	kb := NewKnowledge([]Fact{
		{ID: "1", Language: "en", Cues: []string{"Bourvil"}, Answer: "France"},
		{ID: "2", Language: "en", Cues: []string{"Kurt Lewin"}, Answer: "psychology"},
		{ID: "3", Language: "en", Cues: []string{"Kurt"}, Answer: "wrong"},
		{ID: "4", Language: "en", Cues: []string{`"How many animal shapes are in the ""Animal Crackers"" zoo?"`}, Answer: "18"},
	})
	cases := []struct{ text, want string }{
		{"Which country is Bourvil a citizen of? France\nWhat field does Kurt Lewin work in?", "2"},
		{"What field does Kurt Lewin work in? psychology\nWhich country is bourvil a citizen of?", "1"},
		{"Nothing here", ""},
		// A question in quotes (TriviaQA's doubled quotes) is found by its first word.
		{"Ignore this note.\n\n\"How many animal shapes are in the \"\"Animal Crackers\"\" zoo?\"", "4"},
	}
	for _, c := range cases {
		f, _, ok := kb.Lookup(c.text)
		got := ""
		if ok {
			got = f.ID
		}
		if got != c.want {
			t.Errorf("%q: fact %q, want %q", c.text, got, c.want)
		}
	}
}

// The simulated accuracy follows the studies' findings: larger is better,
// English > code-mixed > native, and translate-first helps large models more.
func TestAccuracyStructure(t *testing.T) {
	models := DefaultModels()
	mean := func(m ModelSpec, f features) float64 {
		s := 0.0
		for i := range 2000 {
			s += pCorrect(m, string(rune(i)), f)
		}
		return s / 2000
	}
	for _, m := range models {
		en := mean(m, features{form: "english", queryTokens: 10})
		cm := mean(m, features{form: "code-mixed", queryTokens: 10})
		na := mean(m, features{form: "native", queryTokens: 10})
		long := mean(m, features{form: "native", queryTokens: 60})
		if !(en > cm && cm > na && na > long) {
			t.Errorf("%s: en %.3f cm %.3f native %.3f long native %.3f", m.ID, en, cm, na, long)
		}
	}
	gain := func(m ModelSpec) float64 {
		return mean(m, features{form: "native", translate: true}) - mean(m, features{form: "native"})
	}
	if !(gain(models[2]) > gain(models[1]) && gain(models[1]) > gain(models[0])) {
		t.Errorf("translate-first gains %.3f %.3f %.3f do not grow with size", gain(models[0]), gain(models[1]), gain(models[2]))
	}
	if !(mean(models[0], features{form: "english"}) < mean(models[2], features{form: "english"})) {
		t.Error("larger model not better")
	}
}

func post(t *testing.T, h http.Handler, path, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	rr := httptest.NewRecorder()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	h.ServeHTTP(rr, req)
	return rr.Code, rr.Header(), rr.Body.Bytes()
}

// chatContent posts one chat message with headers and returns the answer.
func chatContent(t *testing.T, h http.Handler, body map[string]any, header ...string) string {
	t.Helper()
	b, _ := json.Marshal(body)
	_, _, out := post(t, h, "/v1/chat/completions", string(b), header...)
	var cr struct {
		Choices []struct{ Message struct{ Content string } }
	}
	json.Unmarshal(out, &cr)
	if len(cr.Choices) == 0 {
		t.Fatalf("no choices: %s", out)
	}
	return cr.Choices[0].Message.Content
}

func get(t *testing.T, h http.Handler, path string) []byte {
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest("GET", path, nil))
	if rr.Code != 200 {
		t.Fatalf("GET %s: %d", path, rr.Code)
	}
	return rr.Body.Bytes()
}

func newTestServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Facts == nil {
		cfg.Facts = []Fact{
			{ID: "3354", Language: "hin", Form: "english", Cues: []string{"Which country is Bourvil a citizen of?"}, Answer: "France", Candidates: []string{"India", "France"}},
			{ID: "3354", Language: "hin", Form: "native", Cues: []string{"बौरविल किस देश का नागरिक है?"}, Answer: "फ्रांस"},
		}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEndpoints(t *testing.T) {
	s := newTestServer(t, Config{})
	var models struct {
		Data []struct {
			ID, Root    string
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		}
	}
	json.Unmarshal(get(t, s, "/v1/models"), &models)
	if len(models.Data) != 3 || !strings.HasPrefix(models.Data[0].Root, "simulated/") || models.Data[0].MaxModelLen == 0 || !strings.Contains(models.Data[0].OwnedBy, "simulated") {
		t.Fatalf("models %+v", models)
	}
	if !strings.Contains(string(get(t, s, "/version")), "simulated") {
		t.Error("version does not say simulated")
	}
	get(t, s, "/health")

	code, _, body := post(t, s, "/tokenize", `{"model":"sim-tiny-1b","prompt":"फ्रांस की राजधानी"}`)
	var tk struct {
		Count  int     `json:"count"`
		Tokens []int64 `json:"tokens"`
	}
	json.Unmarshal(body, &tk)
	if code != 200 || tk.Count != len(tk.Tokens) || tk.Count == 0 {
		t.Fatalf("tokenize %d %s", code, body)
	}
	tb, _ := json.Marshal(map[string]any{"model": "sim-tiny-1b", "tokens": tk.Tokens})
	code, _, body = post(t, s, "/detokenize", string(tb))
	if code != 200 || !strings.Contains(string(body), "फ्रांस की राजधानी") {
		t.Fatalf("detokenize %d %s", code, body)
	}

	// Chat: the large model knows the English fact; the answer is deterministic.
	chat := `{"model":"sim-large-70b","messages":[{"role":"user","content":"Which country is Bourvil a citizen of?"}],"max_tokens":16}`
	code, _, b1 := post(t, s, "/v1/chat/completions", chat)
	_, _, b2 := post(t, s, "/v1/chat/completions", chat)
	var cr struct {
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	json.Unmarshal(b1, &cr)
	if code != 200 || len(cr.Choices) != 1 || cr.Choices[0].FinishReason != "stop" {
		t.Fatalf("chat %d %s", code, b1)
	}
	if ans := cr.Choices[0].Message.Content; ans != "France" && ans != "India" {
		t.Errorf("answer %q is neither the gold nor the candidate", ans)
	}
	if !bytes.Equal(dropCreated(b1), dropCreated(b2)) {
		t.Errorf("not deterministic:\n%s\n%s", b1, b2)
	}
	// max_tokens cuts with finish_reason length.
	code, _, b := post(t, s, "/v1/chat/completions", `{"model":"sim-tiny-1b","messages":[{"role":"user","content":"unknown thing"}],"max_tokens":1}`)
	json.Unmarshal(b, &cr)
	if code != 200 || cr.Choices[0].FinishReason != "length" || cr.Usage.CompletionTokens != 1 {
		t.Errorf("max_tokens 1: %s", b)
	}
	// Completion with echo and logprobs scores the prompt.
	code, _, b = post(t, s, "/v1/completions", `{"model":"sim-base-8b","prompt":"Q: x\nA: y","max_tokens":0,"echo":true,"logprobs":0,"prompt_logprobs":0}`)
	var comp struct {
		Choices []struct {
			Text     string
			Logprobs struct {
				Tokens        []string
				TokenLogprobs []*float64 `json:"token_logprobs"`
			}
		}
		PromptLogprobs []any `json:"prompt_logprobs"`
	}
	json.Unmarshal(b, &comp)
	lp := comp.Choices[0].Logprobs
	if code != 200 || comp.Choices[0].Text != "Q: x\nA: y" || len(lp.Tokens) == 0 || lp.TokenLogprobs[0] != nil || lp.TokenLogprobs[1] == nil || *lp.TokenLogprobs[1] >= 0 {
		t.Errorf("echo/logprobs: %s", b)
	}
	if len(comp.PromptLogprobs) != len(lp.Tokens) || comp.PromptLogprobs[0] != nil {
		t.Errorf("prompt_logprobs: %s", b)
	}
	// Wrong model: vLLM's 404.
	code, _, b = post(t, s, "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`)
	if code != 404 || !strings.Contains(string(b), "does not exist") {
		t.Errorf("wrong model: %d %s", code, b)
	}
	metrics := string(get(t, s, "/metrics"))
	for _, name := range []string{"vllm:request_success_total", "vllm:num_requests_running", "vllm:num_requests_waiting"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("metrics lack %s", name)
		}
	}
}

func dropCreated(b []byte) []byte {
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "created")
	out, _ := json.Marshal(m)
	return out
}

func TestJudge(t *testing.T) {
	s := newTestServer(t, Config{})
	cases := []struct {
		answer string
		want   bool
	}{{"France", true}, {"the Republic of France", true}, {"India", false}}
	for _, c := range cases {
		// The wording is not the judge's: the role header is.
		prompt := "Please grade this.\nQuestion: Which country?\nGround Truth: France\nGiven Answer: " + c.answer
		body := map[string]any{"model": "sim-base-8b", "messages": []map[string]string{{"role": "user", "content": prompt}}, "max_tokens": 64}
		content := chatContent(t, s, body, engine.HeaderRole, "judge")
		var v struct {
			IsCorrect bool `json:"is_correct"`
			Reasoning string
		}
		if err := json.Unmarshal([]byte(content), &v); err != nil || v.IsCorrect != c.want || !strings.Contains(v.Reasoning, "simulated") {
			t.Errorf("%q: verdict %s", c.answer, content)
		}
		if got := chatContent(t, s, body); strings.Contains(got, "is_correct") {
			t.Errorf("answered as a judge without the role header: %s", got)
		}
		if got := chatContent(t, s, body, engine.HeaderRole, "judge", engine.HeaderCue, engine.CueOneWordVerdict); strings.Contains(got, "is_correct") {
			t.Errorf("the one-word judge (cue %s) answered in JSON: %s", engine.CueOneWordVerdict, got)
		}
		if got := chatContent(t, s, body, engine.HeaderRole, "judge", engine.HeaderStrategy, "qa"); !strings.Contains(got, "is_correct") {
			t.Errorf("a strategy's name changed the judge's verdict (only cues do): %s", got)
		}
	}
	// A template that asks for "is_correct" in its text is not a judge
	// unless the request says so.
	asks := map[string]any{"model": "sim-base-8b", "messages": []map[string]string{{"role": "user", "content": "Reply with is_correct. CORRECT, WRONG or ABSTAIN?\nGround Truth: France\nGiven Answer: France"}}, "max_tokens": 64}
	if got := chatContent(t, s, asks); strings.Contains(got, "is_correct") || strings.HasPrefix(got, "CORRECT") {
		t.Errorf("judged by the template's words: %s", got)
	}
}

// The JSON shape of an answer follows the request's schema, and the
// translate-first bonus its cue header, never words of the prompt nor a
// strategy's name.
func TestCuesNotWords(t *testing.T) {
	facts := []Fact{{ID: "1", Language: "hin", Form: "native", Cues: []string{"भारत की राजधानी क्या है?"}, Answer: "दिल्ली"}}
	s := newTestServer(t, Config{Facts: facts})
	msg := func(text string) []map[string]string { return []map[string]string{{"role": "user", "content": text}} }
	schema := map[string]any{"json": map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}}
	plain := chatContent(t, s, map[string]any{"model": "sim-large-70b", "messages": msg(`Output {"answer": ...}, translate first.` + "\nभारत की राजधानी क्या है?"), "max_tokens": 32})
	if strings.HasPrefix(plain, "{") {
		t.Errorf("JSON without a schema: %s", plain)
	}
	shaped := chatContent(t, s, map[string]any{"model": "sim-large-70b", "messages": msg("भारत की राजधानी क्या है?"), "max_tokens": 32, "structured_outputs": schema})
	var v map[string]string
	if err := json.Unmarshal([]byte(shaped), &v); err != nil || len(v) != 1 || v["answer"] == "" {
		t.Errorf("schema {answer}: %s", shaped)
	}
	cases := []struct {
		header             string
		translate, oneWord bool
	}{
		{engine.CueTranslateFirst, true, false},
		{engine.CueOneWordVerdict, false, true},
		{" translate-first , one-word-verdict", true, true},
		{"", false, false},
		{"tint-en", false, false}, // a strategy's name is no cue
		{"no such cue", false, false},
	}
	for _, c := range cases {
		g := genRequest{cues: engine.ParseCues(c.header)}
		if got := g.cue(); got.translate != c.translate || got.oneWord != c.oneWord {
			t.Errorf("cue header %q: translate %t, one word %t; want %t, %t", c.header, got.translate, got.oneWord, c.translate, c.oneWord)
		}
	}
}

func TestFaults(t *testing.T) {
	cases := []struct {
		kind   string
		status int
		check  func(h http.Header, body []byte) bool
	}{
		{Fault429, 429, func(h http.Header, _ []byte) bool {
			return h.Get("Retry-After") == "1" && h.Get("Retry-After-Ms") == "250"
		}},
		{Fault500, 500, func(_ http.Header, b []byte) bool { return bytes.Contains(b, []byte("simulated")) }},
		{FaultGarbage, 200, func(_ http.Header, b []byte) bool { return !json.Valid(b) }},
	}
	for _, c := range cases {
		s := newTestServer(t, Config{FailRate: 1, FailTypes: []string{c.kind}, RetryAfter: 250 * time.Millisecond})
		code, h, b := post(t, s, "/v1/chat/completions", `{"model":"sim-tiny-1b","messages":[{"role":"user","content":"x"}]}`)
		if code != c.status || !c.check(h, b) {
			t.Errorf("%s: %d %v %s", c.kind, code, h, b)
		}
	}
	if _, err := New(Config{FailTypes: []string{"explode"}}); err == nil {
		t.Error("unknown fault type accepted")
	}
	// Hang: the request ends when the client gives up.
	s := newTestServer(t, Config{FailRate: 1, FailTypes: []string{FaultTimeout}})
	ts := httptest.NewServer(s)
	defer ts.Close()
	cl := &http.Client{Timeout: 200 * time.Millisecond}
	start := time.Now()
	_, err := cl.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"model":"sim-tiny-1b","prompt":"x"}`))
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("hang: %v after %s", err, time.Since(start))
	}
	// Reset: the connection is closed without a response.
	s = newTestServer(t, Config{FailRate: 1, FailTypes: []string{FaultReset}})
	ts2 := httptest.NewServer(s)
	defer ts2.Close()
	if _, err := http.Post(ts2.URL+"/v1/completions", "application/json", strings.NewReader(`{"model":"sim-tiny-1b","prompt":"x"}`)); err == nil {
		t.Error("reset: got a response")
	}
}

func TestQueueAndLatency(t *testing.T) {
	s := newTestServer(t, Config{MaxConcurrency: 2, TTFT: 500 * time.Millisecond})
	ts := httptest.NewServer(s)
	defer ts.Close()
	start := time.Now()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"model":"sim-tiny-1b","prompt":"x","max_tokens":2}`))
			if err == nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		}()
	}
	// Once all six have arrived, two run and four wait until the first
	// pair is done: poll for that state rather than sleep a fixed time,
	// so that a busy machine's late arrivals are waited for.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var m string
	for seen := false; !seen; {
		m = string(get(t, s, "/metrics"))
		seen = strings.Contains(m, `vllm:num_requests_waiting{model_name="sim-tiny-1b"} 4`) && strings.Contains(m, `vllm:num_requests_running{model_name="sim-tiny-1b"} 2`)
		select {
		case <-done:
			if !seen {
				t.Fatalf("never saw 2 running and 4 waiting; metrics at the end:\n%s", m)
			}
		case <-time.After(5 * time.Millisecond):
		}
	}
	<-done
	// 6 requests, 2 at a time, 500 ms each: at least 1.5 s.
	if el := time.Since(start); el < 1500*time.Millisecond {
		t.Errorf("6 requests finished in %s with 2 slots of 500 ms", el)
	}
	if st := s.Stats(); st.Success != 6 {
		t.Errorf("stats %+v", st)
	}
}

func TestDistractorSwitchesScript(t *testing.T) {
	var facts []Fact
	for i := range 300 {
		id := string(rune('A'+i%26)) + string(rune('a'+i/26))
		facts = append(facts,
			Fact{ID: id, Language: "en", Form: "english", Cues: []string{"Who is person " + id + "?"}, Answer: "Name " + id},
			Fact{ID: id, Language: "hin", Form: "native", Cues: []string{"व्यक्ति " + id + " कौन है?"}, Answer: "नाम " + id})
	}
	s := newTestServer(t, Config{Facts: facts})
	count := func(model, note string) int {
		n := 0
		for _, f := range facts {
			if f.Language != "en" {
				continue
			}
			body, _ := json.Marshal(map[string]any{"model": model, "max_tokens": 32,
				"messages": []map[string]string{{"role": "user", "content": note + f.Cues[0]}}})
			_, _, b := post(t, s, "/v1/chat/completions", string(body))
			if bytes.ContainsRune(b, 'न') {
				n++
			}
		}
		return n
	}
	hindi := "नोट: इस पाठ का प्रश्न से कोई संबंध नहीं है। कृपया इसे अनदेखा करें।\n"
	if c := count("sim-large-70b", ""); c != 0 {
		t.Errorf("clean prompts: %d answers in Devanagari", c)
	}
	small, large := count("sim-tiny-1b", hindi), count("sim-large-70b", hindi)
	if !(large > small && large > 0) {
		t.Errorf("Devanagari answers under a Hindi note: large %d, small %d", large, small)
	}
}

// unit must be uniform even for inputs that differ in their last byte.
func TestUnitIsUniform(t *testing.T) {
	var bins [10]int
	for i := range 10000 {
		bins[int(unit("peer", "m", "1887", string(rune('a'+i%26)), string(rune(i)))*10)]++
	}
	for b, n := range bins {
		if n < 850 || n > 1150 {
			t.Errorf("bin %d has %d of 10000", b, n)
		}
	}
}

// Wrong answers come from other facts of the same language and form.
func TestWrongAnswersArePlausible(t *testing.T) {
	var facts []Fact
	for i := range 30 {
		facts = append(facts, Fact{ID: string(rune('A' + i)), Language: "hin", Form: "english", Cues: []string{"Q" + string(rune('A'+i))}, Answer: "Ans" + string(rune('A'+i))})
	}
	s := newTestServer(t, Config{Facts: facts})
	for _, m := range DefaultModels() {
		for i := range facts {
			w := s.wrongAnswer(m, &facts[i])
			if w == facts[i].Answer || !strings.HasPrefix(w, "Ans") {
				t.Errorf("%s %s: wrong answer %q", m.ID, facts[i].ID, w)
			}
		}
	}
}

func TestDevanagari(t *testing.T) {
	cases := []struct{ in, want string }{{"Oregon", "ओरेगोन"}, {"Colombia", "कोलोमबिअ"}, {"John Huston", "जोहन हुसटोन"}, {"फ्रांस", "फ्रांस"}}
	for _, c := range cases {
		if got := Devanagari(c.in); got != c.want {
			t.Errorf("Devanagari(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// English-only facts (TriviaQA) still drift into Devanagari under a Hindi
// note for the large model.
func TestSwitchWithoutHindiVariant(t *testing.T) {
	var facts []Fact
	for i := range 200 {
		facts = append(facts, Fact{ID: fmt.Sprint(i), Language: "eng", Form: "english", Cues: []string{fmt.Sprintf("Which city is number %d?", i)}, Answer: fmt.Sprintf("Paris %d", i)})
	}
	s := newTestServer(t, Config{Facts: facts})
	note := "नोट: इस पाठ का प्रश्न से कोई संबंध नहीं है। कृपया इसे अनदेखा करें।\n\n"
	switched := 0
	for _, f := range facts {
		out, _ := s.answer(DefaultModels()[2], note+f.Cues[0], cue{})
		if strings.ContainsAny(out, "पसर") {
			switched++
		}
	}
	if switched < 20 || switched > 120 {
		t.Errorf("%d of 200 answers in Devanagari", switched)
	}
}

// Multiple choice by log-probability: the larger model prefers the correct
// choice more often.
func TestMultipleChoicePreference(t *testing.T) {
	var facts []Fact
	for i := range 300 {
		q := fmt.Sprintf("What is true about thing %d?", i)
		choices := []string{fmt.Sprintf("Right %d.", i), fmt.Sprintf("Wrong A %d.", i), fmt.Sprintf("Wrong B %d.", i)}
		facts = append(facts, Fact{ID: fmt.Sprint(i), Language: "eng", Form: "english", Cues: []string{q}, Answer: choices[0], Choices: choices})
	}
	s := newTestServer(t, Config{Facts: facts})
	score := func(m ModelSpec, prompt string) float64 {
		lps := s.logprobSeq(m, s.tok.Encode(prompt), true)
		s.biasChoice(m, prompt, lps)
		ctx := prompt[:strings.LastIndex(prompt, "\nA: ")+len("\nA:")]
		sum := 0.0
		for _, v := range lps[s.tok.Count(ctx):] {
			sum += v.(float64)
		}
		return sum
	}
	acc := func(m ModelSpec) int {
		n := 0
		for _, f := range facts {
			best, bestScore := "", -1e9
			for _, c := range f.Choices {
				if sc := score(m, "Q: "+f.Cues[0]+"\nA: "+c); sc > bestScore {
					best, bestScore = c, sc
				}
			}
			if best == f.Answer {
				n++
			}
		}
		return n
	}
	small, large := acc(DefaultModels()[0]), acc(DefaultModels()[2])
	if !(large > small+30 && small > 30) {
		t.Errorf("mc1 correct: large %d, small %d of 300", large, small)
	}
}
