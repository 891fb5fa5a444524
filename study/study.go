// Package study is what a study author imports: one package that makes
// reachable the interfaces a study implements and the helpers it calls,
// so that a study of your own is written against it and the root package
// bhasha (which registers and runs it) alone.
//
// A study is a value with no state that satisfies [Study]. Write it in
// this order:
//
//  1. Name, About and Check: the name an experiment file's study: key
//     gives, one line on what it measures, and its problems, each at its
//     YAML line ([Checker]). Optional methods add its own options (a
//     struct of its own, read with [OptionsOf]; a program sets them with
//     setters built on [Set]) and the shared fields it reads.
//  2. Build: reads its dataset (Experiment.LoadItems gives [Items]) and
//     returns its [Plan], which holds everything the run needs.
//  3. The plan's Stages and Requests: what to ask, stage by stage, each a
//     [Request] with its typed [Key], [Kind] ([Chat] or [Completion]),
//     its [Message] list and [Decoding]; a later stage finds earlier answers
//     through its [Lookup].
//  4. Extract: the answer read from a response, an [ExtractResult]
//     ([ExtractField], [ExtractFirstLine], or the whole text with
//     [MethodText]).
//  5. Score: one [Row] per answer, started by Common.Row
//     ([NewCommon]); its criteria decided with the matching helpers
//     ([ExactMatch], [Substring], [WordOverlap], [TranslitMatch],
//     [Normalize]); a study's own criteria are its marks (bits of
//     Row.Marks below [MaxMarks], named by its constants).
//  6. AnswerSchema ([AnswerSchemer]): its criteria declared once
//     ([NewSchema] with [CorrectField], [Mark], [TextField], [IntField]);
//     answers.csv, the workbook's samples sheet and the HTML explorer are
//     generated from it.
//  7. Tables: [Standard] (accuracy per criterion, and scoring) and its
//     own, each a [NewTable] of declared columns ([KeyColumn],
//     [CountColumn], [ProportionColumn], [LowerColumn], [UpperColumn],
//     …), filled with the statistics of this package ([Wilson],
//     [NewProportion], [McNemarExact], …).
//  8. Figures ([Figurer]): drawn from its tables ([FigureOf],
//     [EmptyFigure], [IntervalBars], [EstimateOf]), each carrying its
//     caption and n.
//
// Then register it: bhasha.Register(mystudy.Study{}) on an experiment
// built in Go, or reg.Add(mystudy.Study{}) on bhasha.BuiltinStudies()
// for experiment files and for reopening its runs; a command of its own
// is one line, cli.Main(mystudy.Study{}) (package cmd/cli).
//
// Every name here is the same type, constant or function as in the
// package that defines it (named in its doc comment), so values pass
// freely between this package and those.
package study

import (
	"encoding/json"
	"io/fs"

	"github.com/bhashalab/bhasha/analysis/extract"
	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/report/chart"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/protocol"
)

// The interfaces a study and its plan implement.
type (
	// Study is [experiment.Study]: a study's name, checks and Build.
	Study = experiment.Study
	// Plan is [experiment.Plan]: a built study's requests, extraction,
	// scoring and tables.
	Plan = experiment.Plan
	// AnswerSchemer is [experiment.AnswerSchemer]: a plan that declares
	// its answer schema.
	AnswerSchemer = experiment.AnswerSchemer
	// Figurer is [experiment.Figurer]: a plan that draws figures from
	// its tables.
	Figurer = experiment.Figurer
	// Publisher is [experiment.Publisher]: a plan whose paper printed
	// numbers a run is set beside.
	Publisher = experiment.Publisher
)

// What Check and Build are handed.
type (
	// Experiment is [experiment.Experiment]: the experiment file read
	// and checked, with its study's options.
	Experiment = experiment.Experiment
	// Checker is [experiment.Checker]: collects Check's problems, each
	// at its YAML path.
	Checker = experiment.Checker
	// Option is [experiment.Option]: one setting of an experiment built
	// in Go.
	Option = experiment.Option
	// PublishedValue is [experiment.PublishedValue]: one number a paper
	// printed.
	PublishedValue = experiment.PublishedValue
	// Lookup is [protocol.Lookup]: finds a model's record of an earlier
	// stage by its key.
	Lookup = protocol.Lookup
)

// OptionsOf is [experiment.OptionsOf]: the study's own options of e, a
// *T (zero when the file sets none); T is the type the study's Options
// method returns a pointer to.
func OptionsOf[T any](e *Experiment) *T { return experiment.OptionsOf[T](e) }

// Set is [experiment.Set]: an Option that edits the study's own options
// (a *T), for the study's setters.
func Set[T any](set func(*T)) Option { return experiment.Set(set) }

