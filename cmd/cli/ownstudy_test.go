package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An experiment file naming a study the command does not know is refused
// by every subcommand that reads one, with the unknown study first and
// how to get a command that knows it, and nothing written.
func TestUnknownStudySaysHow(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(cfg, []byte("name: mine\nstudy: mystudy\nmy_option: 3\nmodels: [{name: m, served_name: sim-tiny-1b}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "--config", cfg, "--out", out}},
		{"batch export", []string{"batch", "export", "--config", cfg, "--out", out}},
		{"sim", []string{"sim", "--addr", "127.0.0.1:0", "--config", cfg}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := dispatch(context.Background(), c.args, &stdout, &stderr)
			if err == nil {
				t.Fatal("no error")
			}
			if code := ExitCode(context.Background(), err); code != exitFailed {
				t.Errorf("exit status %d, want %d", code, exitFailed)
			}
			msg := err.Error()
			study, key := strings.Index(msg, `unknown study "mystudy"`), strings.Index(msg, `unknown key "my_option"`)
			if study < 0 || key < study {
				t.Errorf("the unknown study is not listed first:\n%s", msg)
			}
			if !strings.Contains(msg, "func main() { cli.Main(mystudy.Study{}) }") || !strings.Contains(msg, "docs/own-study.md") {
				t.Errorf("the message does not say how to run one's own study:\n%s", msg)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused command wrote %s: %v", out, err)
			}
		})
	}
}
