package bhasha_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha"
)

// The smoke IndicKLAR experiment's workbook prints, in LibreOffice, each
// sheet as many pages wide as its page layout says (one, or for a table
// too wide to be read on one page, such as versus_paper, the fewest that
// keep it legible): a sheet of a page's rows on those pages, every
// page's footer naming its sheet, every table's words at least
// minWordHeight tall, and the whole at most 60 pages. Skipped without
// soffice and pdfinfo/pdftotext (poppler-utils), unless
// BHASHA_REQUIRE_OFFICE is set; BHASHA_OFFICE_OUT keeps the workbook and
// its PDF.
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
	if err := r.WriteReport(context.Background(), "", file, bhasha.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows, wide, tall := map[string]int{}, map[string]int{}, map[string]bool{}
	for _, s := range x.GetSheetList() {
		all, _ := x.GetRows(s)
		rows[s] = len(all)
		for r := range all {
			if h, _ := x.GetRowHeight(s, r+1); h > 15 {
				tall[s] = true // a row of wrapped text
			}
		}
		wide[s] = 1
		if lay, err := x.GetPageLayout(s); err == nil && lay.FitToWidth != nil && *lay.FitToWidth > 0 {
			wide[s] = *lay.FitToWidth
		}
	}
	if wide["versus_paper"] < 2 {
		t.Errorf("versus_paper prints %d page wide, want more (24 columns)", wide["versus_paper"])
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
	sheetText := map[string]string{} // each sheet's printed words, one space apart
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
		sheet := string(f[len(f)-1][1])
		printed[sheet]++
		sheetText[sheet] += " " + strings.Join(strings.Fields(string(text)), " ")
		if h := wordHeight(t, pdf, i); sheet != "figures" && h < minWordHeight {
			t.Errorf("page %d (sheet %s) prints words %.1f pt tall, want at least %.1f", i, sheet, h, minWordHeight)
		}
	}
	// Every note of versus_paper prints whole (wrapped in its column,
	// never cut at the page's edge).
	notes, _ := x.GetRows("versus_paper")
	for r, row := range notes[1:] {
		if len(row) < len(notes[0]) || notes[0][len(row)-1] != "note" {
			continue
		}
		words := strings.Fields(row[len(row)-1])
		if len(words) > 0 && !strings.Contains(sheetText["versus_paper"], words[len(words)-1]) {
			t.Errorf("versus_paper row %d: the note %q is cut in print", r+2, row[len(row)-1])
		}
	}
	for s, n := range rows {
		if s != "figures" && (printed[s]%wide[s] != 0 || n <= 25 && !tall[s] && printed[s] != wide[s]) {
			t.Errorf("sheet %s (%d rows) prints on %d pages, want %d (its width) or, with rows of wrapped text, a multiple", s, n, printed[s], wide[s])
		}
	}
	if pages > 60 {
		t.Errorf("the workbook prints on %d pages, want at most 60: %v", pages, printed)
	}
	t.Logf("%d pages: %v", pages, printed)
}

// minWordHeight is the least median height of a printed page's words, in
// points: Calibri 11 printed at 65% (7 pt type) sets words about 8.6 pt
// tall; at 42% (the 24-column versus_paper on one page), 5.5.
const minWordHeight = 7.5

// wordHeight is the median height, in points, of the words on page of
// pdf (pdftotext -bbox).
func wordHeight(t *testing.T, pdf string, page int) float64 {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", "-f", strconv.Itoa(page), "-l", strconv.Itoa(page), pdf, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	var hs []float64
	for _, m := range regexp.MustCompile(`<word xMin="[^"]*" yMin="([^"]*)" xMax="[^"]*" yMax="([^"]*)"`).FindAllSubmatch(out, -1) {
		lo, _ := strconv.ParseFloat(string(m[1]), 64)
		hi, _ := strconv.ParseFloat(string(m[2]), 64)
		hs = append(hs, hi-lo)
	}
	if len(hs) == 0 {
		return math.Inf(1) // a page without words (a chart)
	}
	slices.Sort(hs)
	return hs[len(hs)/2]
}
