package tables

import "fmt"

// Key returns the declaration of a column that many tables share, with
// the one description it has wherever it appears: model, study, language,
// form, strategy, condition, metric, k, n, rate, ci_lo, ci_hi, failed,
// pairs, mcnemar_p, p_holm, p_bh, z, p_twoprop, p_fisher, diff, diff_lo,
// diff_hi, agree and kappa. A table whose column of one of these names
// means something else declares it itself. An unknown name is a
// programming error and panics.
func Key(name string) Column {
	c, ok := shared(name)
	if !ok {
		panic(fmt.Sprintf("tables: no shared column %q", name))
	}
	return c
}

// shared is the declaration of a shared column (Key), and whether name is one.
func shared(name string) (Column, bool) {
	for _, c := range []Column{
		Text("model", "the model's name in the experiment"),
		Text("study", "the study, as registered"),
		Text("language", "ISO 639-3 code of the language asked (* pools languages)"),
		Text("form", "question form (the study's), or empty"),
		Text("strategy", "prompting strategy or answer format (the study's), or empty"),
		Text("condition", "the study's condition of the prompt, or empty"),
		Text("metric", "the criterion counted (scoring lists each rule)"),
		Count("k", "answers meeting the metric"),
		Count("n", "answers asked: failed requests count as wrong answers, as the authors' scorers count a missing one"),
		Proportion("rate", "k / n"),
		Lower("ci_lo", "lower bound of the 95% interval of rate"),
		Upper("ci_hi", "upper bound of the 95% interval of rate"),
		Count("failed", "of n, requests that failed or second stages withheld after a failed first: counted as wrong"),
		Count("pairs", "items answered under both (paired)"),
		PValue("mcnemar_p", "McNemar's exact two-sided p-value"),
		PValue("p_holm", "p-value adjusted by Holm over the tests of its family (the table's tests of the model, unless a family column says)"),
		PValue("p_bh", "p-value adjusted by Benjamini–Hochberg over the tests of its family"),
		Statistic("z", "two-proportion z statistic"),
		PValue("p_twoprop", "two-sided p-value of the two-proportion z test"),
		PValue("p_fisher", "two-sided p-value of Fisher's exact test"),
		Statistic("diff", "difference of the two rates"),
		Lower("diff_lo", "lower bound of the 95% interval of diff"),
		Upper("diff_hi", "upper bound of the 95% interval of diff"),
		Proportion("agree", "share of answers on which the two verdicts agree"),
		Statistic("kappa", "Cohen's κ between the two verdicts"),
	} {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Keys declares the shared columns named (Key).
func Keys(names ...string) []Column {
	out := make([]Column, len(names))
	for i, n := range names {
		out[i] = Key(n)
	}
	return out
}
