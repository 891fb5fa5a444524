package brevity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/examples/brevity"
	"github.com/bhashalab/bhasha/study"
)

// registry is the built-in studies and the brevity study, as a program
// that reads YAML files naming it registers them.
func registry(t *testing.T) *bhasha.Registry {
	t.Helper()
	reg := bhasha.BuiltinStudies()
	if err := reg.Add(brevity.Study{}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// The study end to end: an experiment file setting its own options is
// loaded, run on the simulator and opened again; the run has its own
// table (with its rows and declared columns), its own criterion (brief)
// in the accuracy table, answers.csv, the workbook's samples sheet and
// the HTML explorer's fields, and its own figure among the run's figures
// and drawn in the HTML report.
func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	reg := registry(t)
	exp, err := bhasha.Load(ctx, "testdata/brevity.yaml", bhasha.WithStudies(reg))
	if err != nil {
		t.Fatal(err)
	}
	if o := study.OptionsOf[brevity.Options](exp); o.AnswerTokens != 12 || o.BriefWords != 1 {
		t.Fatalf("options read from the file: %+v", o)
	}
	ran, err := bhasha.Run(ctx, exp, bhasha.Simulator(), bhasha.Out(filepath.Join(dir, "run")), bhasha.CacheDir(filepath.Join(dir, "cache")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bhasha.Open(ctx, filepath.Join(dir, "run")); err == nil || !strings.Contains(err.Error(), `unknown study "brevity"`) {
		t.Errorf("opened without the study registered: %v", err)
	}
	r, err := bhasha.Open(ctx, filepath.Join(dir, "run"), bhasha.WithStudies(reg))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Simulated() {
		t.Error("the run does not say it is simulated")
	}
	if err := reg.Add(brevity.Study{}); err == nil {
		t.Error("the study registered twice")
	}
	acc, err := r.Table("accuracy")
	if err != nil {
		t.Fatal(err)
	}
	if first, err := ran.Table("accuracy"); err != nil || first.Markdown() != acc.Markdown() {
		t.Errorf("reopened accuracy differs: %v\n%s\n%s", err, acc.Markdown(), first.Markdown())
	}
	const answers = 2 * 12 // two models, twelve questions

	t.Run("its table", func(t *testing.T) {
		infos, err := r.Tables()
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(infos, func(in bhasha.TableInfo) bool { return in.Name == brevity.LengthsTable }); i < 0 || infos[i].Description == "" {
			t.Errorf("%s is not listed with its description: %+v", brevity.LengthsTable, infos)
		}
		lengths, err := r.Table(brevity.LengthsTable)
		if err != nil {
			t.Fatal(err)
		}
		if !lengths.Simulated || len(lengths.Rows) != 2 {
			t.Fatalf("%s: simulated %v, %d rows:\n%s", lengths.Name, lengths.Simulated, len(lengths.Rows), lengths.Markdown())
		}
		n := 0
		for _, row := range lengths.Rows {
			k, m, rate := lengths.Num(row, "k"), lengths.Num(row, "n"), lengths.Num(row, "rate")
			if k > m || rate != k/m || lengths.Num(row, "ci_lo") > rate || lengths.Num(row, "ci_hi") < rate || lengths.Num(row, "mean_words") <= 0 {
				t.Errorf("%s row %v", lengths.Name, row)
			}
			n += int(m)
		}
		if n != answers {
			t.Errorf("%s counts %d answers, want %d", lengths.Name, n, answers)
		}
		for _, c := range lengths.Columns() {
			if c.Description == "" {
				t.Errorf("%s.%s has no description", lengths.Name, c.Name)
			}
		}
	})

	t.Run("its criterion", func(t *testing.T) {
		metrics := map[string]int{}
		for _, row := range acc.Rows {
			if acc.Str(row, "study") != "brevity" {
				t.Errorf("accuracy row %v", row)
			}
			metrics[acc.Str(row, "metric")] += int(acc.Num(row, "n"))
		}
		if metrics["correct"] != answers || metrics["brief"] != answers {
			t.Errorf("accuracy counts per metric %v, want correct and brief over %d answers", metrics, answers)
		}
		csv, err := r.Table("answers")
		if err != nil {
			t.Fatal(err)
		}
		col := csv.Col("brief")
		if col < 0 || len(csv.Rows) != answers {
			t.Fatalf("answers.csv: columns %q, %d rows", csv.Header, len(csv.Rows))
		}
		briefs := 0
		for _, row := range csv.Rows {
			w := brevity.Words(csv.Str(row, "prediction"))
			want := w >= 1 && w <= 1 && !row[csv.Col("failed")].(bool)
			if row[col] != want {
				t.Errorf("answers.csv: brief %v for %q", row[col], csv.Str(row, "prediction"))
			}
			if want {
				briefs++
			}
		}
		if briefs == 0 || briefs == answers {
			t.Errorf("%d of %d answers brief: the criterion tells nothing apart", briefs, answers)
		}
		if c := csv.Columns()[col]; !strings.Contains(c.Description, "at most one word") {
			t.Errorf("answers.csv's brief column: %q", c.Description)
		}

		var wb bytes.Buffer
		if err := writeReport(r, &wb, false); err != nil {
			t.Fatal(err)
		}
		f, err := excelize.OpenReader(&wb)
		if err != nil {
			t.Fatal(err)
		}
		if i, err := f.GetSheetIndex(brevity.LengthsTable); err != nil || i < 0 {
			t.Errorf("the workbook has no %s sheet: %v", brevity.LengthsTable, f.GetSheetList())
		}
		sheet, err := f.GetRows("samples")
		if err != nil || len(sheet) != answers+1 {
			t.Fatalf("samples sheet: %d rows, %v", len(sheet), err)
		}
		if !slices.Contains(sheet[0], "brief") || !slices.Equal(sheet[0][:len(csv.Header)], csv.Header) {
			t.Errorf("samples sheet header %q, answers.csv %q", sheet[0], csv.Header)
		}

		var page bytes.Buffer
		if err := writeReport(r, &page, true); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(page.String(), `id="table-`+brevity.LengthsTable+`"`) {
			t.Errorf("the HTML report does not show %s", brevity.LengthsTable)
		}
		fields := explorerFields(t, page.String())
		if !slices.Equal(fields, sheet[0]) {
			t.Errorf("explorer fields %q, samples sheet %q", fields, sheet[0])
		}
	})

	t.Run("its figure", func(t *testing.T) {
		figs, err := r.Figures()
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(figs, func(f study.Figure) bool { return f.Name == brevity.FigureName })
		if i < 0 {
			t.Fatalf("no figure %s among %d", brevity.FigureName, len(figs))
		}
		fig := figs[i]
		if fig.N != "n = 24 answers" || !fig.Simulated || !strings.HasSuffix(fig.Caption, "SIMULATED models") || !strings.Contains(fig.Caption, "within one word") {
			t.Errorf("figure: n %q, simulated %v, caption %q", fig.N, fig.Simulated, fig.Caption)
		}
		var page bytes.Buffer
		if err := writeReport(r, &page, true); err != nil {
			t.Fatal(err)
		}
		// The page draws it: its caption under the chart, its title and
		// its stamp (n, SIMULATED) in the chart's option.
		for _, want := range []string{html.EscapeString(fig.Caption), "answers within one word, per model", "n = 24 answers · SIMULATED models"} {
			if !strings.Contains(page.String(), want) {
				t.Errorf("the HTML report lacks the figure's %q", want)
			}
		}
	})
}

// explorerFields reads the names of the fields the HTML report's
// explorer embeds (its data's fields, in order).
func explorerFields(t *testing.T, page string) []string {
	t.Helper()
	const open = `id="ex-data">`
	i := strings.Index(page, open)
	if i < 0 {
		t.Fatal("no explorer data in the page")
	}
	j := strings.Index(page[i:], "</script>")
	var data struct {
		Fields []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(page[i+len(open):i+j]), &data); err != nil {
		t.Fatalf("explorer data: %v", err)
	}
	var out []string
	for _, f := range data.Fields {
		out = append(out, f.Name)
	}
	return out
}

// The study's options are refused with their YAML line when bad, and
// refused naming the study they apply to when another study sets them.
func TestOptionsRefused(t *testing.T) {
	const (
		own     = "name: b\nstudy: brevity\ndataset: {path: testdata/trivia.jsonl}\nmodels: [{name: m, served_name: M}]\n"
		another = "name: d\nstudy: mdi\ndataset: {path: testdata/trivia.jsonl}\nmodels: [{name: m, served_name: M}]\n"
	)
	for _, tc := range []struct {
		name, yaml string
		want       string // "" when accepted
	}{
		{"set", own + "brief_words: 2\n", ""},
		{"too many words", own + "brief_words: 500\n", "line 5: brief_words 500: want 1 to 100 (or absent for 5)"},
		{"too many tokens", own + "answer_tokens: 5000\n", "line 5: answer_tokens 5000: want 1 to 4096 (or absent for 16)"},
		{"not a number", own + "brief_words: few\n", "line 5: cannot unmarshal"},
		{"mistyped", own + "brief_word: 2\n", `line 5: unknown key "brief_word": did you mean "brief_words"?`},
		{"on another study", another + "brief_words: 2\n", "line 5: brief_words does not apply to study mdi (it applies to brevity)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bhasha.Parse(context.Background(), []byte(tc.yaml), bhasha.WithStudies(registry(t)))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// The example imports only Bhasha's public packages: nothing under
// internal/, in its code or its tests.
func TestPublicImportsOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	var p struct {
		ImportPath                         string
		Imports, TestImports, XTestImports []string
	}
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	mod := strings.TrimSuffix(p.ImportPath, "/examples/brevity")
	for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
		if strings.HasPrefix(imp, mod+"/internal/") {
			t.Errorf("imports %s", imp)
		}
	}
}

// writeReport writes r's HTML report (html) or workbook into w
// (Results.WriteReport).
func writeReport(r *bhasha.Results, w io.Writer, html bool) error {
	dir, err := os.MkdirTemp("", "brevity-report-")
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
