package bhasha_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/internal/browsertest"
	"github.com/xuri/excelize/v2"
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
// resealed is the record rec as a line sealed again (record_sha256: the
// SHA-256 of the line before it, closed), as a model whose answers are
// planted would have written it.
func resealed(t *testing.T, rec map[string]any) string {
	t.Helper()
	delete(rec, "record_sha256")
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return string(b[:len(b)-1]) + `,"record_sha256":"` + hex.EncodeToString(sum[:]) + `"}`
}

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
		lines[i] = resealed(t, rec)
	}
	os.WriteFile(recs, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	r, err = bhasha.Open(context.Background(), r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	start := time.Now()
	if err := writeHTML(r, &html); err != nil {
		t.Fatal(err)
	}
	t.Logf("HTML report: %d bytes in %s", html.Len(), time.Since(start))
	page := html.String()
	for _, p := range payloads {
		if strings.Contains(page, p) {
			t.Errorf("payload written unescaped: %s", p)
		}
	}
	for _, want := range []string{"&lt;img src=x onerror", "SIMULATED: these answers came", `id="fig-0"`, `id="ex-data">{"columns":`} {
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
	browser := browsertest.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	domText, console := browsertest.DumpDOM(t, browser, file, 5*time.Second)
	dom := []byte(domText)
	if len(console) > 0 {
		t.Errorf("the report wrote to the console: %q", console)
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
	// The sample explorer ran and lists every answer (3 models × 6 items × 2 conditions).
	if !strings.Contains(string(dom), "36 of 36 samples; page 1 of 1") {
		t.Error("the sample explorer did not render")
	}
	// Paper-ready exports: tables as CSV and LaTeX, figures as SVG and PNG.
	exp2 := filepath.Join(dir, "exports")
	drawn, err := r.WriteExports(ctx, exp2)
	if err != nil || !drawn {
		t.Fatalf("exports: %v (drawn %v)", err, drawn)
	}
	svgs, _ := filepath.Glob(filepath.Join(exp2, "figures", "*.svg"))
	pngs, _ := filepath.Glob(filepath.Join(exp2, "figures", "*.png"))
	if len(svgs) != figs || len(pngs) != figs {
		t.Errorf("%d SVG and %d PNG files for %d figures", len(svgs), len(pngs), figs)
	}
	for _, f := range svgs {
		if b, _ := os.ReadFile(f); !bytes.HasPrefix(b, []byte("<svg")) || !bytes.Contains(b, []byte("</svg>")) {
			t.Errorf("%s is not an SVG", f)
		}
	}
	if tex, err := os.ReadFile(filepath.Join(exp2, "tables", "accuracy.tex")); err != nil || !bytes.Contains(tex, []byte("\\toprule")) {
		t.Errorf("accuracy.tex: %v", err)
	}
	os.MkdirAll("out", 0o755)
	browsertest.Screenshot(t, browser, file, filepath.Join("out", "report-safety.png"), 1400, 2000)
}

// The workbook reads back: a sheet per table with a frozen header, number
// formats, the provenance, and the samples; text that looks like a
// formula stays text; LibreOffice (where installed) converts it to PDF.
func TestXLSXWorkbook(t *testing.T) {
	dir := t.TempDir()
	exp := bhasha.Distractors("testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(4))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	formulas := []string{"=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1,2)", "\t=HYPERLINK(\"http://x\")"}
	recs := filepath.Join(r.Dir(), "records.jsonl")
	b, _ := os.ReadFile(recs)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, f := range formulas {
		var rec map[string]any
		json.Unmarshal([]byte(lines[i]), &rec)
		rec["response"] = f
		lines[i] = resealed(t, rec)
	}
	os.WriteFile(recs, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if r, err = bhasha.Open(context.Background(), r.Dir()); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "report.xlsx")
	if err := r.WriteReport(context.Background(), "", file, bhasha.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	sheets := x.GetSheetList()
	for _, want := range []string{"README", "accuracy", "script_decomposition", "sensitivity", "provenance", "samples"} {
		if !slices.Contains(sheets, want) {
			t.Errorf("no sheet %s in %v", want, sheets)
		}
	}
	if v, _ := x.GetCellValue("README", "A2"); !strings.HasPrefix(v, "SIMULATED") {
		t.Errorf("README A2 %q", v)
	}
	if p, err := x.GetPanes("accuracy"); err != nil || !p.Freeze || p.YSplit != 1 {
		t.Errorf("accuracy panes %+v %v", p, err)
	}
	hdr, _ := x.GetRows("accuracy")
	rate := slices.Index(hdr[0], "rate")
	if st, err := x.GetCellStyle("accuracy", mustCell(rate+1, 2)); err != nil || st == 0 {
		t.Errorf("rate cells unformatted (style %d, %v)", st, err)
	}
	rows, _ := x.GetRows("samples")
	resp := slices.Index(rows[0], "response")
	found := 0
	for i, row := range rows[1:] {
		if resp >= len(row) || !slices.Contains(formulas, row[resp]) {
			continue
		}
		found++
		cell := mustCell(resp+1, i+2)
		if f, _ := x.GetCellFormula("samples", cell); f != "" {
			t.Errorf("%s holds a formula %q", cell, f)
		}
	}
	if found != len(formulas) || len(rows) != 1+3*4*2 {
		t.Errorf("%d formula-like answers kept as text, %d sample rows", found, len(rows)-1)
	}
	office, err := exec.LookPath("soffice")
	if err != nil {
		if os.Getenv("BHASHA_REQUIRE_OFFICE") != "" {
			t.Fatal("soffice is required (BHASHA_REQUIRE_OFFICE) but not installed")
		}
		t.Skip("LibreOffice not installed: the PDF conversion is skipped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, office, "-env:UserInstallation=file://"+t.TempDir(), "--headless", "--convert-to", "pdf", "--outdir", dir, file).CombinedOutput()
	if st, serr := os.Stat(filepath.Join(dir, "report.pdf")); err != nil || serr != nil || st.Size() == 0 {
		t.Errorf("LibreOffice could not convert the workbook: %v %v\n%s", err, serr, out)
	}
}

func mustCell(col, row int) string {
	c, _ := excelize.CoordinatesToCellName(col, row)
	return c
}

// The distractor layout sheet carries a native Excel chart.
func TestXLSXChart(t *testing.T) {
	dir := t.TempDir()
	exp := bhasha.Distractors("testdata/triviaqa/triviaqa_small.jsonl", bhasha.Conditions("clean", "hi"), bhasha.SampleItems(3))
	r, err := bhasha.Run(context.Background(), exp, bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "r.xlsx")
	if err := r.WriteReport(context.Background(), "", file, bhasha.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	z, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	found := false
	for _, f := range z.File {
		if !strings.HasPrefix(f.Name, "xl/charts/chart") {
			continue
		}
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if bytes.Contains(b, []byte("conditions_wide&#39;!$D$2:$E$2")) && bytes.Contains(b, []byte("SIMULATED")) {
			found = true
		}
	}
	if !found {
		t.Error("no chart over the conditions_wide sheet")
	}
}

// writeHTML writes r's HTML report (Results.WriteReport) into w.
func writeHTML(r *bhasha.Results, w io.Writer) error { return writeVia(r, w, true) }

// writeXLSX writes r's workbook (Results.WriteReport) into w.
func writeXLSX(r *bhasha.Results, w io.Writer) error { return writeVia(r, w, false) }

func writeVia(r *bhasha.Results, w io.Writer, html bool) error {
	dir, err := os.MkdirTemp("", "bhasha-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "report")
	h, x := path, ""
	if !html {
		h, x = "", path
	}
	if err := r.WriteReport(context.Background(), h, x, bhasha.ReportOptions{}); err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
