package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report/chart"
)

// The LibreOffice checks of the workbook: converted to PDF (soffice), its
// pages counted and read (pdfinfo, pdftotext), its figures drawn to PNG
// (pdftoppm) and looked at. They are skipped where those tools are not
// installed, unless BHASHA_REQUIRE_OFFICE is set; BHASHA_OFFICE_OUT names
// a directory to keep the PDFs and PNGs in (to look at them), else they
// go with the test's temporary directory.

// officeTools are the tools the checks need, or the test is skipped.
func officeTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"soffice", "pdfinfo", "pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("BHASHA_REQUIRE_OFFICE") != "" {
				t.Fatalf("%s is required (BHASHA_REQUIRE_OFFICE) but not installed", tool)
			}
			t.Skipf("%s not installed: the LibreOffice checks are skipped", tool)
		}
	}
}

// officeDir is where a check keeps its files.
func officeDir(t *testing.T, name string) string {
	t.Helper()
	if d := os.Getenv("BHASHA_OFFICE_OUT"); d != "" {
		dir := filepath.Join(d, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// toPDF writes p's workbook to dir/name.xlsx and converts it to
// dir/name.pdf with LibreOffice (a profile of its own, so that checks can
// run side by side).
func toPDF(t *testing.T, p Page, dir, name string) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteXLSX(&b, p); err != nil {
		t.Fatal(err)
	}
	xlsx := filepath.Join(dir, name+".xlsx")
	if err := os.WriteFile(xlsx, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "soffice", "-env:UserInstallation=file://"+t.TempDir(), "--headless", "--convert-to", "pdf", "--outdir", dir, xlsx).CombinedOutput()
	pdf := filepath.Join(dir, name+".pdf")
	if st, serr := os.Stat(pdf); err != nil || serr != nil || st.Size() == 0 {
		t.Fatalf("LibreOffice could not convert the workbook: %v %v\n%s", err, serr, out)
	}
	return pdf
}

var pagesLine = regexp.MustCompile(`(?m)^Pages:\s+(\d+)`)

// pdfPages is a PDF's page count (pdfinfo).
func pdfPages(t *testing.T, pdf string) int {
	t.Helper()
	out, err := exec.Command("pdfinfo", pdf).Output()
	m := pagesLine.FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("pdfinfo %s: %v\n%s", pdf, err, out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// footer is the sheet a printed page belongs to and its page number, as
// its footer says ("accuracy … 2 / 37").
var footer = regexp.MustCompile(`(?m)^\s*(\S+)\s+(\d+)\s*/\s*(\d+)\s*$`)

// pageSheets are the sheets the PDF's pages print, page by page, read
// from their footers ("" where a page has none).
func pageSheets(t *testing.T, pdf string) []string {
	t.Helper()
	n := pdfPages(t, pdf)
	out := make([]string, n)
	for i := range n {
		text, err := exec.Command("pdftotext", "-layout", "-f", strconv.Itoa(i+1), "-l", strconv.Itoa(i+1), pdf, "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		if m := footer.FindAllSubmatch(text, -1); m != nil && string(m[len(m)-1][2]) == strconv.Itoa(i+1) {
			out[i] = string(m[len(m)-1][1])
		}
	}
	return out
}

// pagePNG draws page n of a PDF as a PNG at dpi and reads it back.
func pagePNG(t *testing.T, pdf string, n, dpi int) (image.Image, string) {
	t.Helper()
	base := strings.TrimSuffix(pdf, ".pdf") + fmt.Sprintf("-page%d", n)
	if out, err := exec.Command("pdftoppm", "-f", strconv.Itoa(n), "-l", strconv.Itoa(n), "-r", strconv.Itoa(dpi), "-png", "-singlefile", pdf, base).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	file, err := os.Open(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	img, err := png.Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	return img, base + ".png"
}

// near counts the pixels within tol of the colour #rrggbb.
func near(img image.Image, hex string, tol int) int {
	v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	want := [3]int{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			got := [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
			if abs(got[0]-want[0]) <= tol && abs(got[1]-want[1]) <= tol && abs(got[2]-want[2]) <= tol {
				n++
			}
		}
	}
	return n
}

func abs(x int) int { return max(x, -x) }

// verticalRuns counts the columns of pixels holding a dark vertical run
// at least long pixels long: a whisker (text is shorter, the charts'
// frames and axes are light grey).
func verticalRuns(img image.Image, long int) int {
	b := img.Bounds()
	n := 0
	for x := b.Min.X; x < b.Max.X; x++ {
		run := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 < 0x70 && g>>8 < 0x70 && bl>>8 < 0x70 {
				if run++; run == long {
					n++
				}
			} else {
				run = 0
			}
		}
	}
	return n
}

// In LibreOffice every sheet prints one page wide, but a table too wide
// to be legible on one: a 30-column table prints as many pages wide as
// pagesWide says (at a scale of at least minPrintScale), the papers'
// tables, the figures, the provenance and the samples each on one page
// (the figures on two at most), each page's footer naming its sheet; the
// figures' scatter points and bars' whiskers are drawn.
func TestWorkbookPrintsInLibreOffice(t *testing.T) {
	officeTools(t)
	p := printPage(t)
	header := []string{"model"}
	row := []any{"m"}
	for i := range 30 {
		header = append(header, fmt.Sprintf("share_%02d_of_something", i))
		row = append(row, float64(i)/30)
	}
	p.Tables = append(p.Tables, &tables.Table{Name: "wide", Header: header, Rows: [][]any{row, row}})
	width := colWidth("model", 1)
	for _, h := range header[1:] {
		width += colWidth(h, 0)
	}
	wantWide := pagesWide(width)
	if wantWide < 2 {
		t.Fatalf("the wide table is %.0f characters wide: one page", width)
	}
	dir := officeDir(t, "print")
	pdf := toPDF(t, p, dir, "workbook")
	sheets := pageSheets(t, pdf)
	count := map[string]int{}
	for i, s := range sheets {
		if s == "" {
			t.Errorf("page %d of %d has no footer naming its sheet", i+1, len(sheets))
		}
		count[s]++
	}
	for _, s := range []string{"README", "accuracy", "clc", "script_decomposition", "long_header", "acc_clc_wide", "tokenization", "wide", "provenance", "samples"} {
		want := 1
		if s == "wide" {
			want = wantWide
		}
		if count[s] != want {
			t.Errorf("sheet %s prints on %d pages, want %d", s, count[s], want)
		}
	}
	if count["figures"] < 1 || count["figures"] > 2 {
		t.Errorf("the figures print on %d pages, want 1 or 2", count["figures"])
	}
	if len(sheets) > 11+wantWide {
		t.Errorf("%d pages, want at most %d: %v", len(sheets), 11+wantWide, sheets)
	}

	// The scatter alone: its three points drawn in the first series' colour.
	figs := drawn(t, "print_scatter") // from p.Tables[5] (studies' TestReportFixtures)
	scatter := toPDF(t, Page{Title: "scatter", Figures: figs[:1]}, dir, "scatter")
	img, file := pagePNG(t, scatter, pageWith(t, scatter, "prompt length against accuracy"), 100)
	if n := near(img, chart.Palette()[0], 40); n < 60 {
		t.Errorf("the scatter's points are not drawn (%d pixels of %s in %s)", n, chart.Palette()[0], file)
	}
	// Fig. 2 alone: its five bars each with a whisker.
	figs = drawn(t, "print_bars") // from p.Tables[0]
	bars := toPDF(t, Page{Title: "bars", Figures: figs[:1]}, dir, "bars")
	img, file = pagePNG(t, bars, pageWith(t, bars, "accuracy by form"), 100)
	if n := near(img, chart.Palette()[0], 40); n < 500 {
		t.Errorf("the first series' bars are not drawn in its colour, the HTML figures' (%d pixels of %s in %s)", n, chart.Palette()[0], file)
	}
	if n := verticalRuns(img, 25); n < 5 {
		t.Errorf("%d whiskers drawn in %s, want one on each of the 5 bars", n, file)
	}
	t.Logf("pages: %v; figures drawn in %s and %s", sheets, filepath.Dir(file), file)
}

// pageWith is the first page of a PDF whose text holds s (a chart's
// title).
func pageWith(t *testing.T, pdf, s string) int {
	t.Helper()
	for i := range pdfPages(t, pdf) {
		text, err := exec.Command("pdftotext", "-f", strconv.Itoa(i+1), "-l", strconv.Itoa(i+1), pdf, "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(text), s) {
			return i + 1
		}
	}
	t.Fatalf("no page of %s holds %q", pdf, s)
	return 0
}
