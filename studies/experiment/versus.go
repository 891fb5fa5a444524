package experiment

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/analysis/tables"
)

// PublishedValue is one number a paper printed.
type PublishedValue struct {
	Paper, Where, Model, Language, Form, Strategy, Condition, Metric, Note string
	Value                                                                  float64
	// N is the paper-side n the number is out of (0: the text gives none).
	N int
	// Others is, for a CLC(L), the number of other languages the paper's
	// mean runs over (0: the text does not say).
	Others int
	// Kind says what sort of number it is (PublishedKinds).
	Kind string
	// Table names the run's table that holds the number, Metric then
	// being its column; empty: the accuracy table (Metric its metric
	// column's value), or clc_mean for the metric "clc".
	Table string
	// Keys are further key columns the run's row must hold (col=value;
	// a value "@id" is the served id of a model, matched by the run's
	// model name, the first in order when several serve it).
	Keys [][2]string
	// Reading names one of several readings of an ambiguous row (e.g.
	// which baseline a table's "Baseline" is); empty when there is one.
	Reading string
}

// PublishedKinds are the kinds of published number, each with what it
// is; a published file's kind column takes one of them.
var PublishedKinds = map[string]string{
	"rate":        "a proportion in [0, 1] (k / n); with n, it carries a 95% Wilson interval",
	"clc":         "a mean Jaccard index of correct-item sets (CLC), no interval",
	"gain":        "a difference of two rates or CLCs, in [−1, 1] (points / 100)",
	"gain_bound":  "a bound the text states for a gain (\"within ~0.05\", \"up to ~0.50\")",
	"upper_bound": "a bound the text states for a rate (\"at most 1.2%\")",
	"approx":      "a rate the text gives approximately (\"~70%\", \"approach 0.10\")",
	"count":       "a count (of answers, of languages), out of n where the text gives it",
	"words":       "a mean length in words",
	"seconds":     "seconds per answer (set beside a run's milliseconds divided by 1000)",
	"correlation": "a correlation coefficient (Pearson r, Spearman ρ)",
	"p_below":     "a significance mark: p below the value",
	"p_at_least":  "no significance mark: p at least the value",
	"ratio":       "a ratio of two rates (an inflation factor)",
}

// Publisher is implemented by a plan whose paper printed numbers a run
// can be set beside (VersusPaper).
type Publisher interface {
	Published() ([]PublishedValue, error)
}

