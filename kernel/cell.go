package kernel

import (
	"context"
	"fmt"
	"html/template"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/janpfeifer/gonb/gonbui"

	"github.com/bhashalab/bhasha"
)

// ErrorHTML is err as a cell shows it: a red-bordered box with what was
// being done and the error's text, escaped.
func ErrorHTML(doing string, err error) string {
	return fmt.Sprintf(`<div class="bhasha-error" style="font-family:sans-serif;border:2px solid #D55E00;border-radius:4px;padding:0.5em 0.8em;margin:0.5em 0">`+
		`<b style="color:#D55E00">%s failed</b><pre style="white-space:pre-wrap;margin:0.4em 0 0">%s</pre></div>`,
		template.HTMLEscapeString(doing), template.HTMLEscapeString(err.Error()))
}

// Stop shows ErrorHTML(doing, err) in the cell and ends the cell's
// program with exit status 1 (GoNB then marks the cell as failed, and
// nbconvert stops there). Outside a notebook, where there is no cell to
// show it in, it panics with the error wrapped with doing instead, so
// that a program or test calling a cell helper sees the failure.
func Stop(doing string, err error) {
	if !gonbui.IsNotebook {
		panic(fmt.Errorf("%s: %w", doing, err))
	}
	show(ErrorHTML(doing, err))
	os.Exit(1)
}

// Check calls Stop when err is not nil.
func Check(doing string, err error) {
	if err != nil {
		Stop(doing, err)
	}
}

// Open reopens a run directory, or a grid of shards as one run
// (bhasha.Open), showing the progress of scoring the records when they
// must be scored (ScoringProgress). A failure is shown in the cell and
// stops it.
func Open(dir string, opts ...bhasha.ReadOption) *bhasha.Results {
	r, err := bhasha.Open(context.Background(), dir, append([]bhasha.ReadOption{ScoringProgress()}, opts...)...)
	Check("opening the run "+dir, err)
	return r
}

// Run runs the experiment into dir (bhasha.Run with bhasha.Out(dir)),
// showing its progress live (Progress) and, at the end, its provenance;
// the model servers are those of $BHASHA_ENDPOINT when it is set
// (bhasha.EndpointFromEnv), else the experiment's own or the simulator.
// opts come after those and may override them. A failure is shown in the
// cell and stops it.
func Run(exp *bhasha.Experiment, dir string, opts ...bhasha.RunOption) *bhasha.Results {
	all := append([]bhasha.RunOption{bhasha.Out(dir), bhasha.EndpointFromEnv(), Progress()}, opts...)
	r, err := bhasha.Run(context.Background(), exp, all...)
	Check("running "+exp.Name, err)
	Provenance(r)
	return r
}

// Show shows the run's tables by name (Tables); a failure (a table the
// run does not have) is shown in the cell and stops it.
func Show(r *bhasha.Results, names ...string) {
	Check("showing tables", Tables(r, names...))
}

// Draw draws the run's figures matching the patterns (Figures); a
// failure, or patterns that match no figure, is shown in the cell and
// stops it.
func Draw(r *bhasha.Results, patterns ...string) {
	n, err := Figures(r, patterns...)
	if err == nil && n == 0 {
		err = fmt.Errorf("no figure of the run matches %q", patterns)
	}
	Check("drawing figures", err)
}

// Save writes the run's self-contained HTML report and its workbook as
// dir/report.html and dir/report.xlsx (bhasha.Results.WriteReport),
// showing each step's progress in place (ReportProgress), then shows the
// run's provenance with the two files' paths. Interrupting the kernel
// stops it, with no file half-written. A failure is shown in the cell
// and stops it.
func Save(r *bhasha.Results, dir string) {
	html, xlsx := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.xlsx")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	Check("writing the report", r.WriteReport(ctx, html, xlsx, bhasha.ReportOptions{Progress: ReportProgress()}))
	Provenance(r)
	show(fmt.Sprintf(`<p style="font-family:sans-serif">Written: <code>%s</code> and <code>%s</code></p>`, template.HTMLEscapeString(html), template.HTMLEscapeString(xlsx)))
}
