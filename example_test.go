package bhasha_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bhashalab/bhasha"
)

// An IndicKLAR experiment built in Go, run against the in-process
// simulator (no endpoint given), its accuracy table as Markdown and as a
// DataFrame, and the run reopened from its directory.
func Example() {
	dir, _ := os.MkdirTemp("", "bhasha-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	exp := bhasha.IndicKLAR("testdata/indicklar/project_page_demo_hin_excerpt.json",
		bhasha.Languages("hin"), bhasha.Forms("native", "english"), bhasha.Strategies("baseline", "tint-en"), bhasha.SampleItems(6),
		bhasha.Models(bhasha.SimulatedModels()[2]))
	r, err := bhasha.Run(ctx, exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		fmt.Println(err)
		return
	}
	acc, _ := r.Table("accuracy")
	fmt.Print(acc.Markdown())
	df := acc.DataFrame()

	again, _ := bhasha.Open(ctx, r.Dir())
	acc2, _ := again.Table("accuracy")
	fmt.Println(df.Nrow(), acc2.Markdown() == acc.Markdown())
	// Output:
	// **accuracy** (9 rows, SIMULATED models)
	//
	// | study | model | language | form | strategy | condition | metric | k | n | rate | ci_lo | ci_hi | failed |
	// |---|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|
	// | indicklar | sim-large-70b | eng | english | baseline |  | correct | 4 | 6 | 0.666667 | 0.299993 | 0.903229 | 0 |
	// | indicklar | sim-large-70b | eng | english | baseline |  | translit | 4 | 6 | 0.666667 | 0.299993 | 0.903229 | 0 |
	// | indicklar | sim-large-70b | eng | english | baseline |  | switched | 0 | 6 | 0 | 0 | 0.390334 | 0 |
	// | indicklar | sim-large-70b | hin | native | baseline |  | correct | 2 | 6 | 0.333333 | 0.096771 | 0.700007 | 0 |
	// | indicklar | sim-large-70b | hin | native | baseline |  | translit | 2 | 6 | 0.333333 | 0.096771 | 0.700007 | 0 |
	// | indicklar | sim-large-70b | hin | native | baseline |  | switched | 0 | 6 | 0 | 0 | 0.390334 | 0 |
	// | indicklar | sim-large-70b | hin | native | tint-en |  | correct | 3 | 6 | 0.500000 | 0.187616 | 0.812384 | 0 |
	// | indicklar | sim-large-70b | hin | native | tint-en |  | translit | 3 | 6 | 0.500000 | 0.187616 | 0.812384 | 0 |
	// | indicklar | sim-large-70b | hin | native | tint-en |  | switched | 0 | 6 | 0 | 0 | 0.390334 | 0 |
	// 9 true
}
