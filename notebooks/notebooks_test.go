// Package notebooks holds the study notebooks (*.ipynb, run under GoNB)
// and the test that checks them once `make notebooks` has executed them.
package notebooks

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/internal/browsertest"
)

type notebook struct {
	Cells []struct {
		CellType string `json:"cell_type"`
		Outputs  []struct {
			OutputType string            `json:"output_type"`
			Name       string            `json:"name"`
			Text       any               `json:"text"`
			Data       map[string]any    `json:"data"`
			Ename      string            `json:"ename"`
			Evalue     string            `json:"evalue"`
			Metadata   map[string]any    `json:"metadata"`
			Transient  map[string]string `json:"transient"`
		} `json:"outputs"`
	} `json:"cells"`
}

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var b strings.Builder
		for _, s := range x {
			b.WriteString(text(s))
		}
		return b.String()
	}
	return ""
}

// TestExecutedNotebooks reads the notebooks `make notebooks` executed
// (BHASHA_NOTEBOOKS names their folder; skipped without it): every
// notebook of this folder was executed, no output is an error or a panic,
// each holds its expected tables and figures, each figure with its static
// image (image/png, and in its HTML); and the executed quickstart,
// opened in headless Chromium, shows its figure drawn (a screenshot is
// written beside it).
func TestExecutedNotebooks(t *testing.T) {
	// expected is what each notebook's outputs must hold: the tables (by
	// name, as kernel.Table shows them), at least this many figures, and
	// sample explorers.
	expected := map[string]struct {
		tables             []string
		figures, explorers int
	}{
		"00-quickstart": {tables: []string{"acc_clc_wide"}, figures: 2},
		"01-indicklar": {tables: []string{"form_gaps", "strategy_tests", "language_tests", "acc_clc_wide", "flip_points_wide", "tokenization_marks", "latency", "conclusions", "sensitivity"},
			figures: 10},
		"02-indicquest":  {tables: []string{"domains_wide", "judge_agreement", "judge_by_script", "protocol_rankings", "model_gaps", "conclusions", "sensitivity"}, figures: 5},
		"03-distractors": {tables: []string{"conditions_wide", "condition_tests", "script_decomposition", "judge_by_script", "sensitivity", "conclusions"}, figures: 4, explorers: 1},
	}
	dir := os.Getenv("BHASHA_NOTEBOOKS")
	if dir == "" {
		t.Skip("BHASHA_NOTEBOOKS is not set: `make notebooks` executes the notebooks and runs this test")
	}
	sources, err := filepath.Glob("*.ipynb")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no notebooks here: %v", err)
	}
	tableRe := regexp.MustCompile(`data-table="([^"]+)"`)
	for _, src := range sources {
		name := strings.TrimSuffix(src, ".ipynb")
		want, ok := expected[name]
		if !ok {
			t.Errorf("%s: no expectations in notebooks_test.go", name)
		}
		b, err := os.ReadFile(filepath.Join(dir, src))
		if err != nil {
			t.Errorf("%s was not executed: %v", name, err)
			continue
		}
		var nb notebook
		if err := json.Unmarshal(b, &nb); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		tablesSeen := map[string]bool{}
		figures, explorers := 0, 0
		for i, c := range nb.Cells {
			for _, o := range c.Outputs {
				if o.OutputType == "error" {
					t.Errorf("%s cell %d: %s: %s", name, i, o.Ename, o.Evalue)
				}
				if s := text(o.Text); o.Name == "stderr" && (strings.Contains(s, "panic:") || strings.Contains(s, "ERROR")) {
					t.Errorf("%s cell %d wrote to stderr: %.300s", name, i, s)
				}
				html := text(o.Data["text/html"])
				for _, m := range tableRe.FindAllStringSubmatch(html, -1) {
					tablesSeen[m[1]] = true
				}
				n := strings.Count(html, `<div class="chart" id="bh-fig-`)
				figures += n
				// A saved notebook shows its figures where scripts do not
				// run: each figure's output holds it drawn, as image/png
				// and inside its HTML.
				if n > 0 {
					img, _ := o.Data["image/png"].(string)
					b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(img, "\n", ""))
					if err == nil {
						_, err = png.DecodeConfig(bytes.NewReader(b))
					}
					if img == "" || err != nil || n != 1 {
						t.Errorf("%s cell %d: a figure's output (of %d figures) holds no static image: image/png of %d characters (%v)", name, i, n, len(img), err)
					} else if !strings.Contains(html, `<img src="data:image/png;base64,`) {
						t.Errorf("%s cell %d: a figure's HTML holds no static image", name, i)
					}
				}
				explorers += strings.Count(html, `-explorer">`)
			}
		}
		for _, tb := range want.tables {
			if !tablesSeen[tb] {
				t.Errorf("%s: no %s table in its outputs", name, tb)
			}
		}
		if figures < want.figures || explorers < want.explorers {
			t.Errorf("%s: %d figures and %d sample explorers in its outputs, want at least %d and %d", name, figures, explorers, want.figures, want.explorers)
		}
	}
	// nbconvert's output (make notebooks keeps it as NAME.log) holds none of
	// GoNB's own log: the kernel `make kernel` installs logs to gonb.log
	// beside its kernel.json, so its start-up lines ("Warning message",
	// "Error message", "Program gopls is not installed", ...) stay out.
	klogLine := regexp.MustCompile(`(?m)^[IWE]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^ ]+:\d+\].*$`)
	logs := []string{filepath.Join("endpoint", "00-quickstart.log")}
	for _, src := range sources {
		logs = append(logs, strings.TrimSuffix(src, ".ipynb")+".log")
	}
	for _, name := range logs {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("nbconvert's log: %v", err)
			continue
		}
		if m := klogLine.Find(b); m != nil {
			t.Errorf("%s holds GoNB's log, not sent to gonb.log: %q", name, m)
		} else if strings.Contains(string(b), "gopls is not installed") {
			t.Errorf("%s holds GoNB's 'gopls is not installed'", name)
		}
	}
	// The quickstart pointed at a server by BHASHA_ENDPOINT alone
	// (against-server.sh): it asked that server, and showed its table and
	// figure.
	if b, err := os.ReadFile(filepath.Join(dir, "endpoint", "00-quickstart.ipynb")); err != nil {
		t.Errorf("the quickstart was not run against a server: %v", err)
	} else if nb := string(b); strings.Contains(nb, `"output_type": "error"`) || !strings.Contains(nb, `data-table=\"acc_clc_wide\"`) || !strings.Contains(nb, `class=\"chart\"`) {
		t.Errorf("the quickstart against a server: an error, or no table or figure in its outputs")
	}
	if m, err := os.ReadFile(filepath.Join(dir, "endpoint", "out", "notebooks", "00-quickstart", "run", "manifest.json")); err != nil || !strings.Contains(string(m), `"endpoint": "http://127.0.0.1:18431/v1"`) {
		t.Errorf("the quickstart's run against the server did not ask it: %v %.300s", err, m)
	}
	// The quickstart as a reader sees it: the figure drew.
	page, err := filepath.Abs(filepath.Join(dir, "00-quickstart.html"))
	if err != nil {
		t.Fatal(err)
	}
	browser := browsertest.Chromium(t)
	dom, console := browsertest.DumpDOM(t, browser, page, 8*time.Second)
	for _, l := range console { // nbconvert's page loads RequireJS and MathJax from the network, which is off
		t.Logf("console: %s", l)
	}
	if !strings.Contains(dom, "<canvas") {
		t.Error("the executed quickstart's figure did not draw in Chromium")
	}
	browsertest.Screenshot(t, browser, page, filepath.Join(dir, "00-quickstart.png"), 1300, 3000)
}
