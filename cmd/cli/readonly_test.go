package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// chmodTree sets the permissions of every file (file) and folder (dir)
// under root, root included.
func chmodTree(t *testing.T, root string, file, dir os.FileMode) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, dir)
		}
		return os.Chmod(p, file)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readOnly is a way to run a child process that sees a directory it
// cannot write: wrap makes the command that runs argv so, or skips.
type readOnly struct {
	name string
	wrap func(t *testing.T, dir, work string, argv []string) *exec.Cmd
}

// readOnlyWays are the ways this machine allows: a read-only bind mount
// in a mount namespace of the child's own (root with unshare(1); nothing
// is mounted outside it), and a directory without write permission, as
// the user running the tests or, for root (whom permissions do not
// stop), as the user nobody.
func readOnlyWays() []readOnly {
	return []readOnly{
		{"read-only mount", func(t *testing.T, dir, _ string, argv []string) *exec.Cmd {
			if os.Geteuid() != 0 {
				t.Skip("a read-only bind mount needs root; the permission case covers a user")
			}
			unshare, err := exec.LookPath("unshare")
			if err != nil {
				t.Skip("no unshare(1) for a mount namespace of the child's own")
			}
			mount := `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"`
			if out, err := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c", mount, "sh", dir, "true").CombinedOutput(); err != nil {
				t.Skipf("no read-only bind mount here (unshare --mount: %v: %s)", err, out)
			}
			return exec.Command(unshare, append([]string{"--mount", "--propagation", "private", "sh", "-c", mount, "sh", dir}, argv...)...)
		}},
		{"no write permission", func(t *testing.T, dir, work string, argv []string) *exec.Cmd {
			chmodTree(t, dir, 0o444, 0o555)
			t.Cleanup(func() { chmodTree(t, dir, 0o644, 0o755) })
			if os.Geteuid() != 0 {
				return exec.Command(argv[0], argv[1:]...)
			}
			// Root writes through permissions: the child runs as nobody,
			// from a copy of this binary it can reach, into work.
			bin := filepath.Join(work, "bhasha.test")
			if err := copyFile(argv[0], bin); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			for p := work; p != "/" && p != "."; p = filepath.Dir(p) {
				if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
					if err := os.Chmod(p, fi.Mode().Perm()|0o005); err != nil {
						t.Skipf("cannot open %s to the user nobody: %v", p, err)
					}
				}
			}
			if err := os.Chmod(filepath.Join(work, "elsewhere"), 0o777); err != nil {
				t.Fatal(err)
			}
			c := exec.Command(bin, argv[1:]...)
			c.Dir = work
			c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			return c
		}},
	}
}

// A run directory that cannot be written (a reviewer's copy on read-only
// media) is reported from: bhasha report --html writes the report
// elsewhere and says the directory is read-only, its scored answers not
// stored and its tables not written; without an output elsewhere it says
// what to do; bhasha.Open gives the tables. Not a file of the directory
// changes.
func TestReportFromReadOnlyRun(t *testing.T) {
	url := simtest.Start(t, sim.Config{})
	_, out, _ := finishedRun(t, t.TempDir(), "readonly", 6, url)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, way := range readOnlyWays() {
		t.Run(way.name, func(t *testing.T) {
			work := t.TempDir()
			ro := filepath.Join(work, "run")
			if err := os.CopyFS(ro, os.DirFS(out)); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(work, "elsewhere"), 0o755); err != nil {
				t.Fatal(err)
			}
			html := filepath.Join(work, "elsewhere", "report.html")
			before := snapshot(t, ro)
			lock, lockErr := os.ReadFile(filepath.Join(ro, ".lock"))

			c := way.wrap(t, ro, work, []string{self, "report", "--run", ro, "--html", html})
			c.Env = append(os.Environ(), "BHASHA_AS_CLI=1")
			code, msg := runCLI(t, c)
			if code != 0 {
				t.Fatalf("report --html elsewhere: exit %d: %s", code, msg)
			}
			for _, w := range []string{ro + " is read-only: its scored answers were not stored", ro + " is read-only: its tables were not written", "6 scored answers"} {
				if !strings.Contains(msg, w) {
					t.Errorf("report does not say %q: %s", w, msg)
				}
			}
			if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "read-only") {
				t.Errorf("the HTML report (%v) does not say the run is read-only", err)
			}

			c = way.wrap(t, ro, work, []string{self, "report", "--run", ro})
			c.Env = append(os.Environ(), "BHASHA_AS_CLI=1")
			code, msg = runCLI(t, c)
			if code == 0 || !strings.Contains(msg, ro+" is read-only") || !strings.Contains(msg, "--html FILE") {
				t.Errorf("report into the read-only run: exit %d: %s", code, msg)
			}

			c = way.wrap(t, ro, work, []string{self, "-test.run=^TestOpenReadOnlyChild$", "-test.v"})
			c.Env = append(os.Environ(), "BHASHA_READONLY_RUN="+ro)
			code, msg = runCLI(t, c)
			if code != 0 || !strings.Contains(msg, "answers: 6 rows") || !strings.Contains(msg, "is read-only: its scored answers were not stored") {
				t.Errorf("bhasha.Open on the read-only run: exit %d: %s", code, msg)
			}

			sameFiles(t, "read-only run", before, snapshot(t, ro))
			if after, err := os.ReadFile(filepath.Join(ro, ".lock")); string(after) != string(lock) || (err == nil) != (lockErr == nil) {
				t.Errorf("the lock file changed: %q → %q", lock, after)
			}
		})
	}
}

// TestOpenReadOnlyChild is TestReportFromReadOnlyRun's child: it opens
// the run BHASHA_READONLY_RUN names and prints its answers table's size
// and its notes.
func TestOpenReadOnlyChild(t *testing.T) {
	dir := os.Getenv("BHASHA_READONLY_RUN")
	if dir == "" {
		t.Skip("the child of TestReportFromReadOnlyRun")
	}
	r, err := bhasha.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := r.Table("answers")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("answers: %d rows\n", tab.Len())
	for _, n := range r.Notes() {
		fmt.Printf("note: %s\n", n)
	}
}
