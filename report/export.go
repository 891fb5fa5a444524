package report

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/report/chart"
)

// Exports are paper-ready files: every table as CSV and as a LaTeX
// booktabs table (tables/NAME.csv, tables/NAME.tex, with
// tables/README.txt saying the CSV files are exact data, not to be
// opened by double-click in a spreadsheet: tables.CSVNote), every
// figure's ECharts option (figures/NAME.json) and, with a browser
// (headless Chromium), the figure as SVG (ECharts' SVG renderer, one page
// for all; each checked to be well-formed XML) and PNG (a screenshot per
// figure).
//
// Each NAME is the table's or figure's name through tables.FileNames
// (one folder each): a model named "../../x" or "m<svg onload=…>" gets a
// file inside the folder, of letters, digits, '-', '_' and '.', and two
// names that sanitise alike get distinct files. Every figure's text is
// shown as tables.Visible does (control characters as their pictures),
// whether or not Figures made it.
func WriteExports(ctx context.Context, dir string, p Page, browser string) error {
	td, fd := filepath.Join(dir, "tables"), filepath.Join(dir, "figures")
	for _, d := range []string{td, fd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("exports: %w", err)
		}
	}
	if len(p.Tables) > 0 {
		if err := atomicfile.WriteFile(filepath.Join(td, tables.CSVNoteFile), []byte(tables.CSVNote)); err != nil {
			return err
		}
	}
	var tnames tables.FileNames
	for _, t := range p.Tables {
		var csv bytes.Buffer
		if err := t.WriteCSV(&csv); err != nil {
			return err
		}
		name := tnames.Name(t.Name)
		if err := atomicfile.WriteFile(filepath.Join(td, name+".csv"), csv.Bytes()); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(td, name+".tex"), []byte(t.LaTeX())); err != nil {
			return err
		}
	}
	figs, err := visible(p.Figures)
	if err != nil {
		return err
	}
	var fnames tables.FileNames
	files := make([]string, len(figs))
	for i, f := range figs {
		files[i] = fnames.Name(f.Name)
		var b bytes.Buffer
		json.Indent(&b, f.Option, "", " ")
		if err := atomicfile.WriteFile(filepath.Join(fd, files[i]+".json"), b.Bytes()); err != nil {
			return err
		}
	}
	if browser == "" || len(figs) == 0 {
		return nil
	}
	return renderFigures(ctx, fd, figs, files, browser)
}

var (
	svgRe = regexp.MustCompile(`(?s)<div class="fig" id="(fig-\d+)"[^>]*>.*?(<svg.*?</svg>)`)
	pngRe = regexp.MustCompile(`<div class="fig" id="(fig-\d+)"[^>]*data-png="data:image/png;base64,([A-Za-z0-9+/=]+)"`)
)

// exportWidth and exportHeight are the exported figures' size, in CSS pixels.
const exportWidth, exportHeight = 1000, 560

// renderFigures draws the figures with Chromium as files[i].svg (read
// from the DOM, checked to be XML) and files[i].png.
func renderFigures(ctx context.Context, dir string, figs []Figure, files []string, browser string) error {
	sizes := slices.Repeat([][2]int{{exportWidth, exportHeight}}, len(figs))
	svgDOM, err := drawFigurePage(ctx, browser, "svg", figs, sizes)
	if err != nil {
		return err
	}
	pngs, err := drawPNGs(ctx, browser, figs, sizes)
	if err != nil {
		return err
	}
	svgs := map[string]string{}
	for _, m := range svgRe.FindAllSubmatch(svgDOM, -1) {
		svgs[string(m[1])] = string(m[2])
	}
	for i, f := range figs {
		id := fmt.Sprintf("fig-%d", i)
		svg, ok := svgs[id]
		if !ok {
			return fmt.Errorf("rendering figure %q: no SVG drawn", f.Name)
		}
		if !strings.Contains(svg, "xmlns=") {
			svg = strings.Replace(svg, "<svg", `<svg xmlns="http://www.w3.org/2000/svg"`, 1)
		}
		svg = strings.ReplaceAll(svg, "&nbsp;", "&#160;") // the DOM's HTML serialisation; XML knows no &nbsp;
		if err := wellFormed(svg); err != nil {
			return fmt.Errorf("rendering figure %q: the SVG drawn is not XML: %w", f.Name, err)
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, files[i]+".svg"), []byte(svg)); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, files[i]+".png"), pngs[i]); err != nil {
			return err
		}
	}
	return nil
}

