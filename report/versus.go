package report

import (
	"embed"
	"encoding/csv"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/analysis/tables"
)

//go:embed published/*.csv
var publishedFS embed.FS

// PublishedValue is one number a paper printed.
type PublishedValue struct {
	Paper, Where, Model, Language, Form, Strategy, Condition, Metric, Note string
	Value                                                                  float64
}

// Published reads the numbers transcribed from the three papers
// (report/published/*.csv; see its SOURCE.md).
func Published() ([]PublishedValue, error) {
	files, _ := fs.Glob(publishedFS, "published/*.csv")
	var out []PublishedValue
	for _, f := range files {
		b, _ := publishedFS.ReadFile(f)
		recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for i, r := range recs[1:] {
			if len(r) != 10 {
				return nil, fmt.Errorf("%s line %d: %d fields, want 10", f, i+2, len(r))
			}
			v, err := strconv.ParseFloat(r[8], 64)
			if err != nil {
				return nil, fmt.Errorf("%s line %d field \"value\": %w", f, i+2, err)
			}
			out = append(out, PublishedValue{Paper: r[0], Where: r[1], Model: r[2], Language: r[3], Form: r[4], Strategy: r[5], Condition: r[6], Metric: r[7], Value: v, Note: r[9]})
		}
	}
	return out, nil
}

// Versus sets the papers' published numbers beside the run's: for every
// published value whose model (by served name), language, form, strategy,
// condition and metric the run measured, the run's rate with its 95%
// interval and n (accuracy), or its CLC(L) (clc_mean), the difference
// run − published, and whether the published value lies inside the run's
// interval. served maps the experiment's model names to served names.
func Versus(pub []PublishedValue, accuracy, clcMean *tables.Table, served map[string]string) *tables.Table {
	t := &tables.Table{Name: "versus_paper", Description: "the papers' published numbers beside the run's: the run's value with its interval and n, the difference, and whether the published value lies inside the interval",
		Header: []string{"paper", "where", "model", "language", "form", "strategy", "condition", "metric", "published", "run", "ci_lo", "ci_hi", "n", "diff", "inside", "note"},
		ColumnDocs: map[string]string{"where": "the table or section that prints the number", "published": "the number the paper prints",
			"run": "the run's value (rate or CLC(L))", "inside": "the published value lies inside the run's 95% interval (empty for CLC, which has none)",
			"paper": "the paper", "note": "how the published row was matched"}, Headline: true}
	if accuracy != nil {
		t.Simulated = accuracy.Simulated
	}
	byServed := map[string][]string{}
	for name, s := range served {
		byServed[s] = append(byServed[s], name)
	}
	for _, p := range pub {
		for _, model := range byServed[p.Model] {
			switch p.Metric {
			case "clc":
				if clcMean == nil {
					continue
				}
				for _, r := range clcMean.Rows {
					if clcMean.Str(r, "model") == model && clcMean.Str(r, "strategy") == p.Strategy && clcMean.Str(r, "form") == p.Form && clcMean.Str(r, "language") == p.Language {
						v := clcMean.Num(r, "mean_jaccard")
						t.Rows = append(t.Rows, []any{p.Paper, p.Where, model, p.Language, p.Form, p.Strategy, p.Condition, p.Metric, p.Value, v,
							math.NaN(), math.NaN(), int(clcMean.Num(r, "others")), v - p.Value, "", p.Note})
					}
				}
			default:
				if accuracy == nil {
					continue
				}
				for _, r := range accuracy.Rows {
					if accuracy.Str(r, "model") == model && accuracy.Str(r, "metric") == p.Metric && accuracy.Str(r, "language") == p.Language &&
						accuracy.Str(r, "form") == p.Form && (p.Strategy == "" || accuracy.Str(r, "strategy") == p.Strategy) && accuracy.Str(r, "condition") == p.Condition {
						v, lo, hi := accuracy.Num(r, "rate"), accuracy.Num(r, "ci_lo"), accuracy.Num(r, "ci_hi")
						t.Rows = append(t.Rows, []any{p.Paper, p.Where, model, p.Language, p.Form, accuracy.Str(r, "strategy"), p.Condition, p.Metric, p.Value, v,
							lo, hi, int(accuracy.Num(r, "n")), v - p.Value, p.Value >= lo && p.Value <= hi, p.Note})
					}
				}
			}
		}
	}
	return t
}
