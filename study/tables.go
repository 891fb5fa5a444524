package study

import (
	"encoding/json"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
)

// Scored answers and the schema that declares their criteria.
type (
	// Row is [score.Row]: one scored answer.
	Row = score.Row
	// Common is [score.Common]: reads the fields every study's row takes
	// the same way from its record; one per scoring pass.
	Common = score.Common
	// Detail is [score.Detail]: what a row keeps beyond its criteria
	// (a judge's verdict, a choice's log-likelihoods).
	Detail = score.Detail
	// Schema is [score.Schema]: a study's criteria and verdicts, in the
	// order answers.csv and the explorer show them.
	Schema = score.Schema
	// Field is [score.Field]: one field of a schema.
	Field = score.Field
)

// Marks and a judge's verdicts.
const (
	// MaxMarks is [score.MaxMarks]: a study's own criteria are the bits
	// 0 to MaxMarks−1 of Row.Marks.
	MaxMarks = score.MaxMarks
	// VerdictCorrect is [score.VerdictCorrect]: a judge found the answer
	// correct.
	VerdictCorrect = score.VerdictCorrect
	// VerdictIncorrect is [score.VerdictIncorrect]: a judge found it
	// wrong.
	VerdictIncorrect = score.VerdictIncorrect
	// VerdictUnparsed is [score.VerdictUnparsed]: the judge's verdict
	// could not be read.
	VerdictUnparsed = score.VerdictUnparsed
)

// NewCommon is [score.NewCommon]: a Common with the built-in abstention
// phrases plus extra (per language code, as an experiment's abstain:).
func NewCommon(extra map[string][]string) *Common { return score.NewCommon(extra) }

// NewSchema is [score.NewSchema]: the schema of the common fields and
// the study's own, in order; two fields of one name panic.
func NewSchema(study ...Field) *Schema { return score.NewSchema(study...) }

// CorrectField is [score.CorrectField]: the study's strict criterion
// (Row.Correct), described by rule.
func CorrectField(rule string) Field { return score.CorrectField(rule) }

// Mark is [score.Mark]: a criterion read from the study's mark i of
// Row.Marks; i outside [0, MaxMarks) panics.
func Mark(name, description string, i int) Field { return score.Mark(name, description, i) }

// TextField is [score.Text]: a text field naming a category (a verdict,
// a domain), read by of.
func TextField(name, description string, of func(*Row) string) Field {
	return score.Text(name, description, of)
}

// IntField is [score.Int]: an int field read by of.
func IntField(name, description string, of func(*Row) int) Field {
	return score.Int(name, description, of)
}

// Tables and their declared columns.
type (
	// Table is [tables.Table]: a named table of declared columns.
	Table = tables.Table
	// Column is [tables.Column]: a declared column.
	Column = tables.Column
	// Metric is [tables.Metric]: a criterion the accuracy table rates.
	Metric = tables.Metric
	// Criterion is [tables.Criterion]: a criterion the scoring table
	// describes.
	Criterion = tables.Criterion
	// TableOptions is [tables.Options]: what the rows do not carry
	// (model sizes and families, human labels).
	TableOptions = tables.Options
)

// Standard is [tables.Standard]: the tables every study has, accuracy
// (its metrics ms) and scoring (its criteria cs), and scaling and
// model_families when opt names model sizes or families.
func Standard(study string, ms []Metric, cs []Criterion, rows []Row, opt TableOptions) []*Table {
	return tables.Standard(study, ms, cs, rows, opt)
}

// Correct is [tables.Correct]: the strict criterion, a study's first
// metric.
func Correct() Metric { return tables.Correct() }

// NewTable is [tables.New]: an empty table named name with the
// declared columns cols; its Add checks each row against them.
func NewTable(name, description string, cols ...Column) *Table {
	return tables.New(name, description, cols...)
}

// KeyColumn is [tables.Key]: the declaration of a column many tables
// share (model, language, form, n, rate, ci_lo, ci_hi, …), with its one
// description; an unknown name panics.
func KeyColumn(name string) Column { return tables.Key(name) }

// CategoryColumn is [tables.Category]: a column of category names.
func CategoryColumn(name, description string) Column { return tables.Category(name, description) }

// TextColumn is [tables.Text]: a column of free text.
func TextColumn(name, description string) Column { return tables.Text(name, description) }

// CountColumn is [tables.Count]: a column of counts.
func CountColumn(name, description string) Column { return tables.Count(name, description) }

// NumberColumn is [tables.Number]: a column of numbers.
func NumberColumn(name, description string) Column { return tables.Number(name, description) }

// ProportionColumn is [tables.Proportion]: a column of rates in [0, 1].
func ProportionColumn(name, description string) Column { return tables.Proportion(name, description) }

// LowerColumn is [tables.Lower]: the lower bound of an interval.
func LowerColumn(name, description string) Column { return tables.Lower(name, description) }

// UpperColumn is [tables.Upper]: the upper bound of an interval.
func UpperColumn(name, description string) Column { return tables.Upper(name, description) }

// StatisticColumn is [tables.Statistic]: a column of test statistics
// or effect sizes.
func StatisticColumn(name, description string) Column { return tables.Statistic(name, description) }

// PValueColumn is [tables.PValue]: a column of p values.
func PValueColumn(name, description string) Column { return tables.PValue(name, description) }

// SortBy is [tables.SortBy]: sorts s stably by the string tuple key(x),
// lexicographically.
func SortBy[T any](s []T, key func(T) []string) { tables.SortBy(s, key) }

// SortedKeys is [tables.SortedKeys]: the keys of m, sorted.
func SortedKeys[V any](m map[string]V) []string { return tables.SortedKeys(m) }

// Figures drawn from a study's tables.
type (
	// Figure is [chart.Figure]: one figure, its caption, n and
	// SIMULATED as fields.
	Figure = chart.Figure
	// Estimate is [chart.Estimate]: a rate with its 95% interval and n.
	Estimate = chart.Estimate
)

// FigureOf is [chart.Of]: a figure named name drawn from table t, with
// its caption (holding the n statement n) and the ECharts option o.
func FigureOf(t *Table, name, mirrors, caption, n string, o json.RawMessage) Figure {
	return chart.Of(t, name, mirrors, caption, n, o)
}

// EmptyFigure is [chart.Empty]: a figure with nothing to draw from t,
// saying why where the plot would be; its n is 0 of unit.
func EmptyFigure(t *Table, name, mirrors, title, why, unit string) (Figure, error) {
	return chart.Empty(t, name, mirrors, title, why, unit)
}

// EstimateOf is [chart.EstimateOf]: a rate row's rate, interval and n
// (the columns rate, ci_lo, ci_hi and n).
func EstimateOf(t *Table, r []any) Estimate { return chart.EstimateOf(t, r) }

// IntervalBars is [chart.IntervalBars]: the ECharts option of grouped
// bars with interval whiskers, categories on the x axis and one series
// per name (values[s][c]).
func IntervalBars(title, yName string, cats, names []string, values [][]Estimate) (json.RawMessage, error) {
	return chart.IntervalBars(title, yName, cats, names, values)
}

// Counted is [chart.Counted]: n and its noun, plural unless n is 1.
func Counted(n int, noun string) string { return chart.Counted(n, noun) }
