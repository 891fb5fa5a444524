package indicquest

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/study"

	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// protocolList is IndicQuest's three scoring protocols: the judge first,
// then the lexical ones.
func protocolList() []study.Metric {
	return append([]study.Metric{{Name: "judge", Of: func(r *study.Row) bool { return r.Correct }}}, lexicalMetrics()[:2]...)
}

// lexicalMetrics are the criteria the judge is set against: exact
// substring, word overlap and the transliteration-aware match.
func lexicalMetrics() []study.Metric {
	return []study.Metric{
		{Name: "substring", Of: func(r *study.Row) bool { return r.Marks.Has(MarkSubstring) }},
		{Name: "overlap", Of: func(r *study.Row) bool { return r.Marks.Has(MarkOverlap) }},
		{Name: "translit", Of: func(r *study.Row) bool { return r.Marks.Has(MarkTranslit) }},
	}
}

// Domains is IndicQuest accuracy per model × language × domain under each
// protocol (judge, exact substring, word overlap), with Wilson intervals,
// and per model × language the size-weighted accuracy over domains,
// Σ_d n_d·acc_d / Σ_d n_d (domain "*"), which equals the pooled rate; and
// each domain pooled over models and languages (model and language "*",
// the paper's "Commercial Studies ~70%, Sports ~41%").
func Domains(rows []study.Row) *study.Table {
	protocols := protocolList()
	t := study.NewTable("domains", "accuracy per domain and protocol", slices.Concat(tables.Keys("model", "language"), []study.Column{
		study.TextColumn("domain", "IndicQuest domain (* weighs domains by size)"),
		study.TextColumn("protocol", "scoring protocol: judge, substring or overlap")},
		tables.Keys("k", "n", "rate", "ci_lo", "ci_hi", "failed"))...)
	t.Mirrors = "IndicQuest Table 7"
	type key struct{ model, lang, domain string }
	by := map[key][]study.Row{}
	for _, r := range rows { // failed answers count as wrong
		for _, k := range []key{{r.Key.Model, r.Key.Language, r.Domain}, {r.Key.Model, r.Key.Language, "*"}, {"*", "*", r.Domain}} {
			by[k] = append(by[k], r)
		}
	}
	keys := study.SortedKeysBy(by, func(x key) []string { return []string{x.model, x.lang, x.domain} })
	for _, k := range keys {
		for _, p := range protocols {
			c, failed := 0, 0
			rs := by[k]
			for ri := range rs {
				r := &rs[ri]
				switch {
				case r.Failed:
					failed++
				case p.Of(r):
					c++
				}
			}
			pr := study.NewProportion(c, len(by[k]))
			t.Add(k.model, k.lang, k.domain, p.Name, c, len(by[k]), pr.P, pr.Lo, pr.Hi, failed)
		}
	}
	return t
}

// Rankings measures whether the protocols rank the same way: Kendall's
// τ-b (and its p) between the judge's accuracies and each lexical
// protocol's, over the model × language cells (language "*") and over
// the models within each language (the paper's per-language rankings).
func Rankings(rows []study.Row) *study.Table {
	protocols := protocolList()
	t := study.NewTable("protocol_rankings", "agreement of the protocols' model rankings (Kendall τ), pooled and per language",
		study.TextColumn("language", "the language whose models are ranked (* pools model × language cells)"),
		study.TextColumn("a", "a scoring protocol (judge, substring, overlap)"),
		study.TextColumn("b", "a scoring protocol (judge, substring, overlap)"),
		study.CountColumn("cells", "model × language cells (or models) ranked"),
		study.StatisticColumn("kendall_tau", "Kendall's τ between the two rankings"),
		study.PValueColumn("p", "two-sided p-value of the rank correlation"))
	t.Mirrors = "IndicQuest §5"
	type key struct{ model, lang string }
	acc := map[key][3][2]int{}
	for ri := range rows { // failed answers count as wrong
		r := &rows[ri]
		k := key{r.Key.Model, r.Key.Language}
		v := acc[k]
		for i, p := range protocols {
			v[i][1]++
			if p.Of(r) {
				v[i][0]++
			}
		}
		acc[k] = v
	}
	keys := study.SortedKeysBy(acc, func(x key) []string { return []string{x.model, x.lang} })
	// Pooled over model × language cells (language "*"), then each
	// language's ranking of the models.
	groups := map[string][]key{"*": keys}
	langs := []string{"*"}
	for _, k := range keys {
		if groups[k.lang] == nil {
			langs = append(langs, k.lang)
		}
		groups[k.lang] = append(groups[k.lang], k)
	}
	slices.Sort(langs[1:])
	for _, l := range langs {
		series := make([][]float64, len(protocols))
		for _, k := range groups[l] {
			for i := range protocols {
				series[i] = append(series[i], tables.Frac(acc[k][i][0], acc[k][i][1]))
			}
		}
		for i := 1; i < len(protocols); i++ {
			tau, p := stats.Kendall(series[0], series[i]) // NaN with one cell or a constant series
			t.Add(l, protocols[0].Name, protocols[i].Name, len(groups[l]), tau, p)
		}
	}
	return t
}

