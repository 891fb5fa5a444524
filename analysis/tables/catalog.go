package tables

// Info describes one report table: what it holds and which table or
// figure of the studies' papers it mirrors ("" when it is Bhasha's own).
type Info struct {
	Name        string
	Description string
	Mirrors     string
}

// Catalog lists every table a report can write, in report order.
func Catalog() []Info {
	return []Info{
		{"accuracy", "every rate per model × language × form × strategy × condition, with k, n, a 95% Wilson interval and the failed requests", "IndicKLAR Tables 2, 7–9 (ACC); IndicQuest Table 4; distractor study Tables 2–3"},
		{"scoring", "each criterion's rule and the normalisation steps it applies", ""},
		{"scaling", "Spearman's ρ of model size against accuracy (models with size_b)", "IndicKLAR §5.3 / Fig. 5"},
		{"model_families", "accuracy by model family over size, pooled over languages (models with family:)", "IndicKLAR §5.3 / Fig. 5"},
		{"human_agreement", "each criterion, named as what it compares (llm_judge, exact_match, ...), against human labels per model × language × condition: n, agreement, Cohen's κ", "IndicQuest §5 (judge validation)"},
		{"clc", "cross-lingual consistency: Jaccard of correct-item sets for every language/form pair, with its scope (the shared form, or cross-form)", "IndicKLAR Fig. 4 (pairs)"},
		{"clc_mean", "each language's mean Jaccard against the other languages of its form (the authors' CLC(L))", "IndicKLAR Tables 2, 7–9 (CLC)"},
		{"clc_overall", "the mean of CLC(L) over a form's languages, per model × strategy × form (forms never mixed)", "IndicKLAR §5.5, A.1"},
		{"clc_matrix", "pairwise CLC matrix per model and form: reference above, strategy below the diagonal", "IndicKLAR Fig. 4"},
		{"strategy_tests", "each strategy against the reference on the same items: McNemar exact p, Holm and BH, difference interval", "IndicKLAR Fig. 3 (significance)"},
		{"form_gaps", "native, code-mixed and English accuracy on the same items, gaps with intervals and McNemar p", "IndicKLAR Fig. 2 / §5.1"},
		{"form_gap_summary", "the form gaps (English − native, English − code-mixed, code-mixed − native) averaged over languages, per model and over models, with bootstrap intervals", "IndicKLAR §5.1 / Fig. 2"},
		{"flip_points", "where answers flip from wrong to right along Baseline → TinT-CM → TinT-EN and native → code-mixed → English", "IndicKLAR Table 15 / Fig. 8"},
		{"families", "accuracy pooled by language family", "IndicKLAR §5.4"},
		{"family_tests", "Indo-Aryan against Dravidian accuracy levels: difference interval, z and Fisher p", "IndicKLAR §5.4 (levels; the section's claim is about gains: family_gain_tests)"},
		{"family_gain_tests", "Indo-Aryan against Dravidian on the strategies' gains (accuracy and CLC): mean gains, difference, exact permutation p; medians beside", "IndicKLAR §5.4"},
		{"relations", "accuracy per relation", "IndicKLAR Fig. 6 (radar)"},
		{"language_tests", "a strategy's gains across languages (accuracy and CLC): mean with bootstrap interval and permutation p as A.3/A.4, median and Wilcoxon beside, languages with a positive gain", "IndicKLAR A.3/A.4"},
		{"strategy_families", "each strategy family's variants (1Step, 2Step, TinT, CoT): mean accuracy and CLC gains over the reference across language × model cells with bootstrap intervals, against latency; the best variant marked", "IndicKLAR A.3"},
		{"tokenization", "prompt length in tokens against accuracy: Pearson r and Spearman ρ", "IndicKLAR Table 10"},
		{"latency", "end-to-end client-observed latency per answer (every stage summed, under the run's concurrency; the paper timed offline vLLM batches): mean, median, p90, with accuracy", "IndicKLAR Table 6"},
		{"condition_tests", "each distractor condition against clean on the same items: paired difference interval, McNemar p, Holm and BH per model and metric (z and Fisher with scoring.unpaired_tests)", "distractor study Table 2"},
		{"script_decomposition", "the error rise split into right-but-wrong-script answers and real errors (semantic judge)", "distractor study Tables 3–4"},
		{"judge_by_script", "judge verdicts by the main script of the judged answer", ""},
		{"judge_agreement", "the judge against exact substring, word overlap and transliteration-aware match: κ, agreement, lexical shortfall", "IndicQuest Table 5"},
		{"judge_grades", "a graded judge's scores per criterion (IndicQuest v1: five criteria and Overall): mean with interval, share graded 3 or more", "IndicQuest v1 (eval_prompt.txt)"},
		{"domains", "accuracy per domain and protocol", "IndicQuest Table 7"},
		{"protocol_rankings", "agreement of the protocols' model rankings (Kendall τ), pooled and per language", "IndicQuest §5"},
		{"model_gaps", "every two models on the same questions per language and protocol: paired difference with interval, McNemar p", "IndicQuest §5 (model gaps)"},
		{"sensitivity", "the same answers re-scored under each named option (lenient JSON, multilingual abstention, full normalisation, transliteration): both rates, the paired difference with its interval, answers gained and lost, McNemar p", ""},
		{"conclusions", "each of the paper's conclusions (TinT beats Baseline, the Hindi note raises hallucination, lexical criteria fall short of the judge, ...) per model, under the rule in force and under each named alternative: the effect and whether it still holds", ""},
		{"comparison", "two runs of the same items side by side (an option that changes the requests): accuracies, paired difference with interval, McNemar p (bhasha.Compare)", ""},
		{"dataset_stats", "the items asked per form and language: instances, average question and answer length in words", "IndicKLAR Table 5"},
		{"acc_clc_wide", "accuracy and CLC(L) per language side by side, per model × strategy, native questions", "IndicKLAR Tables 2, 8, 9 (layout)"},
		{"tokenization_marks", "Pearson r and Spearman ρ of prompt length against accuracy with significance marks", "IndicKLAR Table 10 (layout)"},
		{"flip_points_wide", "flip points per model × language, each step's flipped answers and share", "IndicKLAR Table 15 (layout)"},
		{"conditions_wide", "accuracy, abstention, hallucination proxy and script switch per model, conditions as columns", "distractor study Tables 2–4 (layout)"},
		{"domains_wide", "accuracy per language and domain, models × protocols as columns", "IndicQuest Tables 4 and 7 (layout)"},
		{"requests", "a run without gold answers per model × strategy × condition: answers, failures, empty and cached answers, latency, prompt tokens", ""},
		{"answers", "one row per scored answer: raw and normalised prediction, method, every criterion, script, verdicts", ""},
	}
}

// InfoOf returns the catalogue entry of a table name.
func InfoOf(name string) (Info, bool) {
	for _, in := range Catalog() {
		if in.Name == name {
			return in, true
		}
	}
	return Info{}, false
}
