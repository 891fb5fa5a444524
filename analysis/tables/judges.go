package tables

import "github.com/bhashalab/bhasha/analysis/score"

// JudgeByScript counts a judge's verdicts per model × main script of the
// judged response (Row.Verdict: whatever LLM judge the study runs).
func JudgeByScript(rows []score.Row) *Table {
	t := New("judge_by_script", "judge verdicts by the main script of the judged answer",
		Key("model"), Text("script", "main script of the answer"), Text("verdict", "the judge's verdict"), Count("count", "answers"))
	type k struct{ model, script, verdict string }
	counts := map[k]int{}
	for _, r := range rows {
		v := r.Verdict
		if r.Failed || v == "" {
			continue
		}
		s := r.Script
		if s == "" {
			s = "none"
		}
		counts[k{r.Key.Model, s, v}]++
	}
	keys := sortedKeys(counts, func(x k) []string { return []string{x.model, x.script, x.verdict} })
	for _, x := range keys {
		t.Add(x.model, x.script, x.verdict, counts[x])
	}
	if len(t.Rows) == 0 {
		t.Note = "no verdict: no answer of this run was judged (no LLM judge, no semantic judge)"
	}
	return t
}
