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
	"io/fs"

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
