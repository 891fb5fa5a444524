// Package demo runs the built-in default: every smoke experiment under
// testdata/experiments (the three studies over the bundled real data)
// against one in-process simulator that knows all their items. Everything
// it produces is labelled simulated.
package demo

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bhashalab/bhasha/analysis/experiment"
	"github.com/bhashalab/bhasha/analysis/run"
	"github.com/bhashalab/bhasha/analysis/sim"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/klar"
	"github.com/bhashalab/bhasha/datasets/lang"
)

// Questions reads the bundled IndicKLAR page-demo facts.
func Questions(ctx context.Context, bundle string) (*item.Set, error) {
	return klar.LoadPageDemo(ctx, bundle, lang.New(), item.Options{})
}

// Facts turns an item set into simulator facts: each variant's question
// (and subject) is a cue, its answer and candidates what the simulated
// models know; a multiple-choice item's correct choice is its answer.
func Facts(s *item.Set) []sim.Fact {
	var out []sim.Fact
	for _, it := range s.Items {
		for _, v := range it.Variants {
			var cues []string
			if v.Question != "" {
				cues = append(cues, v.Question)
			}
			if v.Subject != "" {
				cues = append(cues, v.Subject)
			}
			if len(cues) == 0 {
				continue
			}
			out = append(out, sim.Fact{ID: it.ID, Relation: it.Relation, Language: v.Language, Form: string(v.Form),
				Cues: cues, Answer: v.Answer, Candidates: v.Candidates, Choices: it.Choices})
		}
	}
	return out
}

// Result is one experiment of the demo.
type Result struct {
	Name     string
	Dir      string
	Manifest *run.Manifest
}

// Run loads every *.yaml in dir, serves one simulator that knows all their
// items on a loopback port, runs each experiment into out/<name> and
// writes its tables under out/<name>/tables/.
func Run(ctx context.Context, dir, out, cacheDir string, log io.Writer) ([]Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("demo: no experiment files in %s", dir)
	}
	sort.Strings(files)
	var exps []*experiment.Experiment
	var facts []sim.Fact
	for _, f := range files {
		exp, err := experiment.Load(ctx, f)
		if err != nil {
			return nil, err
		}
		if exp.Items() != nil {
			facts = append(facts, Facts(exp.Items())...)
		}
		exps = append(exps, exp)
	}
	srv, err := sim.New(sim.Config{Facts: facts})
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	url, err := srv.Start(sctx, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var res []Result
	for _, exp := range exps {
		d := filepath.Join(out, strings.TrimSuffix(filepath.Base(exp.Path), ".yaml"))
		m, err := run.Execute(ctx, exp, run.Options{Out: d, Endpoint: url, CacheDir: cacheDir, Log: log})
		res = append(res, Result{Name: exp.Name, Dir: d, Manifest: m})
		if err != nil {
			return res, fmt.Errorf("demo %s: %w", exp.Name, err)
		}
		rep, err := tables.WriteReport(exp, d, m.Simulated)
		if err != nil {
			return res, fmt.Errorf("demo %s: %w", exp.Name, err)
		}
		for _, n := range rep.Notes {
			if log != nil {
				fmt.Fprintln(log, n)
			}
		}
	}
	return res, nil
}