// ModelGaps compares every two models on the same questions, per language
// and protocol (judge, substring, overlap): both accuracies, the paired
// difference (a − b) with its 95% Wald interval and McNemar's exact p
// (IndicQuest §5: e.g. Gemma4 31B against Sarvam 30B per language). A
// failed answer is a wrong one.
func ModelGaps(rows []study.Row) *study.Table {
	protocols := protocolList()
	t := study.NewTable("model_gaps", "every two models on the same questions per language and protocol: paired difference with interval, McNemar p", slices.Concat(tables.Keys("language"), []study.Column{
		study.TextColumn("protocol", "scoring protocol: judge, substring or overlap"),
		study.TextColumn("a", "the models compared (diff = accuracy of a − accuracy of b)"),
		study.TextColumn("b", "the models compared (diff = accuracy of a − accuracy of b)"),
		study.CountColumn("pairs", "questions both models were asked"),
		study.ProportionColumn("acc_a", "accuracy of a"),
		study.ProportionColumn("acc_b", "accuracy of b"),
		study.StatisticColumn("diff", "acc_a − acc_b on the same questions (paired)")},
		tables.Keys("diff_lo", "diff_hi", "mcnemar_p"))...)
	t.Mirrors = "IndicQuest §5 (model gaps)"
	type key struct {
		protocol    int
		model, lang string
	}
	out := map[key]map[string]bool{} // by protocol, model and language: each item's outcome
	models, langs := map[string]bool{}, map[string]bool{}
	for ri := range rows {
		r := &rows[ri]
		models[r.Key.Model], langs[r.Key.Language] = true, true
		for i, p := range protocols {
			k := key{i, r.Key.Model, r.Key.Language}
			if out[k] == nil {
				out[k] = map[string]bool{}
			}
			out[k][r.Key.Item] = !r.Failed && p.Of(r)
		}
	}
	ms, ls := study.SortedKeys(models), study.SortedKeys(langs)
	for _, l := range ls {
		for i, p := range protocols {
			for x, a := range ms {
				for _, b := range ms[x+1:] {
					oa, ob := out[key{i, a, l}], out[key{i, b, l}]
					if oa == nil || ob == nil {
						continue
					}
					n, ka, kb, onlyA, onlyB := tables.Paired(oa, ob)
					d, lo, hi := study.PairedDiffCI(onlyB, onlyA, n, 0.95) // (a − b)
					t.Add(l, p.Name, a, b, n, tables.Frac(ka, n), tables.Frac(kb, n), d, lo, hi, study.McNemarExact(onlyA, onlyB))
				}
			}
		}
	}
	switch {
	case len(t.Rows) > 0:
	case len(models) < 2:
		t.Note = fmt.Sprintf("no model gap: the run has %d model (%s), and model_gaps compares every two models on the same questions", len(models), strings.Join(study.SortedKeys(models), ", "))
	default:
		t.Note = "no model gap: no two models answered the same language"
	}
	return t
}

