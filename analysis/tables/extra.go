package tables

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/datasets/csvread"
)

// Options carry what the rows do not: model sizes for the scaling
// analysis and human labels for judge validation.
type Options struct {
	Sizes    map[string]float64 // model → parameters in billions
	Families map[string]string  // model → model family
	Human    []HumanLabel
}

// HumanLabel is one human verdict on an answer.
type HumanLabel struct {
	Model, Item, Language, Condition string
	Correct                          bool
}

// ReadHumanLabels reads a CSV with columns model, item, language, label
// (correct/incorrect, true/false or 1/0) and, for the distractor study,
// condition; a bad label names file, line and field.
func ReadHumanLabels(path string) ([]HumanLabel, error) {
	t, err := csvread.Read(path, ',')
	if err != nil {
		return nil, err
	}
	var cols [4]int
	for i, c := range []string{"model", "item", "language", "label"} {
		if cols[i], err = t.Col(c); err != nil {
			return nil, err
		}
	}
	cond, _ := t.Col("condition") // -1 when there is none: every Cell ""
	var out []HumanLabel
	for i := range t.Rows {
		h := HumanLabel{Model: t.Cell(i, cols[0]), Item: t.Cell(i, cols[1]), Language: t.Cell(i, cols[2]), Condition: t.Cell(i, cond)}
		switch t.Cell(i, cols[3]) {
		case "correct", "true", "1", "CORRECT":
			h.Correct = true
		case "incorrect", "false", "0", "INCORRECT", "wrong", "WRONG":
		default:
			return nil, fmt.Errorf("%s line %d field \"label\": %q is not correct/incorrect", path, t.Lines[i], t.Cell(i, cols[3]))
		}
		out = append(out, h)
	}
	return out, nil
}

// HumanAgreement compares each of the study's criteria (named as what
// they are: the IndicQuest judge, exact match, ...) with human labels,
// per model × language × condition over the labelled answers: n, raw
// agreement and Cohen's κ. A label matches the answer of its model, item,
// language and condition (empty when the study has none).
func HumanAgreement(rows []score.Row, labels []HumanLabel, criteria []Metric) *Table {
	t := New("human_agreement", "each criterion, named as what it compares (llm_judge, exact_match, ...), against human labels per model × language × condition: n, agreement, Cohen's κ",
		Key("model"), Key("language"), Key("condition"), Text("criterion", "a scoring criterion (judge_grades: the graded judge's criterion)"), Key("n"), Key("agree"), Key("kappa"))
	type key struct{ model, item, lang, cond string }
	human := map[key]bool{}
	for _, h := range labels {
		human[key{h.Model, h.Item, h.Language, h.Condition}] = h.Correct
	}
	keyOf := func(r *score.Row) key { return key{r.Key.Model, r.Key.Item, r.Key.Language, r.Key.Condition} }
	type cell struct{ model, lang, cond string }
	by := map[cell][]score.Row{}
	for ri := range rows {
		r := &rows[ri]
		if _, ok := human[keyOf(r)]; ok && !r.Failed {
			c := cell{r.Key.Model, r.Key.Language, r.Key.Condition}
			by[c] = append(by[c], *r)
		}
	}
	cells := SortedKeysBy(by, func(c cell) []string { return []string{c.model, c.lang, c.cond} })
	for _, c := range cells {
		for _, m := range criteria {
			var x, y []string
			rs := by[c]
			for ri := range rs {
				r := &rs[ri]
				if m.AppliesTo(r.Key.Strategy) {
					x = append(x, Label(m.Of(r)))
					y = append(y, Label(human[keyOf(r)]))
				}
			}
			if len(x) == 0 {
				continue
			}
			k, a := stats.CohenKappa(x, y)
			t.Add(c.model, c.lang, c.cond, m.Name, len(x), a, k)
		}
	}
	return t
}

