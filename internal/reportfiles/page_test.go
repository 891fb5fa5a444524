package reportfiles

import (
	"path/filepath"
	"testing"
)

// The report names an input relative to the run directory when it lies
// in the folder that holds the run, else by its file name: never by an
// absolute path of this machine.
func TestShownPath(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "out", "demo", "smoke-klar")
	for _, c := range []struct{ name, path, want string }{
		{"inside the run", filepath.Join(run, "experiment.yaml"), "experiment.yaml"},
		{"beside the run", filepath.Join(root, "out", "demo", "inputs", "klar"), "../inputs/klar"},
		{"elsewhere", filepath.Join(root, "data", "triviaqa.jsonl"), "triviaqa.jsonl"},
		{"relative", "data/x.jsonl", "x.jsonl"},
		{"none", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := shownPath(run, c.path); got != c.want {
				t.Errorf("shownPath(%q) = %q, want %q", c.path, got, c.want)
			}
		})
	}
}
