package brevity_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// codeChangeMain is a study author's program: it runs the study (when
// given an experiment file and a cache), then opens the run and prints
// how many answers the brief criterion counts, and the run's notes.
const codeChangeMain = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bhashalab/bhasha"
	"example.com/mystudy/brevity"
)

func main() {
	ctx := context.Background()
	reg := bhasha.BuiltinStudies()
	if err := reg.Add(brevity.Study{}); err != nil {
		panic(err)
	}
	dir := os.Args[1]
	if len(os.Args) == 4 {
		exp, err := bhasha.Load(ctx, os.Args[2], bhasha.WithStudies(reg))
		if err != nil {
			panic(err)
		}
		if _, err := bhasha.Run(ctx, exp, bhasha.Simulator(), bhasha.Out(dir), bhasha.CacheDir(os.Args[3])); err != nil {
			panic(err)
		}
	}
	r, err := bhasha.Open(ctx, dir, bhasha.WithStudies(reg))
	if err != nil {
		panic(err)
	}
	acc, err := r.Table("accuracy")
	if err != nil {
		panic(err)
	}
	k, n := 0, 0
	for _, row := range acc.Rows {
		if acc.Str(row, "metric") == "brief" {
			k += int(acc.Num(row, "k"))
			n += int(acc.Num(row, "n"))
		}
	}
	fmt.Printf("brief %d of %d\n", k, n)
	for _, note := range r.Notes() {
		fmt.Println("note:", note)
	}
}
`

// A study author changes the study's scoring code and opens the same run
// again with the new build: the scored answers and tables the old build
// kept in the run directory are not served (both builds are development
// builds of a module in a go.work workspace, as in a notebook); the
// note says why, and the next open of the new build reuses what it kept.
func TestChangedStudyCodeScoresAgain(t *testing.T) {
	work, mod, build := studyWorkspace(t)
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(mod, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", codeChangeMain)
	for _, name := range []string{"brevity.go", "figures.go", "lengths.go", "plan.go", "testdata/brevity.yaml", "testdata/trivia.jsonl"} {
		b, err := os.ReadFile(filepath.FromSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		write("brevity/"+name, string(b))
	}
	runDir, cache := filepath.Join(work, "run"), filepath.Join(work, "cache")
	open := func(exe string, args ...string) (brief string, notes string) {
		t.Helper()
		cmd := exec.Command(exe, append([]string{runDir}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", exe, err, stdout.String(), stderr.String())
		}
		first, rest, _ := strings.Cut(stdout.String(), "\n")
		return first, rest
	}

	old := build("old", ".")
	before, _ := open(old, filepath.Join(mod, "brevity", "testdata", "brevity.yaml"), cache)
	if before == "brief 24 of 24" || !strings.HasSuffix(before, " of 24") {
		t.Fatalf("the study as written: %q (want some of 24 answers brief, not all)", before)
	}
	if again, notes := open(old); again != before || strings.Contains(notes, "code") {
		t.Fatalf("the same build again: %q, notes:\n%s", again, notes)
	}

	plan := filepath.Join(mod, "brevity", "plan.go")
	src, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(src), "row.Marks.Set(markBrief, p.brief(&row))", "row.Marks.Set(markBrief, true)", 1)
	if changed == string(src) {
		t.Fatal("plan.go no longer sets markBrief as this test expects")
	}
	write("brevity/plan.go", changed)
	now := build("new", ".")
	after, notes := open(now)
	if after != "brief 24 of 24" {
		t.Errorf("the changed study's table: %q, want brief 24 of 24 (the old build's %q served?)\nnotes:\n%s", after, before, notes)
	}
	if !strings.Contains(notes, "the program's code is not the code that scored them") {
		t.Errorf("no note says the code changed:\n%s", notes)
	}
	if again, notes := open(now); again != after || strings.Contains(notes, "the program's code") {
		t.Errorf("the new build again: %q, notes:\n%s", again, notes)
	}
}