// ReadPublished reads the published numbers of the CSV files of fsys that
// match pattern (fs.Glob), in the files' order. A file's header names its
// columns, in any order: paper, where, model (the id the paper's model is
// served under), language, form, strategy, condition, metric and value
// are required; n (the paper-side n, an integer), others (CLC: the other
// languages averaged, an integer), kind (PublishedKinds; default rate),
// table (the run's table; Metric is then its column), keys (further key
// columns, "col=value;col=value"), reading and note are optional. An
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
		vs, err := parsePublished(recs)
		if err != nil {
			return nil, fmt.Errorf("%s %w", f, err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// parsePublished reads one file's records (header first); an error names
// the line and field.
func parsePublished(recs [][]string) ([]PublishedValue, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("line 1: no header")
	}
	// the columns a header may name: the first nine are required
	publishedColumns := []string{"paper", "where", "model", "language", "form", "strategy", "condition", "metric", "value",
		"n", "others", "kind", "table", "keys", "reading", "note"}
	col := map[string]int{}
	for i, h := range recs[0] {
		if !slices.Contains(publishedColumns, h) {
			return nil, fmt.Errorf("line 1: unknown column %q (want %s)", h, strings.Join(publishedColumns, ", "))
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("line 1: column %q twice", h)
		}
		col[h] = i
	}
	for _, h := range publishedColumns[:9] {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("line 1: no column %q", h)
		}
	}
	var out []PublishedValue
	for i, r := range recs[1:] {
		line := i + 2
		get := func(name string) string {
			if c, ok := col[name]; ok && c < len(r) {
				return r[c]
			}
			return ""
		}
		v, err := strconv.ParseFloat(get("value"), 64)
		if err != nil {
			return nil, fmt.Errorf("line %d field \"value\": %w", line, err)
		}
		p := PublishedValue{Paper: get("paper"), Where: get("where"), Model: get("model"), Language: get("language"), Form: get("form"),
			Strategy: get("strategy"), Condition: get("condition"), Metric: get("metric"), Value: v, Kind: cmp.Or(get("kind"), "rate"),
			Table: get("table"), Reading: get("reading"), Note: get("note")}
		for _, f := range []struct {
			name string
			to   *int
		}{{"n", &p.N}, {"others", &p.Others}} {
			if s := get(f.name); s != "" {
				if *f.to, err = strconv.Atoi(s); err != nil || *f.to < 0 {
					return nil, fmt.Errorf("line %d field %q: %q is not a count", line, f.name, s)
				}
			}
		}
		if _, ok := PublishedKinds[p.Kind]; !ok {
			return nil, fmt.Errorf("line %d field \"kind\": unknown kind %q", line, p.Kind)
		}
		if p.Metric == "" {
			return nil, fmt.Errorf("line %d field \"metric\": empty", line)
		}
		if p.Kind == "rate" && (v < 0 || v > 1) {
			return nil, fmt.Errorf("line %d field \"value\": rate %v outside [0, 1]", line, v)
		}
		if k := get("keys"); k != "" {
			for kv := range strings.SplitSeq(k, ";") {
				name, val, ok := strings.Cut(kv, "=")
				if !ok || name == "" {
					return nil, fmt.Errorf("line %d field \"keys\": %q is not col=value", line, kv)
				}
				p.Keys = append(p.Keys, [2]string{name, val})
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// PublishedInterval is the 95% Wilson interval of a published rate p out
// of n: Wilson(k, n) with k = round(p·n), the count a rate printed to
// three decimals most likely came from. ok is false when the number is
// not a rate or the text gives no n.
func PublishedInterval(p PublishedValue) (lo, hi float64, ok bool) {
	if p.Kind != "rate" || p.N <= 0 || p.Value < 0 || p.Value > 1 {
		return math.NaN(), math.NaN(), false
	}
	lo, hi = stats.Wilson(int(math.Round(p.Value*float64(p.N))), p.N, 0.95)
	return lo, hi, true
}

// VersusPaper is the versus_paper table of the plan's published numbers
// (Publisher) beside the run's tables ts (Versus; the experiment's models
// by served name); nil when the plan publishes none.
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
	return Versus(pub, ts, served), nil
}

// The agreement column's values.
const (
	AgreeOverlap    = "overlap"         // the paper's and the run's 95% intervals overlap
	AgreeApart      = "apart"           // they do not
	AgreeNoInterval = "no interval"     // one side has none (a CLC, a gain, a rate without n)
	AgreeNoRunValue = "no run value"    // no table of the run computes such a number
	AgreeNotRun     = "not in this run" // the table and its metric exist, but not for this model, language, strategy or condition
)

// Versus sets the papers' published numbers beside the run's tables ts.
// A published value is matched:
//
//   - with no Table, metric "clc": clc_mean's mean_jaccard (and its
//     others, the other languages the run's CLC(L) averaged, beside the
//     paper's: a mismatch is flagged, as CLC grows with the languages
//     averaged);
//   - with no Table, any other metric: the accuracy table's row of that
//     metric (rate, ci_lo, ci_hi, n); an empty strategy matches any;
//   - with a Table: that table's column Metric, on the rows whose model,
//     language, form, strategy and condition equal the published ones
//     (each only where the table has the column and the published field is
//     set; an empty model matches the pooled model "*" of a table with a
//     model column) and whose Keys columns hold the Keys' values. The
//     run's interval is the declared Lower and Upper columns right after
//     the metric column, when there are; its n the table's n column for
//     a rate column or a correlation (the languages it runs over); a
//     "seconds" number beside a column of milliseconds (*_ms) is set
//     beside the run's value / 1000.
//
// Models are matched by served name (served maps the experiment's model
// names to served names). A published value whose model the run has (or
// that names no model) but that no run row matches is listed with "no
// run value" when no table of the run computes such a number, "not in
// this run" when one does but not for its language, strategy or
// condition; one of a model the run did not have is left out.
//
// The paper's interval is PublishedInterval's (a rate with n); agreement
// is AgreeOverlap when both intervals exist and overlap (lo₁ ≤ hi₂ and
// lo₂ ≤ hi₁), AgreeApart when they do not, AgreeNoInterval when either
// side has none, AgreeNoRunValue or AgreeNotRun when the run has no value.
func Versus(pub []PublishedValue, ts []*tables.Table, served map[string]string) *tables.Table {
	t := tables.New("versus_paper", "the papers' published numbers beside the run's: each side's value, n and 95% interval (Wilson for a rate with n), the difference, whether the intervals overlap, and for CLC the languages each side averaged",
		tables.Text("paper", "the text the number is printed in (the paper, a critique's arithmetic, a rerun)"),
		tables.Text("where", "the table or section that prints the number"),
		tables.Category("model", "the run's model (matched to the paper's by served name); empty: the paper pools models"),
		tables.Category("language", "ISO 639-3 code (* pooled)"),
		tables.Category("form", "native, code-mixed or english"),
		tables.Category("strategy", "the run's strategy the paper's row is compared with"),
		tables.Category("condition", "distractor condition, or empty"),
		tables.Category("metric", "the metric (the accuracy table's metric, or the run table's column)"),
		tables.Category("kind", "what sort of number it is (rate, clc, gain, count, seconds, correlation, ...)"),
		tables.Category("reading", "which reading of an ambiguous published row (e.g. Table 9's Baseline as the plain baseline or with candidates); empty: one reading"),
		tables.Number("published", "the number the paper prints (a gain printed in points or % as a fraction)"),
		tables.Number("paper_n", "the paper-side n the number is out of (empty: the text gives none)"),
		tables.Lower("paper_lo", "95% Wilson interval of the published rate at paper_n (k = round(published · paper_n)); empty without n"),
		tables.Upper("paper_hi", "95% Wilson interval of the published rate at paper_n (k = round(published · paper_n)); empty without n"),
		tables.Number("run", "the run's value (empty: the run has none)"),
		tables.Number("run_n", "the run's n (accuracy, domains: answers scored; a correlation: the languages it runs over); empty for other tables"),
		tables.Lower("run_lo", "the run's 95% interval, where its table gives one"),
		tables.Upper("run_hi", "the run's 95% interval, where its table gives one"),
		tables.Statistic("diff", "run − published"),
		tables.Category("agreement", "overlap: the two 95% intervals overlap (compatible); apart: they do not; no interval: either side has none; no run value: no table of the run computes such a number; not in this run: one does, but the run lacks this language, strategy or condition"),
		tables.Number("run_others", "CLC: the other languages the run's CLC(L) averaged"),
		tables.Number("paper_others", "CLC: the other languages the paper's CLC(L) averaged (17 of the 18 Indic languages in the main run; empty: not stated)"),
		tables.Text("others_check", "CLC: same, MISMATCH (the run averaged another number of languages than the paper: not comparable as it is), or the paper's not stated"),
		tables.Text("note", "how the published row was read and matched"))
	t.Headline = true
	t.Brief = []string{"paper", "where", "model", "language", "form", "strategy", "condition", "metric", "reading", // the page's columns
		"published", "run", "diff", "agreement", "note"}
	byName := map[string]*tables.Table{}
	for _, x := range ts {
		if x != nil {
			byName[x.Name] = x
			t.Simulated = t.Simulated || x.Simulated
		}
	}
	byServed := map[string][]string{} // the model names of each served name, sorted
	for _, name := range slices.Sorted(maps.Keys(served)) {
		byServed[served[name]] = append(byServed[served[name]], name)
	}
	nan := math.NaN()
	orNaN := func(n int) float64 {
		if n <= 0 {
			return nan
		}
		return float64(n)
	}
	for _, p := range pub {
		models := byServed[p.Model]
		if p.Model == "" {
			models = []string{""}
		}
		plo, phi, pok := PublishedInterval(p)
		for _, model := range models {
			ms, computed := matchRun(p, model, byName, served)
			if len(ms) == 0 { // a row without run values
				ms = []runMatch{{model: model, v: nan, lo: nan, hi: nan, none: true}}
			}
			for _, m := range ms {
				agree := AgreeNoInterval
				switch {
				case m.none && computed:
					agree = AgreeNotRun
				case m.none:
					agree = AgreeNoRunValue
				case pok && !math.IsNaN(m.lo) && !math.IsNaN(m.hi):
					agree = AgreeApart
					if plo <= m.hi && m.lo <= phi {
						agree = AgreeOverlap
					}
				}
				t.Add(p.Paper, p.Where, m.model, p.Language, p.Form, cmp.Or(m.strategy, p.Strategy), p.Condition, p.Metric, p.Kind, p.Reading,
					p.Value, orNaN(p.N), plo, phi, m.v, orNaN(m.n), m.lo, m.hi, m.v-p.Value, agree, orNaN(m.others), orNaN(p.Others), othersFor(p, m), p.Note)
			}
		}
	}
	return t
}

// othersFor is the others_check cell of a CLC row (empty for others).
func othersFor(p PublishedValue, m runMatch) string {
	if p.Kind != "clc" || p.Metric != "clc" || p.Table != "" {
		return ""
	}
	switch {
	case p.Others == 0:
		return "paper's not stated"
	case m.none:
		return ""
	case m.others == p.Others:
		return "same"
	}
	return fmt.Sprintf("MISMATCH: run %d, paper %d", m.others, p.Others)
}

// runMatch is one run row set beside a published value.
type runMatch struct {
	model, strategy string
	v, lo, hi       float64
	n, others       int
	none            bool // no run value
}

// matchRun finds the run rows of p for model (empty: pooled), by Versus's
// rules; computed reports whether the run has p's table and metric at all.
func matchRun(p PublishedValue, model string, byName map[string]*tables.Table, served map[string]string) (out []runMatch, computed bool) {
	nan := math.NaN()
	switch {
	case p.Table == "": // clc_mean's mean_jaccard, or the accuracy table's rate of the metric
		clc := p.Metric == "clc"
		name, val := "accuracy", "rate"
		if clc {
			name, val = "clc_mean", "mean_jaccard"
		}
		x := byName[name]
		if x == nil || model == "" {
			return nil, false
		}
		computed = clc
		for _, r := range x.Rows {
			computed = computed || x.Str(r, "metric") == p.Metric
			if x.Str(r, "model") != model || x.Str(r, "language") != p.Language || x.Str(r, "form") != p.Form {
				continue
			}
			switch {
			case clc && x.Str(r, "strategy") == p.Strategy:
				out = append(out, runMatch{model: model, v: x.Num(r, val), lo: nan, hi: nan, others: int(x.Num(r, "others"))})
			case !clc && x.Str(r, "metric") == p.Metric && (p.Strategy == "" || x.Str(r, "strategy") == p.Strategy) && x.Str(r, "condition") == p.Condition:
				out = append(out, runMatch{model: model, strategy: x.Str(r, "strategy"), v: x.Num(r, val), lo: x.Num(r, "ci_lo"), hi: x.Num(r, "ci_hi"), n: int(x.Num(r, "n"))})
			}
		}
	default:
		x := byName[p.Table]
		if x == nil || x.Col(p.Metric) < 0 {
			return nil, false
		}
		computed = true
		want := [][2]string{{"language", p.Language}, {"form", p.Form}, {"strategy", p.Strategy}, {"condition", p.Condition}}
		if x.Col("model") >= 0 {
			want = append(want, [2]string{"model", cmp.Or(model, "*")})
		}
		for _, kv := range p.Keys {
			v := kv[1]
			if id, ok := strings.CutPrefix(v, "@"); ok {
				v = "" // a model the run does not have matches nothing
				for name, s := range served {
					if s == id && (v == "" || name < v) { // of several names serving id, the first in order
						v = name
					}
				}
				if v == "" {
					return nil, true
				}
			}
			want = append(want, [2]string{kv[0], v})
		}
		c := x.Col(p.Metric)
		lo, hi := "", "" // the interval's columns
		if cols := x.Columns(); c+2 < len(cols) && cols[c+1].Kind == tables.KindLower && cols[c+2].Kind == tables.KindUpper {
			lo, hi = cols[c+1].Name, cols[c+2].Name
		}
		scale := 1.0
		if p.Kind == "seconds" && strings.HasSuffix(p.Metric, "_ms") {
			scale = 1000
		}
	rows:
		for _, r := range x.Rows {
			for _, w := range want {
				if w[1] == "" || x.Col(w[0]) < 0 {
					continue
				}
				if fmt.Sprint(r[x.Col(w[0])]) != w[1] {
					continue rows
				}
			}
			m := runMatch{model: model, v: x.Num(r, p.Metric) / scale, lo: nan, hi: nan}
			if math.IsNaN(m.v) {
				continue
			}
			if lo != "" {
				m.lo, m.hi = x.Num(r, lo)/scale, x.Num(r, hi)/scale
			}
			if (p.Metric == "rate" || p.Kind == "correlation") && x.Col("n") >= 0 { // answers scored; a correlation's languages
				m.n = int(x.Num(r, "n"))
			}
			if x.Col("strategy") >= 0 {
				m.strategy = x.Str(r, "strategy")
			}
			out = append(out, m)
		}
	}
	return out, computed
}

// VersusReadings summarises versus_paper (v, Versus's table) per paper,
// table or section and reading, for the published rows that carry one of
// several readings (Table 9's Baseline as the plain baseline or with the
// candidates): how many rows the run could be set beside, how many had
// an interval on both sides, how many of those overlap and how many lie
// apart, and the mean |run − published| over the rows with a run value;
// nil when no published row has a reading.
func VersusReadings(v *tables.Table) *tables.Table {
	if v == nil {
		return nil
	}
	type group struct{ paper, where, reading string }
	type tally struct {
		rows, compared, overlap, apart int
		absDiff                        float64
	}
	by := map[group]*tally{}
	var order []group
	for _, r := range v.Rows {
		g := group{v.Str(r, "paper"), v.Str(r, "where"), v.Str(r, "reading")}
		if g.reading == "" {
			continue
		}
		x := by[g]
		if x == nil {
			x = &tally{}
			by[g] = x
			order = append(order, g)
		}
		x.rows++
		d := v.Num(r, "diff")
		if math.IsNaN(d) {
			continue
		}
		x.compared++
		x.absDiff += math.Abs(d)
		switch v.Str(r, "agreement") {
		case AgreeOverlap:
			x.overlap++
		case AgreeApart:
			x.apart++
		}
	}
	if len(order) == 0 {
		return nil
	}
	t := tables.New("versus_readings", "the published rows read two ways (e.g. Table 9's Baseline as the plain baseline or with the candidates), each reading's agreement with the run: rows compared, intervals overlapping or apart, mean |run − published|",
		tables.Text("paper", "the text the number is printed in"),
		tables.Text("where", "the table or section"),
		tables.Category("reading", "the reading of the published rows"),
		tables.Count("rows", "published rows under this reading beside the run's models"),
		tables.Count("compared", "rows with a run value"),
		tables.Count("with_interval", "rows with a 95% interval on both sides"),
		tables.Count("overlap", "rows whose two intervals overlap"),
		tables.Count("apart", "rows whose two intervals do not overlap"),
		tables.Number("mean_abs_diff", "mean |run − published| over the rows compared (empty: none)"))
	t.Simulated = v.Simulated
	for _, g := range order {
		x := by[g]
		mean := math.NaN()
		if x.compared > 0 {
			mean = x.absDiff / float64(x.compared)
		}
		t.Add(g.paper, g.where, g.reading, x.rows, x.compared, x.overlap+x.apart, x.overlap, x.apart, mean)
	}
	return t
}
