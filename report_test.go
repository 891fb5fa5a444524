package bhasha_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
)

// payloads a model (or a dataset) may return; none may run in a report.
var payloads = []string{
	`<script>document.body.setAttribute('data-pwned','script')</script>`,
	`<img src=x onerror="document.body.setAttribute('data-pwned','img')">`,
	`</script><script>document.body.setAttribute('data-pwned','close')</script>`,
	`<a href="javascript:document.body.setAttribute('data-pwned','href')">x</a>`,
	`<svg onload="document.body.setAttribute('data-pwned','svg')"></svg>`,
}

// The HTML report of a distractor run whose answers hold script payloads:
// self-contained (no external URL), SIMULATED banner, every payload shown
// as text; and, with headless Chromium, every chart drawn and no payload
// run.
func TestHTMLReportSafe(t *testing.T) {
	dir := t.TempDir()
	exp := bhasha.Distractors("testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(6))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	// The models "answer" with the payloads.
	recs := filepath.Join(r.Dir(), "records.jsonl")
	b, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i := range payloads {
		var rec map[string]any
		json.Unmarshal([]byte(lines[i]), &rec)
		rec["response"] = payloads[i]
		out, _ := json.Marshal(rec)
		lines[i] = string(out)
	}
	os.WriteFile(recs, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	r, err = bhasha.Open(context.Background(), r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	start := time.Now()
	if err := r.HTML(&html); err != nil {
		t.Fatal(err)
	}
	t.Logf("HTML report: %d bytes in %s", html.Len(), time.Since(start))
	page := html.String()
	for _, p := range payloads {
		if strings.Contains(page, p) {
			t.Errorf("payload written unescaped: %s", p)
		}
	}
	for _, want := range []string{"&lt;img src=x onerror", "SIMULATED: these answers came", `id="fig-0"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, url := range []string{"http://", "https://"} {
		if i := strings.Index(page, `src="`+url); i >= 0 {
			t.Errorf("external resource at %d: %s", i, page[i:i+60])
		}
	}
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("BHASHA_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium is required (BHASHA_REQUIRE_BROWSER) but not installed")
		}
		t.Skip("chromium not installed: the rendering check is skipped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	figs := strings.Count(page, `<div class="chart" id="fig-`)
	if drawn := strings.Count(string(dom), "<canvas"); figs == 0 || drawn < figs {
		t.Errorf("%d of %d charts drew", drawn, figs)
	}
	// A payload that ran would have set the attribute on <body>; as text
	// it appears only inside escaped cells.
	if i := strings.Index(string(dom), `data-pwned="`); i >= 0 {
		t.Errorf("a payload ran: %s", string(dom)[max(0, i-80):][:200])
	}
	if !strings.Contains(string(dom), "&lt;img src=x onerror") {
		t.Error("the payloads are not shown as text")
	}
	shot := filepath.Join("out", "report-safety.png")
	os.MkdirAll("out", 0o755)
	exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--window-size=1400,2000", "--virtual-time-budget=5000", "--screenshot="+shot, "file://"+file).Run()
}
