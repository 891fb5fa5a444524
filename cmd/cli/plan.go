package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/analysis/bpe"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/runtime/shard"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// plan is what `bhasha plan` counts of an experiment.
type plan struct {
	job    *run.Job
	layout *shard.Layout // nil without --shards
	tally  map[shard.Cell]*shard.Count
	tokens []string // "model: tokenizer file" of the models counted with one
}

// planOf counts exp's requests and prompt tokens (with the tokenizers it
// names), divided into n shards as bhasha run --shard K/n does (none: 0).
func planOf(ctx context.Context, exp *experiment.Experiment, n int) (*plan, error) {
	j, err := exp.Job(ctx)
	if err != nil {
		return nil, err
	}
	p := &plan{job: j}
	if n > 0 {
		if p.layout, err = shard.Plan(j, n); err != nil {
			return nil, err
		}
	}
	toks := map[string]*bpe.Tokenizer{}
	models := exp.Models
	if exp.Judge != nil {
		models = append(models[:len(models):len(models)], *exp.Judge)
	}
	for _, m := range models {
		path := exp.TokenizerPath(m)
		if path == "" || toks[m.Name] != nil {
			continue
		}
		t, err := bpe.Load(path)
		if err != nil {
			return nil, fmt.Errorf("plan: model %s: %w", m.Name, err)
		}
		toks[m.Name] = t
		p.tokens = append(p.tokens, m.Name+": "+path)
	}
	count := func(r engine.Request) (int, bool, error) {
		t := toks[r.Key.Model]
		if t == nil {
			return 0, false, nil
		}
		// As the tokenization tables count: the raw prompt, or a chat
		// request's messages concatenated, without a chat template.
		text := r.Prompt
		for _, m := range r.Messages {
			text += m.Content
		}
		n, err := t.Count(text)
		return n, true, err
	}
	if p.tally, err = shard.Tally(j, p.layout, count); err != nil {
		return nil, err
	}
	return p, nil
}

// unknownStages are the stages after the first of which the plan counts
// no request: those whose requests depend on what the answers say.
func (p *plan) unknownStages() []int {
	var out []int
	for s := 2; s <= p.job.Stages; s++ {
		if !slices.ContainsFunc(shard.Cells(p.tally), func(c shard.Cell) bool { return c.Stage == s }) {
			out = append(out, s)
		}
	}
	return out
}

func cmdPlan(ctx context.Context, reg *bhasha.Registry, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", "plan --config FILE [--shards N] [--rate R]", stderr)
	cfg := fs.String("config", "", "experiment file (YAML)")
	shards := fs.Int("shards", 0, "divide the experiment into N shards, as bhasha run --shard K/N does, and list them")
	rate := fs.Float64("rate", 0, "requests a second one GPU server answers: print the GPU-hours")
	skip := fs.Bool("skip-invalid", false, "skip invalid dataset records instead of stopping")
	if err := parseFlags(fs, args, "plan: --config is required", cfg); err != nil {
		return err
	}
	if *shards < 0 || *rate < 0 {
		return fmt.Errorf("plan: --shards and --rate must not be negative (%d, %g)", *shards, *rate)
	}
	exp, err := experiment.Load(ctx, *cfg, experiment.LoadOptions{SkipInvalid: *skip, Studies: reg})
	if err != nil {
		return ownStudy(fmt.Errorf("plan: %w", err))
	}
	p, err := planOf(ctx, exp, *shards)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	p.print(stdout, exp.Name, *shards, *rate)
	return nil
}

// print writes the plan: requests and tokens by shard, stage and model,
// the shards, and the GPU-hours at rate requests a second (0: none).
func (p *plan) print(w io.Writer, name string, n int, rate float64) {
	total, shardReqs := 0, map[int]int{}
	for c, k := range p.tally {
		total += k.Requests
		shardReqs[c.Shard] += k.Requests
	}
	fmt.Fprintf(w, "%s: %d request(s) in %d stage(s) (experiment sha256 %.12s…); nothing is sent\n", name, total, p.job.Stages, p.job.Hash)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	head := "stage\tmodel\trequests\tprompt tokens\tanswer tokens (at most)\t"
	if n > 0 {
		head = "shard\t" + head
	}
	fmt.Fprintln(tw, head)
	later := false
	for _, c := range shard.Cells(p.tally) {
		k := p.tally[c]
		prompt, answer := "-", "-"
		if k.Built > 0 && k.Counted == k.Built {
			prompt = fmt.Sprint(k.PromptTokens)
		}
		if k.Built == k.Requests {
			answer = fmt.Sprint(k.AnswerTokens)
		} else {
			later = true
		}
		row := fmt.Sprintf("%d\t%s\t%d\t%s\t%s\t", c.Stage, c.Model, k.Requests, prompt, answer)
		if n > 0 {
			row = shard.Spec{K: c.Shard, N: n}.Dir() + "\t" + row
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	if len(p.tokens) == 0 {
		fmt.Fprintln(w, "prompt tokens are not counted: no model names an offline tokenizer (tokenizer: FILE in its entry)")
	} else {
		fmt.Fprintf(w, "prompt tokens counted offline, without a chat template, with %s\n", strings.Join(p.tokens, ", "))
	}
	if later {
		fmt.Fprintln(w, "-: built from an earlier stage's answers (a second step, a judge's verdict): counted as if every answer is ok; their tokens are not known before the run")
	}
	for _, s := range p.unknownStages() {
		fmt.Fprintf(w, "stage %d: not counted: which answers it asks about depends on what they say (a judge that reads only some answers)\n", s)
	}
	if p.layout != nil {
		fmt.Fprintf(w, "%d shards, by answering model and item (bhasha run --shard K/%d runs shard K of this layout):\n", n, n)
		tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "shard\tanswering model\titems\trequests\t")
		for k, s := range p.layout.Shards {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t\n", shard.Spec{K: k, N: n}.Dir(), s.Model, len(s.Items), shardReqs[k])
		}
		tw.Flush()
	}
	if rate > 0 {
		longest := 0
		for _, r := range shardReqs {
			longest = max(longest, r)
		}
		fmt.Fprintf(w, "GPU-hours at %g requests a second: %.2f in all", rate, float64(total)/rate/3600)
		if n > 0 {
			fmt.Fprintf(w, "; the longest shard takes %.2f h", float64(longest)/rate/3600)
		}
		fmt.Fprintln(w)
	}
}
