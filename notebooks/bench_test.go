package notebooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha"
)

// BenchmarkNotebookCells executes a few cells through this checkout's
// GoNB kernel (installed by install-kernel.sh into a Jupyter data
// directory of its own; bin/gonb and bin/goimports as make kernel builds
// them) as Jupyter does, with jupyter_client, and reports how long each
// kind of cell took from its execute request to the kernel's reply (what
// a person waits; the kernel's start is not in it):
//
//   - plain-cell-s: the first cell, a %% cell printing a line (GoNB's
//     first build in its fresh folder);
//   - first-cell-s: the first cell that opens a run and shows a table,
//     after a cell importing bhasha and kernel;
//   - later-cell-s: the same cell again: what every later cell pays;
//   - stripped-cell-s: the same cell again once %goflags "-ldflags=-s -w"
//     has set the build to leave out the symbol table and DWARF.
//
// Each cell is a program of its own, compiled with every declaration the
// notebook made so far, linked and run; Go's build cache keeps the
// compiled packages between cells and kernels. Skipped without Jupyter or
// the kernel's tools.
func BenchmarkNotebookCells(b *testing.B) {
	if _, err := exec.LookPath("jupyter"); err != nil {
		b.Skip("jupyter is not installed: make kernel installs it")
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import jupyter_client").Run(); err != nil {
		b.Skipf("%s has no jupyter_client (make kernel installs it): %v", py, err)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	for _, tool := range []string{"gonb", "goimports"} {
		if _, err := os.Stat(filepath.Join(repo, "bin", tool)); err != nil {
			b.Skipf("bin/%s is not built (make kernel builds it): %v", tool, err)
		}
	}
	dir := b.TempDir()
	data := filepath.Join(dir, "jupyter-data")
	env := append(os.Environ(), "JUPYTER_DATA_DIR="+data, "JUPYTER_PATH=")
	install := exec.Command(filepath.Join(repo, "notebooks", "install-kernel.sh"), goDir(b), "bhasha-bench")
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		b.Fatalf("installing the kernel: %v\n%s", err, out)
	}

	run := filepath.Join(dir, "run")
	exp := bhasha.Distractors(filepath.Join(repo, "testdata", "triviaqa", "triviaqa_small.jsonl"), bhasha.Conditions("clean", "hi"), bhasha.SampleItems(4))
	if _, err := bhasha.Run(context.Background(), exp, bhasha.Out(run), bhasha.CacheDir(filepath.Join(dir, "cache"))); err != nil {
		b.Fatal(err)
	}
	show := fmt.Sprintf("%%%%\nkernel.Show(kernel.Open(%q), \"conditions_wide\")", run)
	cells := []string{
		"%%\nfmt.Println(\"hello\")",
		"import (\n\t\"github.com/bhashalab/bhasha\"\n\t\"github.com/bhashalab/bhasha/kernel\"\n)\n\nvar _, _ = bhasha.SimulatedModels, kernel.MaxRows",
		show,
		show,
		"%goflags \"-ldflags=-s -w\"\n" + show,
		show,
	}
	src, err := json.Marshal(cells)
	if err != nil {
		b.Fatal(err)
	}
	cellsFile := filepath.Join(dir, "cells.json")
	if err := os.WriteFile(cellsFile, src, 0o644); err != nil {
		b.Fatal(err)
	}

	var plain, first, later, stripped float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(py, "-c", executeCells, "bhasha-bench", cellsFile, dir)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("executing the cells: %v\n%s%s", err, out, stderr.String())
		}
		var took []float64
		if err := json.Unmarshal(out, &took); err != nil || len(took) != len(cells) {
			b.Fatalf("executing the cells: %q: %v", out, err)
		}
		plain, first, later, stripped = plain+took[0], first+took[2], later+took[3], stripped+took[5]
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(plain/n, "plain-cell-s")
	b.ReportMetric(first/n, "first-cell-s")
	b.ReportMetric(later/n, "later-cell-s")
	b.ReportMetric(stripped/n, "stripped-cell-s")
}

// executeCells starts the kernel named argv[1] in the folder argv[3],
// executes the cells of the JSON list in the file argv[2] one after the
// other, and prints the seconds each took, from its execute request to
// the kernel's reply, as a JSON list. A cell that fails ends it with the
// error on stderr.
const executeCells = `
import json, sys, time
from jupyter_client.manager import start_new_kernel
name, cells, cwd = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
km, kc = start_new_kernel(kernel_name=name, cwd=cwd, startup_timeout=600)
try:
    took = []
    for i, src in enumerate(cells):
        errors = []
        def hook(msg):
            if msg["msg_type"] == "error":
                errors.append(msg["content"].get("evalue", ""))
            elif msg["msg_type"] == "stream" and msg["content"].get("name") == "stderr":
                errors.append(msg["content"].get("text", ""))
        t0 = time.monotonic()
        reply = kc.execute_interactive(src, timeout=600, output_hook=hook)
        took.append(time.monotonic() - t0)
        if reply["content"]["status"] != "ok":
            sys.exit("cell %d failed: %s" % (i, " ".join(errors)))
    print(json.dumps(took))
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
`
