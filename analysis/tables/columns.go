package tables

import "strings"

// ColumnDoc describes a column of a built-in table: what its cells hold,
// by the name conventions every table follows (see KindOf), with the
// meanings that differ between tables (a, b, diff, k_*) given per table.
// It returns "" for a name it does not know.
func ColumnDoc(table, name string) string {
	switch table + "." + name {
	case "strategy_tests.b":
		return "discordant pairs: right under the reference, wrong under the strategy"
	case "strategy_tests.c":
		return "discordant pairs: wrong under the reference, right under the strategy"
	case "language_tests.measure", "family_gain_tests.measure":
		return "acc (the accuracy gain on the same native items) or clc (the gain in native CLC(L))"
	case "language_tests.languages":
		return "languages with a gain"
	case "sensitivity.diff":
		return "rate_alt − rate on the same answers (paired)"
	case "strategy_tests.diff", "language_tests.median_gain":
		return "the strategy's accuracy minus the reference's on the same items"
	case "condition_tests.diff":
		return "the condition's rate minus the clean rate on the same items (paired)"
	case "condition_tests.b":
		return "items meeting the metric clean only"
	case "condition_tests.c":
		return "items meeting the metric under the condition only"
	case "condition_tests.pairs":
		return "items asked both clean and under the condition"
	case "condition_tests.k_clean_all", "condition_tests.k_all":
		return "answers meeting the metric over all answers (clean, condition), for the unpaired tests"
	case "family":
		return "the multiple-testing family the Holm and BH adjustments run over, and its size"
	case "family_tests.diff":
		return "Indo-Aryan rate minus Dravidian rate (levels)"
	case "family_gain_tests.diff":
		return "Indo-Aryan mean gain minus Dravidian mean gain"
	case "family_gain_tests.n_indo_aryan", "family_gain_tests.n_dravidian":
		return "languages of the family with a gain"
	case "form_gaps.gap":
		return "accuracy of a minus accuracy of b on the same items"
	case "protocol_rankings.a", "protocol_rankings.b":
		return "a scoring protocol (judge, substring, overlap)"
	case "protocol_rankings.language":
		return "the language whose models are ranked (* pools model × language cells)"
	case "model_gaps.a", "model_gaps.b":
		return "the models compared (diff = accuracy of a − accuracy of b)"
	case "model_gaps.pairs":
		return "questions both models were asked"
	case "model_gaps.diff":
		return "acc_a − acc_b on the same questions (paired)"
	case "clc_matrix.upper":
		return "the reference strategy, whose Jaccard indices fill the upper triangle (as Fig. 4)"
	case "clc_matrix.lower":
		return "the strategy whose Jaccard indices fill the lower triangle"
	case "clc_matrix.row", "clc_matrix.col":
		return "a language of the matrix's form"
	case "clc_mean.others":
		return "other languages of the same form"
	case "flip_points.from":
		return "answers wrong at the step's start"
	case "scaling.p", "protocol_rankings.p":
		return "two-sided p-value of the rank correlation"
	}
	if d := columnDocs(name); d != "" {
		return d
	}
	for _, sfx := range []struct{ suffix, doc string }{
		{"_lo", "lower bound of the 95% interval of "}, {"_hi", "upper bound of the 95% interval of "},
	} {
		if base, ok := strings.CutSuffix(name, sfx.suffix); ok {
			if base == "ci" {
				base = "rate"
			}
			return sfx.doc + base
		}
	}
	for _, pfx := range []struct{ prefix, doc string }{
		{"mean_gain_", "mean gain of the family: "}, {"median_gain_", "median gain of the family: "},
		{"k_", "answers right, of "}, {"n_", "answers scored, of "}, {"acc_", "accuracy of "}, {"correct_", "items right under "},
		{"b_only_", "items right only under "}, {"sw_clean_", "switched answers whose clean answer was: "}, {"judged_", "switched answers the semantic judge called "},
	} {
		if rest, ok := strings.CutPrefix(name, pfx.prefix); ok {
			return pfx.doc + strings.ReplaceAll(rest, "_", " ")
		}
	}
	return ""
}

