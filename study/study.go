// Package study is what a study author imports: the interfaces a study
// implements ([Study], [Plan], [AnswerSchemer], [Figurer]) and the
// helpers it calls to build requests, score answers into rows ([Row]), and
// declare its tables and figures, so that a study of your own is written
// against this package and the root package bhasha (which registers and
// runs it) alone. docs/own-study.md walks through writing one, in the
// order Name, About and Check; Build; Stages and Requests; Extract;
// Score; AnswerSchema; Tables; Figures.
//
// Register a study with bhasha.Register(mystudy.Study{}) on an
// experiment built in Go, or reg.Add(mystudy.Study{}) on
// bhasha.BuiltinStudies() for experiment files and for reopening its
// runs; a command of its own is cli.Main(mystudy.Study{}) (package
// cmd/cli).
//
// Every name here is the same type, constant or function as in the
// package that defines it (named in its doc comment), so values pass
// freely between this package and those.
package study

import (
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
