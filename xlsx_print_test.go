package bhasha_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha"
)

// The smoke IndicKLAR experiment's workbook prints, in LibreOffice, each
// sheet one page wide (96 pages before its print setup, 39 after): a
// sheet of a page's rows on one page, every page's footer naming its
// sheet, and the whole at most 45 pages. Skipped without soffice and
// pdfinfo/pdftotext (poppler-utils), unless BHASHA_REQUIRE_OFFICE is
// set; BHASHA_OFFICE_OUT keeps the workbook and its PDF.
func TestXLSXPrintsOnePageWide(t *testing.T) {
	for _, tool := range []string{"soffice", "pdfinfo", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("BHASHA_REQUIRE_OFFICE") != "" {
				t.Fatalf("%s is required (BHASHA_REQUIRE_OFFICE) but not installed", tool)
			}
			t.Skipf("%s not installed: the print check is skipped", tool)
		}
	}
	dir := t.TempDir()
	if d := os.Getenv("BHASHA_OFFICE_OUT"); d != "" {
		dir = filepath.Join(d, "smoke-indicklar")
		os.MkdirAll(dir, 0o755)
	}
	ctx := context.Background()
	exp, err := bhasha.Load(ctx, "testdata/experiments/smoke-indicklar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	r, err := bhasha.Run(ctx, exp, bhasha.Simulator(), bhasha.Out(filepath.Join(work, "run")), bhasha.CacheDir(filepath.Join(work, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "report.xlsx")
	if err := r.WriteXLSX(file); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows := map[string]int{}
	for _, s := range x.GetSheetList() {
		all, _ := x.GetRows(s)
		rows[s] = len(all)
	}
	cctx, cancel := context.WithTimeout(ctx, 180*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(cctx, "soffice", "-env:UserInstallation=file://"+t.TempDir(), "--headless", "--convert-to", "pdf", "--outdir", dir, file).CombinedOutput(); err != nil {
		t.Fatalf("LibreOffice: %v\n%s", err, out)
	}
	pdf := filepath.Join(dir, "report.pdf")
	info, err := exec.Command("pdfinfo", pdf).Output()
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)`).FindSubmatch(info)
	if err != nil || m == nil {
		t.Fatalf("pdfinfo: %v\n%s", err, info)
	}
	pages, _ := strconv.Atoi(string(m[1]))
	footer := regexp.MustCompile(`(?m)^\s*(\S+)\s+(\d+)\s*/\s*(\d+)\s*$`)
	printed := map[string]int{}
	for i := 1; i <= pages; i++ {
		text, err := exec.Command("pdftotext", "-layout", "-f", strconv.Itoa(i), "-l", strconv.Itoa(i), pdf, "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		f := footer.FindAllSubmatch(text, -1)
		if f == nil || string(f[len(f)-1][2]) != strconv.Itoa(i) {
			t.Errorf("page %d of %d has no footer naming its sheet", i, pages)
			continue
		}
		printed[string(f[len(f)-1][1])]++
	}
	for s, n := range rows {
		if n <= 25 && s != "figures" && printed[s] != 1 {
			t.Errorf("sheet %s (%d rows) prints on %d pages, want 1", s, n, printed[s])
		}
	}
	if pages > 45 {
		t.Errorf("the workbook prints on %d pages, want at most 45: %v", pages, printed)
	}
	t.Logf("%d pages: %v", pages, printed)
}
