package report

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"

	"github.com/bhashalab/bhasha/analysis/tables"
)

// fragmentID is prefix and 12 random hex digits.
func fragmentID(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// execFragment runs the report's fragment name (fragments) on data.
func execFragment(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := page.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("%s fragment: %w", name, err)
	}
	return b.String(), nil
}

// fragmentStyle is the report's table style, scoped to fragments (more
// specific than a notebook's own style).
const fragmentStyle = `<style>div.bh-fragment table.bh-table{border-collapse:collapse;font-size:.85em}` +
	`div.bh-fragment table.bh-table th,div.bh-fragment table.bh-table td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}` +
	`div.bh-fragment table.bh-table th{background:#f2f2f2;position:sticky;top:0}` +
	`div.bh-fragment table.bh-table td.num{text-align:right;font-variant-numeric:tabular-nums}</style>`

// TableHTML is one table as the report shows it (the papers' two-row
// header under column groups, numbers formatted by column kind, sorted by
// a click on a header), at most maxRows rows (0: all) with a line saying
// how many were left out, its name, description and SIMULATED when it
// is, in a box that scrolls when the table is long.
func TableHTML(t *tables.Table, maxRows int) (string, error) {
	card, err := execFragment("tablecard", tableViewOf(t, t.Info(), maxRows, fragmentID("bh-table")))
	if err != nil {
		return "", err
	}
	return fragmentStyle + card, nil
}

// FigureImageWidth is the width, in CSS pixels, at which FigurePNGs
// draws a figure and FigureImageHTML shows it (at most).
const FigureImageWidth = 1000

// FigureImageHTML is one figure: its container, its caption (n,
// SIMULATED) and the script that draws it with the ECharts already on
// the page (EChartsScript; without it, the container says so), and png
// (the figure drawn, as FigurePNGs draws it; nil for none) as an image
// inside the container, shown where the script does not run.
func FigureImageHTML(f Figure, png []byte) (string, error) {
	fv, err := figViewOf(f, fragmentID("bh-fig"))
	if err != nil {
		return "", err
	}
	if len(png) > 0 {
		fv.Image = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
		fv.ImageWidth = FigureImageWidth
	}
	return execFragment("figure", fv)
}

// ExplorerHTML is the report's sample explorer over samples (a table with
// the columns of Results.Samples): filters, search, and each answer's
// prompt, response and verdicts on a click; at most MaxExplorerBytes of
// them, spread, and a line saying how many.
func ExplorerHTML(samples *tables.Table) (string, error) {
	ev := explorerViewOf(samples, 0, 0, "", fragmentID("bh-ex"))
	if ev == nil {
		return "<p>No samples.</p>", nil
	}
	return execFragment("explorer", ev)
}

// EChartsScript is ECharts 5.6.0 as one <script> element that defines
// window.echarts on a plain page and under Jupyter's RequireJS (the
// library is run with define, exports and module hidden, so it never
// registers as an AMD module instead).
func EChartsScript() string {
	return "<script>(function(define,exports,module){\n" + echartsJS + "\n}).call(window);</script>"
}
