package distractors

import (
	"math"
	"strconv"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// answers builds one model's TriviaQA answers under a condition: items
// [0, correct) right, the next abstain abstaining, the rest wrong, and of
// the wrong ones the first switch written in Devanagari.
func answers(model string, cond Condition, n, correct, abstain, switched int) []score.Row {
	var rows []score.Row
	for i := range n {
		r := row(model, "eng", "english", StrategyQA, string(cond), strconv.Itoa(i), i < correct)
		r.Abstain = i >= correct && i < correct+abstain
		r.Marks.Set(MarkDistractorSwitch, i >= correct+abstain && i < correct+abstain+switched)
		rows = append(rows, r)
	}
	return rows
}

// The distractor claims per model, on the texts' numbers (n = 500):
// Llama-3.1-8B clean 259 right, 33 abstaining (0.518, 0.066, proxy
// 0.416) and under Hindi 114 right, 31 abstaining, 291 switched (0.228,
// 0.062, 0.710, 58.2%): the switch rises 0.582, the proxy 0.294, exact
// match falls 0.290. Qwen2.5-3B's abstention 176 → 365 (0.352 → 0.730,
// +0.378) with 6 switched (1.2%, under the bound 1.25%); the rerun's
// Llama-3.2-3B switched 35 of 200 (17.5%: the bound fails). Llama-3.2-3B's
// zh_long drop of 0.100 (300 → 250 right: 50 pairs one way, p = 2⁻⁴⁹)
// holds; a drop of one item under hi (p = 1) does not, though positive. A
// model the paper did not run gets the paragraph claim only.
func TestClaims(t *testing.T) {
	var rows []score.Row
	rows = append(rows, answers("llama8", Clean, 500, 259, 33, 0)...)
	rows = append(rows, answers("llama8", Hindi, 500, 114, 31, 291)...)
	rows = append(rows, answers("qwen", Clean, 500, 200, 176, 0)...)
	rows = append(rows, answers("qwen", Hindi, 500, 100, 365, 6)...)
	rows = append(rows, answers("rerun3b", Clean, 200, 100, 20, 0)...)
	rows = append(rows, answers("rerun3b", Hindi, 200, 99, 20, 35)...)
	rows = append(rows, answers("rerun3b", ChineseX3, 200, 80, 20, 0)...)
	rows = append(rows, answers("llama3", Clean, 500, 300, 0, 0)...)
	rows = append(rows, answers("llama3", ChineseX3, 500, 250, 0, 0)...)
	rows = append(rows, answers("llama3", Hindi, 500, 299, 0, 0)...)
	rows = append(rows, answers("sim", Clean, 10, 5, 2, 0)...)
	rows = append(rows, answers("sim", Paragraph, 10, 1, 9, 0)...)
	rows = append(rows, answers("sim", Hindi, 10, 0, 0, 10)...)
	paper := map[string]string{"llama8": PaperLlama31_8B, "qwen": PaperQwen25_3B, "rerun3b": PaperLlama32_3B, "llama3": PaperLlama32_3B}
	c := tables.Conclusions(Claims(func(m string) string { return paper[m] }), nil, rows)
	type want struct {
		effect, p float64
		holds     bool
	}
	nan := math.NaN()
	cases := map[[2]string]want{
		{"llama8", "the Hindi note switches answers to Devanagari (Llama-3.1-8B; §5, §5.3: 58.2%)"}:                               {0.582, math.Pow(2, -290), true},
		{"llama8", "the Hindi note raises the hallucination proxy (Llama-3.1-8B; Table 3: 0.416 → 0.710)"}:                        {0.294, nan, true},
		{"llama8", "the Hindi note lowers exact match (Llama-3.1-8B; Table 3: 0.518 → 0.228)"}:                                    {0.290, math.Pow(2, -144), true},
		{"qwen", "under 1.25% of answers switch to Devanagari under the Hindi note (the four other models; §5: at most 1.2%)"}:    {0.0125 - 0.012, nan, true},
		{"qwen", "the Hindi note raises abstention (the four other models; §5: Qwen2.5-3B 0.352 → 0.730)"}:                        {0.378, nan, true},
		{"rerun3b", "under 1.25% of answers switch to Devanagari under the Hindi note (the four other models; §5: at most 1.2%)"}: {0.0125 - 0.175, nan, false},
		{"llama3", "the zh_long note lowers exact match significantly (Llama-3.2-3B; §5.1, Table 2)"}:                             {0.100, math.Pow(2, -49), true},
		{"llama3", "the hi note lowers exact match significantly (Llama-3.2-3B; §5.1, Table 2)"}:                                  {0.002, 1, false},
		{"sim", "the paragraph raises abstention (every model; Table 4)"}:                                                         {0.7, nan, true},
	}
	seen := map[[2]string]bool{}
	for _, r := range c.Rows {
		k := [2]string{c.Str(r, "model"), c.Str(r, "claim")}
		if k[0] == "sim" && k[1] != "the paragraph raises abstention (every model; Table 4)" {
			t.Errorf("a model the paper did not run: %v", r)
		}
		if k[0] == "llama8" && c.Str(r, "claim") == "the Hindi note raises abstention (the four other models; §5: Qwen2.5-3B 0.352 → 0.730)" {
			t.Errorf("the four others' claim on Llama-3.1-8B: %v", r)
		}
		w, ok := cases[k]
		if !ok {
			continue
		}
		seen[k] = true
		p := c.Num(r, "p")
		if lo, hi := c.Num(r, "effect_lo"), c.Num(r, "effect_hi"); !(lo <= w.effect && w.effect <= hi) {
			t.Errorf("%v: effect %v outside its interval [%v, %v]", k, w.effect, lo, hi)
		}
		if math.Abs(c.Num(r, "effect")-w.effect) > 1e-9 || r[c.Col("holds")] != w.holds || (!math.IsNaN(w.p) && math.Abs(p-w.p) > 1e-12*math.Max(1, w.p)) {
			t.Errorf("%v: effect %v p %v holds %v, want %+v", k, c.Num(r, "effect"), p, r[c.Col("holds")], w)
		}
	}
	for k := range cases {
		if !seen[k] {
			t.Errorf("no row for %v", k)
		}
	}
}