// List is [experiment.List]: parses each value of a list field, adding
// a bad one to c at its own line, and returns those that parse.
func List[T any](c *Checker, field string, vals []string, parse func(string) (T, error)) []T {
	return experiment.List(c, field, vals, parse)
}

// ReadPublished is [experiment.ReadPublished]: the published numbers of
// the CSV files of fsys matching pattern; an error names the file, its
// line and field.
func ReadPublished(fsys fs.FS, pattern string) ([]PublishedValue, error) {
	return experiment.ReadPublished(fsys, pattern)
}

// Template is [protocol.Template]: the prompt text of the built-in
// template name (after its citation header) and the file's SHA-256.
func Template(name string) (text, hash string, err error) { return protocol.Template(name) }

// Requests, their keys and the records that answer them.
type (
	// Request is [engine.Request]: one request of a plan, with its key.
	Request = engine.Request
	// Key is [engine.Key]: what identifies a request and its record.
	Key = engine.Key
	// Kind is [engine.Kind]: the endpoint a request posts to.
	Kind = engine.Kind
	// Message is [engine.Message]: one chat message.
	Message = engine.Message
	// Decoding is [engine.Decoding]: a request's sampling settings.
	Decoding = engine.Decoding
	// Record is [engine.Record]: a request's answer as the run keeps it.
	Record = engine.Record
	// Manifest is [run.Manifest]: a run's provenance (servers, model
	// identities, inputs, decoding, counts, whether it was simulated).
	Manifest = run.Manifest
	// Role is [engine.Role]: what a request is for (the answer, a
	// translation, a judge's verdict, a choice's likelihood).
	Role = engine.Role
)

// Request kinds, roles, cues and the status of an answered request.
const (
	// Chat is [engine.Chat]: /v1/chat/completions.
	Chat = engine.Chat
	// Completion is [engine.Completion]: /v1/completions, a raw prompt.
	Completion = engine.Completion
	// RoleAnswer is [engine.RoleAnswer]: the scored request.
	RoleAnswer = engine.RoleAnswer
	// RoleTranslation is [engine.RoleTranslation]: a two-step
	// strategy's first stage.
	RoleTranslation = engine.RoleTranslation
	// RoleJudge is [engine.RoleJudge]: a judge's verdict on an answer.
	RoleJudge = engine.RoleJudge
	// RoleChoice is [engine.RoleChoice]: one option's log-likelihood.
	RoleChoice = engine.RoleChoice
	// CueTranslateFirst is [engine.CueTranslateFirst], for the
	// simulator: the prompt asks for a translation first.
	CueTranslateFirst = engine.CueTranslateFirst
	// CueOneWordVerdict is [engine.CueOneWordVerdict], for the
	// simulator: a judge's verdict is one word.
	CueOneWordVerdict = engine.CueOneWordVerdict
	// StatusOK is [engine.StatusOK]: a record whose request was answered.
	StatusOK = engine.StatusOK
)

// Translation is [engine.Translation]: the role of a two-step
// strategy's first stage.
func Translation() Role { return engine.Translation() }

// Judge is [engine.Judge]: the role of a judge's verdict on model's
// answer.
func Judge(model string) Role { return engine.Judge(model) }

// JudgeKey is the key of judge's verdict on the answer keyed answer: the
// answer's key with judge as its model and Judge(answer's model) as its
// role.
func JudgeKey(answer Key, judge string) Key {
	k := answer
	k.Model, k.Role = judge, Judge(answer.Model)
	return k
}

// Choice is [engine.Choice]: the role of the log-likelihood of option i.
func Choice(i int) Role { return engine.Choice(i) }

// ExtractResult is [extract.Result]: the answer a plan's Extract read
// from a response, and how.
type ExtractResult = extract.Result

// How an answer was read.
const (
	// MethodText is [extract.MethodText]: the whole output, trimmed.
	MethodText = extract.MethodText
	// MethodFirstLine is [extract.MethodFirstLine]: its first line.
	MethodFirstLine = extract.MethodFirstLine
	// MethodUnparsed is [extract.MethodUnparsed]: nothing could be read.
	MethodUnparsed = extract.MethodUnparsed
)

// ExtractField is [extract.Field]: the string field of the JSON object
// in raw.
func ExtractField(raw, field string) ExtractResult { return extract.Field(raw, field) }

// ExtractFirstLine is [extract.FirstLine]: the first line of raw,
// trimmed; empty output is unparsed.
func ExtractFirstLine(raw string) ExtractResult { return extract.FirstLine(raw) }