// Scaling relates model size to accuracy: per strategy × language × form,
// the accuracy of every model with a known size and Spearman's ρ (with
// its two-sided p) between size and accuracy.
func Scaling(rows []score.Row, sizes map[string]float64) *Table {
	t := New("scaling", "Spearman's ρ of model size against accuracy (models with size_b)",
		Key("strategy"), Key("language"), Key("form"), Count("models", "models with a size"),
		Statistic("spearman_rho", "Spearman rank correlation (ρ) and its p-value"), PValue("p", "two-sided p-value of the rank correlation"),
		Text("sizes", "model sizes in billions of parameters"), Text("accuracies", "the models' accuracies, in the order of sizes"))
	if len(sizes) == 0 {
		return t
	}
	type cell struct{ strategy, lang, form string }
	type unit struct {
		cell
		model string
	}
	by := countRates(rows, []Metric{Correct()}, func(r *score.Row) (unit, bool) { // failed answers count as wrong
		return unit{cell{r.Key.Strategy, r.Key.Language, r.Key.Form}, r.Key.Model}, sizes[r.Key.Model] > 0
	})
	modelsOf := map[cell][]string{}
	for u := range by {
		modelsOf[u.cell] = append(modelsOf[u.cell], u.model)
	}
	for _, c := range SortedKeysBy(modelsOf, func(c cell) []string { return []string{c.strategy, c.lang, c.form} }) {
		models := modelsOf[c]
		sort.Slice(models, func(i, j int) bool { return sizes[models[i]] < sizes[models[j]] })
		var xs, ys []float64
		var sz, ac []string
		for _, m := range models {
			x := by[unit{c, m}]
			xs, ys = append(xs, sizes[m]), append(ys, Frac(x.k[0], x.n))
			sz, ac = append(sz, fmt.Sprintf("%g", sizes[m])), append(ac, fmt.Sprintf("%.4f", ys[len(ys)-1]))
		}
		rho, p := stats.Spearman(xs, ys) // NaN with fewer than 2 models
		t.Add(c.strategy, c.lang, c.form, len(models), rho, p, strings.Join(sz, " "), strings.Join(ac, " "))
	}
	return t
}

// ModelFamilies is accuracy by model family over size (IndicKLAR §5.3,
// Fig. 5): per family × model (with its size) × strategy × form, the
// answers pooled over languages, k, n, the rate with its Wilson interval,
// and the failed requests; models without a family are left out.
func ModelFamilies(rows []score.Row, families map[string]string, sizes map[string]float64) *Table {
	t := New("model_families", "accuracy by model family over size, pooled over languages (models with family:)",
		append([]Column{Text("family", "the model family (family: of the model)"), Key("model"), Number("size_b", "the model's size in billions of parameters (size_b:)")},
			Keys("strategy", "form", "k", "n", "rate", "ci_lo", "ci_hi", "failed")...)...)
	type key struct{ family, model, strategy, form string }
	correct := Metric{Of: func(r *score.Row) bool { return !r.Failed && r.Correct }}
	by := countRates(rows, []Metric{correct}, func(r *score.Row) (key, bool) {
		return key{families[r.Key.Model], r.Key.Model, r.Key.Strategy, r.Key.Form}, families[r.Key.Model] != ""
	})
	keys := slices.Collect(maps.Keys(by))
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.family, b.family), cmp.Compare(a.strategy+"|"+a.form, b.strategy+"|"+b.form),
			cmp.Compare(sizes[a.model], sizes[b.model]), cmp.Compare(a.model, b.model))
	})
	for _, x := range keys {
		size, ok := sizes[x.model]
		if !ok {
			size = math.NaN()
		}
		t.Add(append([]any{x.family, x.model, size, x.strategy, x.form}, by[x].cells(0)...)...)
	}
	return t
}

// AnswerColumn declares the column of an answer field: a Flag, an
// Integer, a Category for a category's text, else Text.
func AnswerColumn(f score.Field) Column {
	switch {
	case f.Type == score.FlagField:
		return Flag(f.Name, f.Description)
	case f.Type == score.IntField:
		return Integer(f.Name, f.Description)
	case f.Category:
		return Category(f.Name, f.Description)
	}
	return Text(f.Name, f.Description)
}

// Answers is one row per scored answer, for inspection, with the columns
// of the study's answer schema (s.Fields(): the key, the gold, the raw
// and the normalised prediction (normalize.Default, the steps listed in
// scoring.csv), how the answer was extracted, the study's criteria and
// verdicts, abstention, script and switch, and whether the answer is
// missing). It is written by reports, not by For (it is as long as the
// run). Its rows are held; AnswerRows makes them as they are read.
func Answers(rows []score.Row, s *score.Schema) *Table {
	t := answersTable(s)
	// Repeating strings (Field.Repeats) and ints are boxed once (Interner).
	var in Interner
	t.Fill(len(rows), answerFill(rows, s.Fields(), &in))
	return t
}

