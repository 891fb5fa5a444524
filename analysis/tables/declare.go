package tables

import "fmt"

// New starts a table whose columns are declared where it is built: its
// Header is their names, Columns returns them as declared (never guessed
// from a name), and Add checks each row against them.
func New(name, description string, cols ...Column) *Table {
	t := &Table{Name: name, Description: description, Cols: cols, Header: make([]string, len(cols))}
	for i, c := range cols {
		t.Header[i] = c.Name
	}
	return t
}

// Add appends a row of cells (string, int, float64 or bool; a
// fmt.Stringer is stored as its String, anything else as fmt.Sprint).
// A row whose length differs from the declared columns is a programming
// error and panics.
func (t *Table) Add(cells ...any) {
	if len(t.Cols) > 0 && len(cells) != len(t.Cols) {
		panic(fmt.Sprintf("tables: table %s: a row of %d cells for %d columns", t.Name, len(cells), len(t.Cols)))
	}
	row := make([]any, len(cells))
	for i, c := range cells {
		switch v := c.(type) {
		case string, int, float64, bool:
			row[i] = v
		case fmt.Stringer:
			row[i] = v.String()
		default:
			row[i] = fmt.Sprint(v)
		}
	}
	t.Rows = append(t.Rows, row)
}

// Chart is a table's natural spreadsheet chart: the first Keys columns
// name each series (one per row), the columns after them are its values;
// Title is the chart's title.
type Chart struct {
	Keys  int
	Title string
}

// The column constructors below declare a column with its type and kind.

// Text declares a string column.
func Text(name, description string) Column {
	return Column{Name: name, Type: String, Description: description}
}

// Flag declares a bool column.
func Flag(name, description string) Column {
	return Column{Name: name, Type: Bool, Description: description}
}

// Count declares an int column of counts (k, n, pairs).
func Count(name, description string) Column {
	return Column{Name: name, Type: Int, Kind: KindCount, Description: description}
}

// Integer declares an int column that is not a count (a step, a rank).
func Integer(name, description string) Column {
	return Column{Name: name, Type: Int, Description: description}
}

// Proportion declares a float column holding a proportion in [0, 1].
func Proportion(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindRate, Description: description}
}

// Lower declares the lower bound of a 95% interval.
func Lower(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindLower, Description: description}
}

// Upper declares the upper bound of a 95% interval.
func Upper(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindUpper, Description: description}
}

// PValue declares a p-value column.
func PValue(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindPValue, Description: description}
}

// Statistic declares a float column holding a test statistic, a
// correlation or a difference.
func Statistic(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindStatistic, Description: description}
}

// Millis declares a float column holding milliseconds.
func Millis(name, description string) Column {
	return Column{Name: name, Type: Float, Kind: KindMillis, Description: description}
}

// Number declares a float column of another kind (a mean length, a size).
func Number(name, description string) Column {
	return Column{Name: name, Type: Float, Description: description}
}

// KindCategory marks a text column whose values name a category (a
// model, a language, a verdict): the sample explorer offers a filter of
// its values.
const KindCategory Kind = "category"

// Category declares a text column of categories (KindCategory).
func Category(name, description string) Column {
	return Column{Name: name, Type: String, Kind: KindCategory, Description: description}
}

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