func columnDocs(name string) string {
	switch name {
	case "model":
		return "the model's name in the experiment"
	case "study":
		return "the study (indicklar, indicquest, mdi, or a registered one)"
	case "language":
		return "ISO 639-3 code of the language asked (* pools languages)"
	case "form":
		return "question form: native, code-mixed or english"
	case "strategy":
		return "prompting strategy (IndicKLAR), answer format (distractor study: qa, mc1), or empty"
	case "condition":
		return "distractor condition (clean, es, hi, zh, *_long, paragraph), or empty"
	case "metric":
		return "the criterion counted (scoring lists each rule)"
	case "k":
		return "answers meeting the metric"
	case "n":
		return "answers asked: failed requests count as wrong answers, as the authors' scorers count a missing one"
	case "rate", "accuracy":
		return "k / n"
	case "failed":
		return "of n, requests that failed or second stages withheld after a failed first: counted as wrong"
	case "criterion":
		return "a scoring criterion (judge_grades: the graded judge's criterion)"
	case "rule":
		return "how the criterion decides"
	case "normalization":
		return "the normalisation steps applied before comparing"
	case "a":
		return "the first unit (language/form) of the pair"
	case "b":
		return "the second unit (language/form) of the pair"
	case "items":
		return "items both units asked"
	case "intersection":
		return "items right under both"
	case "union":
		return "items right under either"
	case "jaccard":
		return "intersection / union (cross-lingual consistency)"
	case "unit":
		return "a language/form unit"
	case "scope":
		return "the form both units share, or cross-form"
	case "clc":
		return "mean of CLC(L) over the form's languages"
	case "others":
		return "units it is compared with"
	case "mean_jaccard":
		return "mean Jaccard index against the other units (the authors' CLC(L))"
	case "reference":
		return "the strategy compared against"
	case "pairs":
		return "items answered under both (paired)"
	case "ref_k":
		return "items right under the reference"
	case "diff":
		return "difference of the two rates"
	case "gap":
		return "difference of the two accuracies"
	case "mcnemar_p":
		return "McNemar's exact two-sided p-value"
	case "p_holm":
		return "p-value adjusted by Holm over the tests of its family (the table's tests of the model, unless a family column says)"
	case "p_bh":
		return "p-value adjusted by Benjamini–Hochberg over the tests of its family"
	case "z":
		return "two-proportion z statistic"
	case "p_twoprop":
		return "two-sided p-value of the two-proportion z test"
	case "p_fisher":
		return "two-sided p-value of Fisher's exact test"
	case "path":
		return "the sequence of strategies or forms followed"
	case "step":
		return "the step along the path"
	case "flipped":
		return "answers that turn from wrong to right at the step"
	case "share":
		return "flipped / from"
	case "family":
		return "language family"
	case "languages":
		return "languages pooled or tested"
	case "relation":
		return "the fact's relation (KLAR)"
	case "median_gain":
		return "median per-language gain (the robust variant)"
	case "mean_gain":
		return "mean per-language gain (as the paper states it)"
	case "positive":
		return "languages with a positive gain"
	case "perm_p":
		return "two-sided permutation p (exact sign flips up to 20 languages, else 10,000 random ones)"
	case "wilcoxon_T":
		return "Wilcoxon signed-rank statistic"
	case "wilcoxon_p":
		return "two-sided p-value of the Wilcoxon signed-rank test"
	case "method":
		return "how the test or extraction was made"
	case "mean_prompt_tokens":
		return "mean prompt length in tokens"
	case "source":
		return "where token counts come from: server (usage.prompt_tokens) or offline (tokenizer.json)"
	case "pearson_r", "pearson_p":
		return "Pearson correlation of prompt length with accuracy (r) and its p-value"
	case "spearman_rho", "spearman_p":
		return "Spearman rank correlation (ρ) and its p-value"
	case "n_timed":
		return "answers timed (cached answers excluded)"
	case "mean_ms", "median_ms", "p90_ms":
		return "client-observed latency in milliseconds (mean, median, 90th percentile)"
	case "models":
		return "models with a size"
	case "p":
		return "two-sided p-value"
	case "sizes":
		return "model sizes in billions of parameters"
	case "accuracies":
		return "the models' accuracies, in the order of sizes"
	case "agree":
		return "share of answers on which the two verdicts agree"
	case "kappa":
		return "Cohen's κ between the two verdicts"
	case "judge_rate":
		return "share judged correct"
	case "criterion_rate":
		return "share correct under the lexical criterion"
	case "shortfall":
		return "judge_rate − criterion_rate"
	case "script":
		return "main script of the answer"
	case "verdict":
		return "the judge's verdict"
	case "count":
		return "answers"
	case "domain":
		return "IndicQuest domain (* weighs domains by size)"
	case "protocol":
		return "scoring protocol: judge, substring or overlap"
	case "cells":
		return "model × language cells (or models) ranked"
	case "kendall_tau":
		return "Kendall's τ between the two rankings"
	case "empty":
		return "answers with an empty text"
	case "cached":
		return "answers served from the response cache"
	case "em":
		return "answers exact-match correct"
	case "abstain":
		return "answers that abstain (not correct)"
	case "halluc":
		return "hallucination proxy: n − em − abstain"
	case "halluc_rate":
		return "halluc / n"
	case "switched":
		return "answers with a Devanagari or CJK character"
	case "switch_rate":
		return "switched / n"
	case "recovered_of_clean_correct":
		return "switched answers counted in halluc, to items right on the clean prompt, judged CORRECT (the paper's recovered)"
	case "recovery_rate":
		return "recovered_of_clean_correct / sw_clean_correct"
	case "recovery_lo", "recovery_hi":
		return "95% Wilson interval of recovery_rate"
	case "adj_accuracy":
		return "(em + recovered_of_clean_correct) / n (the paper's rule)"
	case "adj_halluc":
		return "(halluc − recovered_of_clean_correct) / n (the paper's rule)"
	case "inflation":
		return "halluc / (halluc − recovered_of_clean_correct)"
	case "rise", "real_rise":
		return "raw (rise) and the paper's adjusted (real_rise) hallucination rate minus the clean one"
	case "script_share":
		return "(rise − real_rise) / rise: the share of the rise due to script (the paper's rule)"
	case "broad_recovered":
		return "switched answers counted in halluc that the judge calls CORRECT, whatever the clean outcome"
	case "broad_script_abstain":
		return "switched answers counted in halluc that the judge calls ABSTAIN (abstentions the phrases missed)"
	case "broad_adj_halluc":
		return "(halluc − broad_recovered − broad_script_abstain) / n (Bhasha's broader rule)"
	case "broad_adj_accuracy":
		return "(em + broad_recovered) / n"
	case "broad_inflation":
		return "halluc / (halluc − broad_recovered − broad_script_abstain)"
	case "broad_real_rise":
		return "broad_adj_halluc minus the clean one (same rule)"
	case "broad_script_share":
		return "(rise − broad_real_rise) / rise"
	case "mean":
		return "mean grade (1–5)"
	case "mean_lo", "mean_hi":
		return "95% normal interval of the mean grade"
	case "share_ge3":
		return "share of answers graded 3 or more"
	case "form_gap_summary.a", "form_gap_summary.b":
		return "the forms compared (gap = accuracy of a − accuracy of b)"
	case "form_gap_summary.cells":
		return "language (× model) cells averaged"
	case "mean_gap":
		return "mean of the per-language gaps"
	case "strategy_families.family":
		return "the strategy family (1Step, 2Step, TinT, CoT)"
	case "best":
		return "the family's variant with the highest mean accuracy gain"
	case "mean_acc_gain", "mean_clc_gain":
		return "mean gain over the reference across language × model cells, in accuracy or in native CLC(L)"
	case "clc_cells":
		return "language × model cells with a CLC gain"
	case "ref_mean_ms":
		return "the reference strategy's mean end-to-end latency (ms)"
	case "strategy_families.cells":
		return "language × model cells with an accuracy gain"
	case "model_families.family":
		return "the model family (family: of the model)"
	case "size_b":
		return "the model's size in billions of parameters (size_b:)"
	case "comparison.diff":
		return "acc_b − acc_a on the items both runs answered (paired)"
	case "comparison.pairs":
		return "items both runs answered"
	case "clc_ref", "strategy_tests.clc":
		return "CLC(L) of the language under the reference (clc_ref) and the strategy (clc), same form"
	case "clc_gain":
		return "clc − clc_ref"
	case "conclusions.n":
		return "answers the claim compares (both sides)"
	case "claim":
		return "the paper's conclusion, as an effect that is positive when it holds"
	case "effect", "effect_alt":
		return "the claim's effect under the rule in force (effect) and under the alternative (effect_alt)"
	case "holds", "holds_alt":
		return "the effect is positive: the conclusion holds under that rule"
	case "instances":
		return "items asked in this form and language"
	case "avg_query_words", "avg_answer_words":
		return "mean length in white-space separated words of the questions (query) and gold answers"
	case "measure":
		return "what the alternative changes: correct, abstain, hallucination, ..."
	case "alternative":
		return "the named alternative rule"
	case "option":
		return "how the alternative is switched on (YAML key), or (beside) when always reported"
	case "k_alt":
		return "answers meeting the measure under the alternative"
	case "rate_alt":
		return "k_alt / n"
	case "gained":
		return "answers meeting the measure only under the alternative"
	case "lost":
		return "answers meeting the measure only under the rule in force"
	case "item":
		return "the item's id in its dataset"
	case "role":
		return "what the request asked: empty (the answer), translation, judge:<model>, choice:<n>"
	case "gold":
		return "the gold answer"
	case "prediction":
		return "the answer as extracted"
	case "prediction_norm":
		return "the prediction normalised (scoring lists the steps)"
	case "correct":
		return "the study's strict criterion"
	case "lenient":
		return "the lenient criterion (mc1: argmax)"
	case "translit":
		return "transliteration-aware match"
	case "substring", "overlap":
		return "IndicQuest's lexical criteria: exact substring, word overlap"
	case "judge":
		return "the IndicQuest judge's verdict"
	case "semantic":
		return "the semantic judge's verdict on a switched answer"
	case "distractor_switch":
		return "a Devanagari or CJK character in the answer"
	case "withheld":
		return "a second stage never sent because its first stage failed (counted as a failed, wrong answer)"
	case "empty_response":
		return "the model produced an empty text"
	}
	return ""
}
