package indicklar

import (
	"github.com/bhashalab/bhasha/analysis/tables"
)

// AccCLCWide is IndicKLAR's Tables 2, 8 and 9: per model × strategy, each
// language's accuracy (metric correct) and native CLC(L) side by side,
// languages as column groups ("<language>_acc", "<language>_clc"), for
// one form.
func AccCLCWide(accuracy, clcMeans *tables.Table, form string) *tables.Table {
	long := tables.New("long", "", tables.Key("model"), key("strategy"), tables.Key("language"), tables.Text("measure", ""), tables.Statistic("value", ""))
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
func CorrelationMarks(tok *tables.Table) *tables.Table {
	t := tables.New("tokenization_marks", "Pearson r and Spearman ρ of prompt length against accuracy with significance marks",
		tables.Key("model"), tables.Count("languages", "languages correlated"),
		tables.Statistic("pearson_r", "Pearson correlation of prompt length with accuracy (r) and its p-value"),
		tables.Text("pearson_sig", "Stars of pearson_p (*** < 0.001, ** < 0.01, * < 0.05)"),
		tables.Statistic("spearman_rho", "Spearman rank correlation (ρ) and its p-value"),
		tables.Text("spearman_sig", "Stars of spearman_p"))
	t.Mirrors, t.Headline = "IndicKLAR Table 10 (layout)", true
	for _, r := range tok.Rows {
		if tok.Str(r, "language") != "*" {
			continue
		}
		t.Add(tok.Str(r, "model"), int(tok.Num(r, "n")), tok.Num(r, "pearson_r"), tables.Stars(tok.Num(r, "pearson_p")), tok.Num(r, "spearman_rho"), tables.Stars(tok.Num(r, "spearman_p")))
	}
	return t
}