// AnswerRows is Answers with a Source instead of held rows: each row is
// made from rows[i] when it is read, so that writing a run's answers
// (its CSV, the report's samples) holds none of them.
func AnswerRows(rows []score.Row, s *score.Schema) *Table {
	t := answersTable(s)
	t.Source = &Source{N: len(rows), Fill: answerFill(rows, s.Fields(), nil), Hold: func() [][]any { return Answers(rows, s).Rows }}
	return t
}

// answersTable is the answers table's declaration, without rows.
func answersTable(s *score.Schema) *Table {
	fields := s.Fields()
	cols := make([]Column, len(fields))
	for i, f := range fields {
		cols[i] = AnswerColumn(f)
	}
	return New("answers", "one row per scored answer: the study's answer schema (raw and normalised prediction, method, every criterion and verdict, script)", cols...)
}

// answerFill fills an answers row from rows[i], boxing repeating strings
// and ints through in (nil: each cell boxed on its own, but for one equal
// to the cell row holds already, the row before's: Source).
func answerFill(rows []score.Row, fields []score.Field, in *Interner) func(i int, row []any) {
	return func(i int, row []any) {
		r := &rows[i]
		for c, f := range fields {
			switch {
			case f.Type == score.FlagField:
				row[c] = f.Flag(r)
			case f.Type == score.IntField && in != nil:
				row[c] = in.Int(f.Int(r))
			case f.Type == score.IntField:
				if n := f.Int(r); !held(row[c], n) {
					row[c] = n
				}
			case f.Repeats && in != nil:
				row[c] = in.String(f.Text(r))
			default:
				if s := f.Text(r); !held(row[c], s) {
					row[c] = s
				}
			}
		}
	}
}

// held says whether cell holds v (a T equal to it).
func held[T comparable](cell any, v T) bool {
	old, ok := cell.(T)
	return ok && old == v
}

// Criterion documents one scoring criterion: its rule and the
// normalisation steps it applies (every score says how its strings were
// prepared).
type Criterion struct {
	Name, Rule, Normalization string
}

// Scoring lists a study's criteria.
func Scoring(study string, cs []Criterion) *Table {
	t := New("scoring", "each criterion's rule and the normalisation steps it applies",
		Category("study", "the study"), Category("criterion", "a scoring criterion (judge_grades: the graded judge's criterion)"),
		Text("rule", "how the criterion decides"), Text("normalization", "the normalisation steps applied before comparing"))
	for _, c := range cs {
		t.Add(study, c.Name, c.Rule, c.Normalization)
	}
	return t
}

// Standard builds the tables every study has: accuracy (its metrics),
// scoring (its criteria), and, when opt names model sizes or families,
// scaling and model_families. A study that reads human labels adds
// HumanAgreement with its criteria.
func Standard(study string, ms []Metric, cs []Criterion, rows []score.Row, opt Options) []*Table {
	ts := []*Table{Accuracy(study, ms, rows), Scoring(study, cs)}
	if len(opt.Sizes) > 0 {
		ts = append(ts, Scaling(rows, opt.Sizes))
	}
	if len(opt.Families) > 0 {
		ts = append(ts, ModelFamilies(rows, opt.Families, opt.Sizes))
	}
	return ts
}

// JudgeByScript counts a judge's verdicts per model × main script of the
// judged response (Row.Verdict: whatever LLM judge the study runs).
func JudgeByScript(rows []score.Row) *Table {
	t := New("judge_by_script", "judge verdicts by the main script of the judged answer",
		Key("model"), Text("script", "main script of the answer"), Text("verdict", "the judge's verdict"), Count("count", "answers"))
	type k struct{ model, script, verdict string }
	counts := countRates(rows, nil, func(r *score.Row) (k, bool) {
		return k{r.Key.Model, cmp.Or(r.Script, "none"), r.Verdict}, !r.Failed && r.Verdict != ""
	})
	for _, x := range SortedKeysBy(counts, func(x k) []string { return []string{x.model, x.script, x.verdict} }) {
		t.Add(x.model, x.script, x.verdict, counts[x].n)
	}
	if len(t.Rows) == 0 {
		t.Note = "no verdict: no answer of this run was judged (no LLM judge, no semantic judge)"
	}
	return t
}
