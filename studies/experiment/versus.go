package experiment

import (
	"encoding/csv"
	"fmt"
	"io/fs"
	"math"
	"strconv"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// PublishedValue is one number a paper printed.
type PublishedValue struct {
	Paper, Where, Model, Language, Form, Strategy, Condition, Metric, Note string
	Value                                                                  float64
}

// Publisher is implemented by a plan whose paper printed numbers a run
// can be set beside (VersusPaper).
type Publisher interface {
	Published() ([]PublishedValue, error)
}

// ReadPublished reads the published numbers of the CSV files of fsys that
// match pattern (fs.Glob), in the files' order: the columns paper, where,
// model (the id the paper's model is served under), language, form,
// strategy, condition, metric, value and note, under a header line. An
// error names the file, its line and field.
func ReadPublished(fsys fs.FS, pattern string) ([]PublishedValue, error) {
	files, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, fmt.Errorf("reading published numbers %s: %w", pattern, err)
	}
	var out []PublishedValue
	for _, f := range files {
		r, err := fsys.Open(f)
		if err != nil {
			return nil, fmt.Errorf("reading published numbers: %w", err)
		}
		recs, err := csv.NewReader(r).ReadAll()
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for i, r := range recs[min(1, len(recs)):] {
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

// VersusPaper is the versus_paper table of the plan's published numbers
// (Publisher) beside the run's tables ts (Versus, its accuracy and
// clc_mean tables; the experiment's models by served name); nil when the
// plan publishes none.
func (e *Experiment) VersusPaper(ts []*tables.Table) (*tables.Table, error) {
	p, ok := e.plan.(Publisher)
	if !ok {
		return nil, nil
	}
	pub, err := p.Published()
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	served := map[string]string{}
	for _, m := range e.Models {
		served[m.Name] = m.ServedName
	}
	var acc, clc *tables.Table
	for _, t := range ts {
		switch t.Name {
		case "accuracy":
			acc = t
		case "clc_mean":
			clc = t
		}
	}
	return Versus(pub, acc, clc, served), nil
}

// Versus sets the papers' published numbers beside the run's: for every
// published value whose model (by served name), language, form, strategy,
// condition and metric the run measured, the run's rate with its 95%
// interval and n (accuracy), or its CLC(L) (clcMean, for the metric
// "clc"), the difference run − published, and whether the published
// value lies inside the run's interval. served maps the experiment's
// model names to served names; accuracy or clcMean may be nil.
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
