// Package browsertest opens pages in headless Chromium for the tests that
// check what a person sees (a report's charts drew, no payload ran). It
// runs Chromium with the flags the environment documents: no sandbox, no
// GPU, no background networking or component updates, a fresh profile.
package browsertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Chromium is the browser, or skips the test when it is not installed
// (fails it when BHASHA_REQUIRE_BROWSER is set, as make test sets it).
func Chromium(t testing.TB) string {
	t.Helper()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("BHASHA_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium is required (BHASHA_REQUIRE_BROWSER) but not installed")
		}
		t.Skip("chromium not installed: the rendering check is skipped")
	}
	return browser
}

func args(t testing.TB, budget time.Duration) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--no-first-run", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=" + strconv.FormatInt(budget.Milliseconds(), 10)}
}

// DumpDOM opens file (an absolute path) and returns its DOM after the
// page's scripts ran for budget of virtual time, and every message the
// page wrote to its console (errors, uncaught exceptions, logs), as
// Chromium reports them with --enable-logging.
func DumpDOM(t testing.TB, browser, file string, budget time.Duration) (dom string, console []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, browser, append(args(t, budget), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+file)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium on %s: %v\n%s", file, err, stderr.String())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	return string(out), console
}

// Screenshot writes a PNG of file at width × height for a person to look
// at (best effort: a test does not fail on it).
func Screenshot(t testing.TB, browser, file, png string, width, height int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exec.CommandContext(ctx, browser, append(args(t, 5*time.Second), "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height),
		"--screenshot="+png, "file://"+file)...).Run()
}