// Dataset items, as Experiment.LoadItems hands them to a study.
type (
	// Items is [item.Set]: items aligned across languages by ID.
	Items = item.Set
	// Item is [item.Item]: one item, its variants per language and form.
	Item = item.Item
	// Variant is [item.Variant]: one language and form of an item.
	Variant = item.Variant
	// Form is [item.Form]: the form of a variant.
	Form = item.Form
	// LangForm is [item.LangForm]: a language and a form.
	LangForm = item.LangForm
	// ItemOptions is [item.Options]: how a dataset is read
	// (Experiment.LoadItemsWith).
	ItemOptions = item.Options
)

// Forms of a variant.
const (
	// Native is [item.Native]: the language's own script and words.
	Native = item.Native
	// CodeMixed is [item.CodeMixed]: native grammar with English
	// content words.
	CodeMixed = item.CodeMixed
	// English is [item.English]: English.
	English = item.English
)

// ParseForm is [item.ParseForm]: the Form s names (a form's name or a
// common abbreviation: "na", "cm", "en", "rom").
func ParseForm(s string) (Form, error) { return item.ParseForm(s) }

// Pipeline is [normalize.Pipeline]: an ordered list of normalisation
// steps.
type Pipeline = normalize.Pipeline

// Normalize is s after every normalisation step ([normalize.Default]:
// NFC, joiners dropped, nukta, digits, punctuation, case folding, white
// space).
func Normalize(s string) string { return normalize.Default.String(s) }

// EdgePunctuation is [match.EdgePunctuation]: what [WordOverlap] strips
// from each word's edges.
const EdgePunctuation = match.EdgePunctuation

// ExactMatch is [match.ExactMatch]: TriviaQA's exact match of pred
// against some gold or alias.
func ExactMatch(pred string, golds []string) bool { return match.ExactMatch(pred, golds) }

// ExactMatchSQuAD is [match.ExactMatchSQuAD]: exact match under SQuAD's
// normalisation against any gold.
func ExactMatchSQuAD(pred string, golds []string) bool { return match.ExactMatchSQuAD(pred, golds) }

// Substring is [match.Substring]: after p, the gold occurs in the
// response; an empty gold never matches.
func Substring(response, gold string, p Pipeline) bool { return match.Substring(response, gold, p) }

// WordOverlap is [match.WordOverlap]: after p, every word of the gold
// occurs among the response's words; an empty gold never matches.
func WordOverlap(response, gold string, p Pipeline) bool { return match.WordOverlap(response, gold, p) }

// TranslitMatch is [match.Translit]: pred and some gold name the same
// thing once both are romanized, reported beside strict matching.
func TranslitMatch(pred string, golds []string) bool { return match.Translit(pred, golds) }

// Proportion is [stats.Proportion]: a rate with its count, size and
// Wilson 95% interval.
type Proportion = stats.Proportion

// Wilson is [stats.Wilson]: the Wilson score interval of k successes in
// n trials at confidence conf.
func Wilson(k, n int, conf float64) (lo, hi float64) { return stats.Wilson(k, n, conf) }

// NewProportion is [stats.NewProportion]: k/n with its 95% Wilson
// interval; it panics when n < 0 or k is outside [0, n].
func NewProportion(k, n int) Proportion { return stats.NewProportion(k, n) }

// McNemarExact is [stats.McNemarExact]: McNemar's exact test (two-sided
// p) on the discordant counts b and c of a paired 2×2 table.
func McNemarExact(b, c int) float64 { return stats.McNemarExact(b, c) }

// PairedDiffCI is [stats.PairedDiffCI]: the Wald interval of a paired
// difference in proportions over n pairs with discordant counts b and c.
func PairedDiffCI(b, c, n int, conf float64) (d, lo, hi float64) {
	return stats.PairedDiffCI(b, c, n, conf)
}

// DiffCI is [stats.DiffCI]: the Wald interval of k1/n1 − k2/n2 for
// independent samples.
func DiffCI(k1, n1, k2, n2 int, conf float64) (d, lo, hi float64) {
	return stats.DiffCI(k1, n1, k2, n2, conf)
}

// TwoProportionZ is [stats.TwoProportionZ]: the pooled two-proportion z
// test of k1/n1 against k2/n2, with its two-sided p.
func TwoProportionZ(k1, n1, k2, n2 int) (z, p float64) { return stats.TwoProportionZ(k1, n1, k2, n2) }

// FisherExact is [stats.FisherExact]: Fisher's exact test of the 2×2
// table [[a, b], [c, d]], its odds ratio and two-sided p.
func FisherExact(a, b, c, d int) (oddsRatio, p float64) { return stats.FisherExact(a, b, c, d) }

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

// SortedKeysBy is [tables.SortedKeysBy]: the keys of m ordered by the
// string tuple key(k), as SortBy orders them.
func SortedKeysBy[K comparable, V any](m map[K]V, key func(K) []string) []K {
	return tables.SortedKeysBy(m, key)
}

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
