// Package report renders a run's typed tables and the figures it is
// handed for people: ECharts figures (drawn by ECharts 5.6.0 inlined from
// the binary, no network), a self-contained HTML report, the workbook and
// the exported images. Every figure states its n and, when the answers
// came from the simulator, that it is SIMULATED (a study draws its
// figures with package report/chart); model output and dataset text are
// escaped wherever they appear. The package names no study.
package report

import "github.com/bhashalab/bhasha/report/chart"

// Figure is one chart (chart.Figure): its name, caption, the paper figure
// it mirrors, its n and SIMULATED, and the ECharts option as JSON.
type Figure = chart.Figure
