package brevity_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/examples/brevity"
)

// The brevity study built in Go: one Register option names it, its own
// option is set beside the shared ones, and the run on the simulator has
// its own criterion, table and figure (the README's "your own study").
func Example() {
	dir, _ := os.MkdirTemp("", "brevity-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	exp := bhasha.New("brevity", "testdata/trivia.jsonl", bhasha.Register(brevity.Study{}),
		brevity.BriefWords(1), bhasha.Models(bhasha.SimulatedModels()[0]))
	r, err := bhasha.Run(ctx, exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Experiment().AnswerSchema().Criteria())
	lengths, _ := r.Table("answer_lengths")
	fmt.Print(lengths.Markdown())
	figs, _ := r.Figures()
	for _, f := range figs {
		fmt.Println(f.Name, "·", f.N)
	}
	// Output:
	// [correct brief]
	// **answer_lengths** (1 rows, SIMULATED models)
	//
	// | model | n | mean_words | k | rate | ci_lo | ci_hi |
	// |---|---:|---:|---:|---:|---:|---:|
	// | sim-tiny-1b | 12 | 1.416667 | 7 | 0.583333 | 0.319511 | 0.806740 |
	// brief_by_model · n = 12 answers
}
