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
	c := sharedColumn(name)
	return c, c.Name != ""
}

func sharedColumn(name string) Column {
	switch name {
	case "model":
		return Text(name, "the model's name in the experiment")
	case "study":
		return Text(name, "the study, as registered")
	case "language":
		return Text(name, "ISO 639-3 code of the language asked (* pools languages)")
	case "form":
		return Text(name, "question form (the study's), or empty")
	case "strategy":
		return Text(name, "prompting strategy or answer format (the study's), or empty")
	case "condition":
		return Text(name, "the study's condition of the prompt, or empty")
	case "metric":
		return Text(name, "the criterion counted (scoring lists each rule)")
	case "k":
		return Count(name, "answers meeting the metric")
	case "n":
		return Count(name, "answers asked: failed requests count as wrong answers, as the authors' scorers count a missing one")
	case "rate":
		return Proportion(name, "k / n")
	case "ci_lo":
		return Lower(name, "lower bound of the 95% interval of rate")
	case "ci_hi":
		return Upper(name, "upper bound of the 95% interval of rate")
	case "failed":
		return Count(name, "of n, requests that failed or second stages withheld after a failed first: counted as wrong")
	case "pairs":
		return Count(name, "items answered under both (paired)")
	case "mcnemar_p":
		return PValue(name, "McNemar's exact two-sided p-value")
	case "p_holm":
		return PValue(name, "p-value adjusted by Holm over the tests of its family (the table's tests of the model, unless a family column says)")
	case "p_bh":
		return PValue(name, "p-value adjusted by Benjamini–Hochberg over the tests of its family")
	case "z":
		return Statistic(name, "two-proportion z statistic")
	case "p_twoprop":
		return PValue(name, "two-sided p-value of the two-proportion z test")
	case "p_fisher":
		return PValue(name, "two-sided p-value of Fisher's exact test")
	case "diff":
		return Statistic(name, "difference of the two rates")
	case "diff_lo":
		return Lower(name, "lower bound of the 95% interval of diff")
	case "diff_hi":
		return Upper(name, "upper bound of the 95% interval of diff")
	case "agree":
		return Proportion(name, "share of answers on which the two verdicts agree")
	case "kappa":
		return Statistic(name, "Cohen's κ between the two verdicts")
	}
	return Column{}
}

// Keys declares the shared columns named (Key).
func Keys(names ...string) []Column {
	out := make([]Column, len(names))
	for i, n := range names {
		out[i] = Key(n)
	}
	return out
}
