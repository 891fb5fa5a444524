package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bhashalab/bhasha/internal/atomicfile"
)

// Exports are paper-ready files: every table as CSV and as a LaTeX
// booktabs table (tables/NAME.csv, tables/NAME.tex), every figure's
// ECharts option (figures/NAME.json) and, with a browser (headless
// Chromium), the figure as SVG (ECharts' SVG renderer, one page for all)
// and PNG (a screenshot per figure).
func WriteExports(ctx context.Context, dir string, p Page, browser string) error {
	td, fd := filepath.Join(dir, "tables"), filepath.Join(dir, "figures")
	for _, d := range []string{td, fd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("exports: %w", err)
		}
	}
	for _, t := range p.Tables {
		var csv bytes.Buffer
		if err := t.WriteCSV(&csv, t.Simulated); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(td, t.Name+".csv"), csv.Bytes()); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(td, t.Name+".tex"), []byte(t.LaTeX())); err != nil {
			return err
		}
	}
	for _, f := range p.Figures {
		var b bytes.Buffer
		json.Indent(&b, f.Option, "", " ")
		if err := atomicfile.WriteFile(filepath.Join(fd, f.Name+".json"), b.Bytes()); err != nil {
			return err
		}
	}
	if browser == "" || len(p.Figures) == 0 {
		return nil
	}
	return renderFigures(ctx, fd, p.Figures, browser)
}

var svgRe = regexp.MustCompile(`(?s)<div class="fig" id="(fig-\d+)"[^>]*>.*?(<svg.*?</svg>)`)

// renderFigures draws the figures with Chromium: all as SVG from one
// page's DOM, each as PNG from its own page.
func renderFigures(ctx context.Context, dir string, figs []Figure, browser string) error {
	tmp, err := os.MkdirTemp("", "bhasha-figures-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	write := func(name string, figs []Figure, renderer string) (string, error) {
		var b bytes.Buffer
		type fv struct {
			ID     string
			Option any
		}
		var vs []fv
		for i, f := range figs {
			var o any
			json.Unmarshal(f.Option, &o)
			vs = append(vs, fv{fmt.Sprintf("fig-%d", i), o})
		}
		if err := figPage.Execute(&b, map[string]any{"ECharts": template.JS(echartsJS), "Figures": vs, "Renderer": renderer}); err != nil {
			return "", err
		}
		path := filepath.Join(tmp, name)
		return path, os.WriteFile(path, b.Bytes(), 0o644)
	}
	chrome := func(args ...string) ([]byte, error) {
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run",
			"--user-data-dir=" + filepath.Join(tmp, "profile"), "--virtual-time-budget=5000"}
		out, err := exec.CommandContext(ctx, browser, append(base, args...)...).Output()
		if err != nil {
			return nil, fmt.Errorf("rendering figures with %s: %w", browser, err)
		}
		return out, nil
	}
	page, err := write("all.html", figs, "svg")
	if err != nil {
		return err
	}
	dom, err := chrome("--dump-dom", "file://"+page)
	if err != nil {
		return err
	}
	found := map[string]string{}
	for _, m := range svgRe.FindAllSubmatch(dom, -1) {
		found[string(m[1])] = string(m[2])
	}
	for i, f := range figs {
		svg, ok := found[fmt.Sprintf("fig-%d", i)]
		if !ok {
			return fmt.Errorf("rendering figure %s: no SVG drawn", f.Name)
		}
		if !strings.Contains(svg, "xmlns=") {
			svg = strings.Replace(svg, "<svg", `<svg xmlns="http://www.w3.org/2000/svg"`, 1)
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, f.Name+".svg"), []byte(svg)); err != nil {
			return err
		}
		one, err := write(fmt.Sprintf("fig-%d.html", i), []Figure{f}, "canvas")
		if err != nil {
			return err
		}
		if _, err := chrome("--window-size=1000,560", "--hide-scrollbars", "--screenshot="+filepath.Join(dir, f.Name+".png"), "file://"+one); err != nil {
			return err
		}
	}
	return nil
}

var figPage = template.Must(template.New("fig").Parse(`<!DOCTYPE html><html><head><meta charset="utf-8">
<style>body{margin:0;font-family:"Noto Sans","Noto Sans Devanagari",sans-serif}.fig{width:1000px;height:560px}</style>
<script>{{.ECharts}}</script></head><body>
{{range .Figures}}<div class="fig" id="{{.ID}}"></div>
<script>echarts.init(document.getElementById({{.ID}}),null,{renderer:{{$.Renderer}}}).setOption({{.Option}});</script>
{{end}}</body></html>`))
