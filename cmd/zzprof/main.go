package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bhashalab/bhasha"
)

func main() {
	dir := os.Args[1]
	os.Remove(filepath.Join(dir, "scored.parquet"))
	os.RemoveAll(filepath.Join(dir, "scored-tables"))
	r, err := bhasha.Open(context.Background(), dir, bhasha.OnScoring(func(p bhasha.ScoringProgress) {
		if p.Final || p.Step != "scoring" { fmt.Fprintln(os.Stderr, "STEP", p.Step, p.Final, p.Elapsed) }
	}))
	if err != nil { panic(err) }
	t, err := r.Table("accuracy")
	if err != nil { panic(err) }
	fmt.Println(len(t.Rows))
}