// FigurePNGs draws each figure as a PNG image, FigureImageWidth CSS
// pixels wide and as high as FigureImageHTML makes its container, at
// twice the pixel density, with ECharts' canvas renderer in headless
// Chromium (browser, the path of its executable), every text shown as
// the exports show it (chart.VisibleOption). All the figures are drawn in
// one page load; cancelling ctx stops it. The images are in the order of
// figs. A figure that does not draw is an error naming it.
func FigurePNGs(ctx context.Context, browser string, figs []Figure) ([][]byte, error) {
	sizes := make([][2]int, len(figs))
	for i, f := range figs {
		fv, err := figViewOf(f, "")
		if err != nil {
			return nil, err
		}
		sizes[i] = [2]int{FigureImageWidth, fv.Height}
	}
	vis, err := visible(figs)
	if err != nil {
		return nil, err
	}
	return drawPNGs(ctx, browser, vis, sizes)
}

// visible is a copy of figs with every text shown as chart.VisibleOption does.
func visible(figs []Figure) ([]Figure, error) {
	out := slices.Clone(figs)
	for i, f := range out {
		o, err := chart.VisibleOption(f.Option)
		if err != nil {
			return nil, fmt.Errorf("figure %q: %w", f.Name, err)
		}
		out[i].Option = o
	}
	return out, nil
}

// drawPNGs draws figs with the canvas renderer and returns their PNGs.
func drawPNGs(ctx context.Context, browser string, figs []Figure, sizes [][2]int) ([][]byte, error) {
	dom, err := drawFigurePage(ctx, browser, "canvas", figs, sizes)
	if err != nil {
		return nil, err
	}
	found := map[string]string{}
	for _, m := range pngRe.FindAllSubmatch(dom, -1) {
		found[string(m[1])] = string(m[2])
	}
	pngs := make([][]byte, len(figs))
	for i, f := range figs {
		png, err := base64.StdEncoding.DecodeString(found[fmt.Sprintf("fig-%d", i)])
		if err != nil || len(png) == 0 {
			return nil, fmt.Errorf("rendering figure %q: no PNG drawn", f.Name)
		}
		pngs[i] = png
	}
	return pngs, nil
}

// drawFigurePage draws figure i at sizes[i] in container fig-i with
// ECharts' renderer ("svg" or "canvas") in headless Chromium and returns
// the page's DOM.
func drawFigurePage(ctx context.Context, browser, renderer string, figs []Figure, sizes [][2]int) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "bhasha-figures-")
	if err != nil {
		return nil, fmt.Errorf("rendering figures: %w", err)
	}
	defer os.RemoveAll(tmp)
	type fv struct {
		ID            string
		Width, Height int
		Option        any
	}
	var vs []fv
	for i, f := range figs {
		var o any
		if err := json.Unmarshal(f.Option, &o); err != nil {
			return nil, fmt.Errorf("rendering figure %q: %w", f.Name, err)
		}
		vs = append(vs, fv{fmt.Sprintf("fig-%d", i), sizes[i][0], sizes[i][1], o})
	}
	var b bytes.Buffer
	if err := figPage.Execute(&b, map[string]any{"ECharts": template.JS(echartsJS), "Figures": vs, "Renderer": renderer}); err != nil {
		return nil, fmt.Errorf("rendering figures: %w", err)
	}
	page := filepath.Join(tmp, renderer+".html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("rendering figures: %w", err)
	}
	out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--user-data-dir="+filepath.Join(tmp, "profile"), "--virtual-time-budget=5000",
		"--dump-dom", "file://"+page).Output()
	if err != nil {
		return nil, fmt.Errorf("rendering figures with %s: %w", browser, err)
	}
	return out, nil
}

var figPage = template.Must(template.ParseFS(templateFiles, "templates/figures.html"))

// wellFormed says whether doc is one well-formed XML document.
func wellFormed(doc string) error {
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		if _, err := d.Token(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}