// JudgeGrades summarises a graded judge's scores (IndicQuest's v1 judge:
// Factual Accuracy, Relevance, Clarity, Language Consistency, Conciseness
// and Overall, each 1–5) per model × language × criterion: n graded
// answers, the mean with its 95% normal interval (mean ± 1.96·s/√n), and
// the share graded 3 or more.
func JudgeGrades(rows []study.Row) *study.Table {
	t := study.NewTable("judge_grades", "a graded judge's scores per criterion (IndicQuest v1: five criteria and Overall): mean with interval, share graded 3 or more",
		study.KeyColumn("model"), study.KeyColumn("language"), study.TextColumn("criterion", "a scoring criterion (judge_grades: the graded judge's criterion)"),
		study.KeyColumn("n"), study.NumberColumn("mean", "mean grade (1–5)"), study.LowerColumn("mean_lo", "95% normal interval of the mean grade"),
		study.UpperColumn("mean_hi", "95% normal interval of the mean grade"), study.ProportionColumn("share_ge3", "share of answers graded 3 or more"))
	t.Mirrors = "IndicQuest v1 (eval_prompt.txt)"
	type cell struct{ model, lang, crit string }
	vals := map[cell][]float64{}
	for _, r := range rows {
		if r.Failed || r.Detail == nil {
			continue
		}
		for crit, v := range r.Detail.JudgeScores {
			c := cell{r.Key.Model, r.Key.Language, crit}
			vals[c] = append(vals[c], v)
		}
	}
	keys := study.SortedKeysBy(vals, func(c cell) []string { return []string{c.model, c.lang, c.crit} })
	for _, c := range keys {
		v := vals[c]
		n := float64(len(v))
		mean, ge3 := 0.0, 0
		for _, x := range v {
			mean += x
			if x >= 3 {
				ge3++
			}
		}
		mean /= n
		sd := 0.0
		for _, x := range v {
			sd += (x - mean) * (x - mean)
		}
		half := math.NaN()
		if len(v) > 1 {
			sd = math.Sqrt(sd / (n - 1))
			half = 1.959963984540054 * sd / math.Sqrt(n)
		}
		t.Add(c.model, c.lang, c.crit, len(v), mean, mean-half, mean+half, float64(ge3)/n)
	}
	return t
}

// JudgeAgreement compares the IndicQuest judge with each lexical
// criterion per model × language: Cohen's κ and raw agreement over the
// answers with a parsed verdict, both rates and the lexical shortfall
// (judge rate − criterion rate).
func JudgeAgreement(rows []study.Row) *study.Table {
	t := study.NewTable("judge_agreement", "the judge against exact substring, word overlap and transliteration-aware match: κ, agreement, lexical shortfall", slices.Concat(
		tables.Keys("model", "language"), []study.Column{study.TextColumn("criterion", "a scoring criterion (judge_grades: the graded judge's criterion)")},
		tables.Keys("n", "agree", "kappa"), []study.Column{study.ProportionColumn("judge_rate", "share judged correct"),
			study.ProportionColumn("criterion_rate", "share correct under the lexical criterion"),
			study.StatisticColumn("shortfall", "judge_rate − criterion_rate")})...)
	t.Mirrors = "IndicQuest §5 (the 17–25 pp lexical shortfall)"
	type cell struct{ model, lang string }
	byCell := map[cell][]study.Row{}
	for _, r := range rows {
		if r.Failed || (r.Verdict != study.VerdictCorrect && r.Verdict != study.VerdictIncorrect) {
			continue
		}
		byCell[cell{r.Key.Model, r.Key.Language}] = append(byCell[cell{r.Key.Model, r.Key.Language}], r)
	}
	cells := study.SortedKeysBy(byCell, func(c cell) []string { return []string{c.model, c.lang} })
	for _, c := range cells {
		rs := byCell[c]
		for _, crit := range lexicalMetrics() {
			var a, l []string
			jk, ck := 0, 0
			for ri := range rs {
				r := &rs[ri]
				a, l = append(a, tables.Label(r.Correct)), append(l, tables.Label(crit.Of(r)))
				if r.Correct {
					jk++
				}
				if crit.Of(r) {
					ck++
				}
			}
			kappa, agree := stats.CohenKappa(a, l)
			n := float64(len(rs))
			t.Add(c.model, c.lang, crit.Name, len(rs), agree, kappa, float64(jk)/n, float64(ck)/n, float64(jk-ck)/n)
		}
	}
	return t
}
