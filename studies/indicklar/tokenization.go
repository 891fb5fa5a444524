package indicklar

import (
	"math"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// Tokenization relates prompt length to accuracy across languages (A.9),
// per model: each language's mean prompt tokens of the reference
// baseline's native prompts (baselineReference of ref), offline from the
// model's tokenizer.json when it names one, else as the server counted
// them, beside that baseline's accuracy; then, language "*", Pearson's
// and Spearman's correlations with two-sided p.
func Tokenization(rows []study.Row, ref string) *study.Table {
	t := study.NewTable("tokenization", "prompt length in tokens against accuracy: Pearson r and Spearman ρ",
		append(keys("model", "language", "n"),
			study.NumberColumn("mean_prompt_tokens", "mean prompt length in tokens"),
			study.TextColumn("source", "where token counts come from: server (usage.prompt_tokens) or offline (tokenizer.json)"),
			study.ProportionColumn("accuracy", "k / n"),
			study.StatisticColumn("pearson_r", "Pearson correlation of prompt length with accuracy (r) and its p-value"),
			study.PValueColumn("pearson_p", "Pearson correlation of prompt length with accuracy (r) and its p-value"),
			study.StatisticColumn("spearman_rho", "Spearman rank correlation (ρ) and its p-value"),
			study.PValueColumn("spearman_p", "Spearman rank correlation (ρ) and its p-value"),
			study.TextColumn("baseline", "the reference baseline whose native prompts are counted (the experiment's reference: when it is a baseline)"))...)
	t.Mirrors = "IndicKLAR Table 10"
	has := map[string]bool{}
	for _, r := range rows {
		has[r.Key.Strategy] = true
	}
	ref = baselineReference(Reference(ref, rows), has)
	type count struct {
		tokens float64
		n, k   int
	}
	by := map[string]map[string]count{} // model → language → its prompts' tokens, answers and right answers
	offline := map[string]bool{}
	for _, r := range rows {
		if !r.Failed && r.Key.Strategy == ref && r.OfflineTokens > 0 {
			offline[r.Key.Model] = true
		}
	}
	for _, r := range rows {
		if r.Failed || r.Key.Strategy != ref || r.Key.Form != "native" {
			continue
		}
		c := r.PromptTokens
		if offline[r.Key.Model] {
			c = r.OfflineTokens
		}
		if c == 0 {
			continue
		}
		x := by[r.Key.Model][r.Key.Language]
		x.tokens, x.n = x.tokens+float64(c), x.n+1
		if r.Correct {
			x.k++
		}
		put(by, r.Key.Model, r.Key.Language, x)
	}
	for _, m := range study.SortedKeys(by) {
		src := "server"
		if offline[m] {
			src = "tokenizer.json"
		}
		var xs, ys []float64
		for _, l := range study.SortedKeys(by[m]) {
			x := by[m][l]
			mt, acc := x.tokens/float64(x.n), tables.Frac(x.k, x.n)
			xs, ys = append(xs, mt), append(ys, acc)
			t.Add(m, l, x.n, mt, src, acc, math.NaN(), math.NaN(), math.NaN(), math.NaN(), ref)
		}
		pr, pp := stats.Pearson(xs, ys) // NaN with one language or a constant series
		sr, sp := stats.Spearman(xs, ys)
		t.Add(m, "*", len(xs), math.NaN(), src, math.NaN(), pr, pp, sr, sp, ref)
	}
	return t
}

// DatasetStats describes the items a study asked (IndicKLAR Table 5), per
// form and language and per form (language "*"): the instances and the
// mean question and answer length in white-space separated words.
func DatasetStats(set *study.Items, languages []string, forms []string) *study.Table {
	t := study.NewTable("dataset_stats", "the items asked per form and language: instances, average question and answer length in words",
		append(keys("form", "language"),
			study.CountColumn("instances", "items asked in this form and language"),
			study.NumberColumn("avg_query_words", "mean length in white-space separated words of the questions (query) and gold answers"),
			study.NumberColumn("avg_answer_words", "mean length in white-space separated words of the questions (query) and gold answers"))...)
	t.Mirrors = "IndicKLAR Table 5"
	type cell struct{ form, lang string }
	type acc struct{ n, q, a int }
	by := map[cell]acc{}
	for _, it := range set.Items {
		for _, v := range it.Variants {
			if (len(languages) > 0 && !slices.Contains(languages, v.Language)) || (len(forms) > 0 && !slices.Contains(forms, string(v.Form))) || v.Question == "" {
				continue
			}
			for _, c := range []cell{{string(v.Form), v.Language}, {string(v.Form), "*"}} {
				x := by[c]
				x.n++
				x.q += len(strings.Fields(v.Question))
				x.a += len(strings.Fields(v.Answer))
				by[c] = x
			}
		}
	}
	keys := study.SortedKeysBy(by, func(c cell) []string { return []string{c.form, c.lang} })
	for _, c := range keys {
		x := by[c]
		t.Add(c.form, c.lang, x.n, float64(x.q)/float64(x.n), float64(x.a)/float64(x.n))
	}
	return t
}
