package bhasha_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha"
)

// What a reviewer meets in the demo's smoke-klar report and the index
// beside it: the results before the method notes (linked from the top),
// versus_paper narrow enough for the page with whole numbers written
// without decimals, provenance with the prompt options in force and no
// absolute path of this machine, and the index saying what each run is.
func TestReportForReviewers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inputs := filepath.Join(dir, "inputs")
	if err := os.CopyFS(inputs, bhasha.DefaultInputs()); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(inputs, "one") // ../klar resolves as from experiments/
	if err := os.MkdirAll(one, 0o755); err != nil {
		t.Fatal(err)
	}
	exp, err := os.ReadFile(filepath.Join(inputs, "experiments", "smoke-klar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(one, "smoke-klar.yaml"), exp, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := bhasha.Demo(ctx, one, out, bhasha.CacheDir(filepath.Join(dir, "cache"))); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "smoke-klar", "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	at := func(s string) int {
		i := strings.Index(page, s)
		if i < 0 {
			t.Errorf("the report lacks %q", s)
		}
		return i
	}
	figures, tablesAt, notes, prov := at(`<h2 id="figures">`), at(`<h2 id="tables">`), at(`<h2 id="method-notes">`), at(`<h2 id="provenance">`)
	for _, c := range []struct {
		name          string
		before, after int
	}{
		{"figures before the method notes", figures, notes},
		{"tables before the method notes", tablesAt, notes},
		{"method notes before the provenance", notes, prov},
		{"the table of contents links the method notes", at(`<a href="#method-notes">`), figures},
		{"the demonstrations note under Method notes", notes, at("demonstrations: 3 per item")},
	} {
		if c.before < 0 || c.after < 0 || c.before > c.after {
			t.Errorf("%s: at %d and %d", c.name, c.before, c.after)
		}
	}
	if i := strings.Index(page, `class="note method-note"`); i >= 0 && i < figures {
		t.Errorf("a method note precedes the results")
	}

	// versus_paper: its brief columns, whole numbers without decimals.
	start := at(`<h3 id="table-versus_paper">`)
	end := start + strings.Index(page[start:], "</table>")
	vp := page[start:end]
	head := vp[strings.Index(vp, "<thead>"):strings.Index(vp, "</thead>")]
	if n := strings.Count(head, "<th "); n < 6 || n > 14 {
		t.Errorf("versus_paper shows %d columns, want 6 to 14", n)
	}
	if !strings.Contains(vp, "of its 24 columns shown; the CSV file and the workbook hold every column") {
		t.Error("versus_paper does not say which columns it leaves out")
	}
	if m := regexp.MustCompile(`>-?\d+\.000<`).FindString(vp); m != "" {
		t.Errorf("versus_paper writes a whole number with decimals: %s", m)
	}

	// Provenance: the options in force, no path of this machine.
	if !strings.Contains(page[prov:], `&#34;Shots&#34;:3`) {
		t.Errorf("provenance lacks the shots in force (3): %s", page[prov:min(len(page), prov+4000)])
	}
	for _, abs := range []string{dir, filepath.ToSlash(dir)} {
		if i := strings.Index(page[prov:], abs); i >= 0 {
			t.Errorf("provenance shows an absolute path: %s", page[prov+i:min(len(page), prov+i+120)])
		}
	}
	if !strings.Contains(page[prov:], "<dt>experiment file</dt><dd>smoke-klar.yaml</dd>") { // outside the folder of runs: its name
		t.Error("provenance does not name the experiment file by its name")
	}

	// The index says what each run is.
	idx, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(idx), "study indicklar: the IndicKLAR protocol on KLAR release files") || !strings.Contains(string(idx), "(dataset klar, 6 items)") {
		t.Errorf("the index does not say what smoke-klar is:\n%s", idx)
	}
}
