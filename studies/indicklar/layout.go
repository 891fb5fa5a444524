package indicklar

import (
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/study"
)

// AccCLCWide is IndicKLAR's Tables 2, 8 and 9: per model × strategy, each
// language's accuracy (metric correct) and native CLC(L) side by side,
// languages as column groups ("<language>_acc", "<language>_clc"), for
// one form.
func AccCLCWide(accuracy, clcMeans *study.Table, form string) *study.Table {
	long := study.NewTable("long", "", study.KeyColumn("model"), key("strategy"), study.KeyColumn("language"), study.TextColumn("measure", ""), study.StatisticColumn("value", ""))
	for _, r := range accuracy.Rows {
		if accuracy.Str(r, "metric") == "correct" && accuracy.Str(r, "form") == form {
			long.Add(accuracy.Str(r, "model"), accuracy.Str(r, "strategy"), accuracy.Str(r, "language"), "acc", accuracy.Num(r, "rate"))
		}
	}
	for _, r := range clcMeans.Rows {
		if clcMeans.Str(r, "form") == form {
			long.Add(clcMeans.Str(r, "model"), clcMeans.Str(r, "strategy"), clcMeans.Str(r, "language"), "clc", clcMeans.Num(r, "mean_jaccard"))
		}
	}
	t := tables.Pivot("acc_clc_wide", "accuracy and CLC(L) per language side by side, per model × strategy, native questions", long, nil,
		[]string{"model", "strategy"}, []string{"language", "measure"}, []string{"value"}, nil)
	t.Mirrors, t.Headline = "IndicKLAR Tables 2, 8, 9 (layout)", true
	return t
}

// CorrelationMarks is IndicKLAR's Table 10: per model, Pearson's r and
// Spearman's ρ of prompt length against accuracy across languages, each
// with its significance marks (Stars), from the tokenization table.
func CorrelationMarks(tok *study.Table) *study.Table {
	t := study.NewTable("tokenization_marks", "Pearson r and Spearman ρ of prompt length against accuracy with significance marks",
		study.KeyColumn("model"), study.CountColumn("languages", "languages correlated"),
		study.StatisticColumn("pearson_r", "Pearson correlation of prompt length with accuracy (r) and its p-value"),
		study.TextColumn("pearson_sig", "Stars of pearson_p (*** < 0.001, ** < 0.01, * < 0.05)"),
		study.StatisticColumn("spearman_rho", "Spearman rank correlation (ρ) and its p-value"),
		study.TextColumn("spearman_sig", "Stars of spearman_p"))
	t.Mirrors, t.Headline = "IndicKLAR Table 10 (layout)", true
	for _, r := range tok.Rows {
		if tok.Str(r, "language") != "*" {
			continue
		}
		t.Add(tok.Str(r, "model"), int(tok.Num(r, "n")), tok.Num(r, "pearson_r"), tables.Stars(tok.Num(r, "pearson_p")), tok.Num(r, "spearman_rho"), tables.Stars(tok.Num(r, "spearman_p")))
	}
	return t
}
