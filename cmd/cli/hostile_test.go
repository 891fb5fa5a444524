package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/xuri/excelize/v2"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// hostileRun is an IndicQuest run on the simulator whose models have
// hostile names (one climbs six folders up, one is markup, two sanitise
// alike) and whose dataset holds formulas, a negative number, NUL,
// U+0001, ESC and a 40,006-character answer. It returns the run
// directory, the dataset folder and the simulator's URL.
func hostileRun(t *testing.T, dir string) (out, data, url string) {
	t.Helper()
	data = filepath.Join(dir, "iq")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	rows := [][]string{{"Question", "Answer", "Domain"},
		{"Who wrote =cmd|' /C calc'!A0\x00\x01\x1b?", "=cmd|' /C calc'!A0", "Poli\x01tics"},
		{"What is minus a half?", "-0.5", "Sci\x1bence"},
		{"Which answer is long?", strings.Repeat("L", 40006), "@History"},
		{"Where is NUL?", "NUL\x00 SOH\x01 ESC\x1b", "Geo\x00graphy"}}
	for _, lang := range []string{"English", "Hindi"} {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.WriteAll(rows)
		if err := os.WriteFile(filepath.Join(data, lang+".csv"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "hostile.yaml")
	os.WriteFile(cfg, []byte(`name: hostile
study: indicquest
dataset: {path: iq}
languages: [en, hi]
models:
  - {name: "../../../../../../ESCAPED-model", served_name: sim-tiny-1b, endpoints: ["http://127.0.0.1:1/v1"]}
  - {name: "m<svg onload=alert(1)>\"'", served_name: sim-base-8b, endpoints: ["http://127.0.0.1:1/v1"]}
  - {name: "a/b", served_name: sim-tiny-1b, endpoints: ["http://127.0.0.1:1/v1"]}
  - {name: "a:b", served_name: sim-tiny-1b, endpoints: ["http://127.0.0.1:1/v1"]}
judge: {name: judge-8b, served_name: sim-base-8b, endpoints: ["http://127.0.0.1:1/v1"]}
`), 0o644)
	exp, err := bhasha.Load(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	url = simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items())})
	out = filepath.Join(dir, "run")
	var so, se bytes.Buffer
	// The judge cannot read the 40,006-character answer (the simulated
	// context is 8,192 tokens): that one verdict fails, the rest is scored.
	err = dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", filepath.Join(dir, "cache"), "--endpoint", url}, &so, &se)
	if code := ExitCode(context.Background(), err); code != 0 && code != exitIncomplete {
		t.Fatalf("run: %v\n%s", err, se.String())
	}
	return out, data, url
}

// `bhasha report --run DIR --figures DIR --html F --xlsx F` on the hostile
// run: every export lands inside its folder under a safe, distinct name
// (case 12); every SVG is XML, no LaTeX table or figure option holds a
// control character, and `datasets check` warns of them (case 13); the
// workbook marks each cell it had to change and counts them (case 14);
// the CSV tables hold the hostile cells exactly, with a companion note
// saying not to open them in a spreadsheet (case 15).
func TestHostileReport(t *testing.T) {
	dir := t.TempDir()
	out, data, url := hostileRun(t, dir)
	figs := filepath.Join(dir, "a", "b", "c", "d", "figs")
	if err := os.MkdirAll(figs, 0o755); err != nil {
		t.Fatal(err)
	}
	html, xlsx := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.xlsx")
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"report", "--run", out, "--figures", figs, "--html", html, "--xlsx", xlsx,
		"--endpoint", url, "--cache-dir", filepath.Join(dir, "cache")}, &so, &se); err != nil {
		t.Fatalf("report: %v\n%s", err, se.String())
	}
	_, lookErr := exec.LookPath("chromium")
	drawn := lookErr == nil
	if !drawn && os.Getenv("BHASHA_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium is required (BHASHA_REQUIRE_BROWSER) but not installed")
	}

	t.Run("12 names stay inside the folder", func(t *testing.T) {
		allowed := []string{out, filepath.Join(dir, "cache"), data, figs, html, xlsx, filepath.Join(dir, "hostile.yaml")}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !slices.ContainsFunc(allowed, func(a string) bool { return p == a || strings.HasPrefix(p, a+string(filepath.Separator)) }) {
				t.Errorf("%s was written outside the folders asked for", p)
			}
			return nil
		})
		for p := figs; p != dir; p = filepath.Dir(p) {
			es, _ := os.ReadDir(filepath.Dir(p))
			if filepath.Dir(p) != dir && (len(es) != 1 || es[0].Name() != filepath.Base(p)) {
				t.Errorf("%s holds %d entries, want only %s", filepath.Dir(p), len(es), filepath.Base(p))
			}
		}
		files, _ := os.ReadDir(filepath.Join(figs, "figures"))
		escaped, perKind := 0, map[string]int{}
		for _, f := range files {
			n := f.Name()
			perKind[filepath.Ext(n)]++
			if strings.ContainsAny(n, "/\\<>:\"'|?* ") || strings.Contains(n, "..") || strings.HasPrefix(n, ".") {
				t.Errorf("unsafe file name %q", n)
			}
			if strings.Contains(n, "ESCAPED-model") {
				escaped++
			}
		}
		// per model: protocols_M and domains_M_{judge,substring,overlap}; and protocol_ranks
		want := 4*4 + 1
		if perKind[".json"] != want || (drawn && (perKind[".svg"] != want || perKind[".png"] != want)) {
			t.Errorf("figure files per kind %v, want %d of each (a/b and a:b apart)", perKind, want)
		}
		if escaped == 0 {
			t.Error("no figure of the model named ../../../../../../ESCAPED-model in the folder")
		}
	})

	t.Run("13 control characters", func(t *testing.T) {
		svgs, _ := filepath.Glob(filepath.Join(figs, "figures", "*.svg"))
		if drawn && len(svgs) == 0 {
			t.Error("no SVG drawn")
		}
		for _, f := range svgs {
			b, _ := os.ReadFile(f)
			d := xml.NewDecoder(bytes.NewReader(b))
			for {
				_, err := d.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Errorf("%s is not XML: %v", filepath.Base(f), err)
					break
				}
			}
		}
		texs, _ := filepath.Glob(filepath.Join(figs, "tables", "*.tex"))
		jsons, _ := filepath.Glob(filepath.Join(figs, "figures", "*.json"))
		if len(texs) == 0 || len(jsons) == 0 {
			t.Fatalf("%d LaTeX tables, %d figure options", len(texs), len(jsons))
		}
		pictures := false
		for _, f := range append(texs, jsons...) {
			b, _ := os.ReadFile(f)
			if filepath.Ext(f) == ".json" { // the option's strings, decoded
				var o any
				if err := json.Unmarshal(b, &o); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				b = []byte(decodeAll(o))
			}
			for i, c := range b {
				if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
					t.Errorf("%s holds the control byte %#x: %q", filepath.Base(f), c, b[max(0, i-30):min(len(b), i+30)])
					break
				}
			}
			pictures = pictures || bytes.Contains(b, []byte("Geo␀graphy"))
		}
		if !pictures {
			t.Error("no export shows NUL as ␀")
		}
		var so, se bytes.Buffer
		if err := dispatch(context.Background(), []string{"datasets", "check", "--json", data}, &so, &se); err != nil {
			t.Fatalf("datasets check: %v", err)
		}
		var rep struct {
			Warnings []struct {
				File, Field, Message string
				Line                 int
			}
		}
		if err := json.Unmarshal(so.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, w := range rep.Warnings {
			if filepath.Base(w.File) == "English.csv" && w.Line == 2 && w.Field == "Question" &&
				strings.Contains(w.Message, "U+0000 NUL at character 29") && strings.Contains(w.Message, "U+001B ESC") {
				found = true
			}
		}
		if !found {
			t.Errorf("datasets check does not warn of English.csv line 2's NUL, U+0001 and ESC: %s", so.String())
		}
		so.Reset()
		dispatch(context.Background(), []string{"datasets", "check", data}, &so, &se)
		if !strings.Contains(so.String(), `English.csv line 5 field "Domain": control character(s) U+0000 NUL`) {
			t.Errorf("datasets check prints no warning:\n%s", so.String())
		}
	})

	t.Run("14 the workbook marks what it changed", func(t *testing.T) {
		x, err := excelize.OpenFile(xlsx)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		cut, pictures := 0, 0
		for _, sheet := range x.GetSheetList() {
			rows, _ := x.GetRows(sheet)
			for _, r := range rows {
				for _, v := range r {
					if n := len(utf16.Encode([]rune(v))); n > 32000 {
						if n > 32767 || !strings.HasSuffix(v, "… [cut: 40006 characters, full text in tables/answers.csv]") {
							t.Errorf("%s: a cell of %d characters without the cut mark: …%q", sheet, n, v[len(v)-60:])
						}
						cut++
					}
					if strings.ContainsRune(v, '\ufffd') {
						t.Errorf("%s: a cell holds U+FFFD, a character changed without a word: %q", sheet, v)
					}
					if strings.ContainsAny(v, "␀␁␛") {
						pictures++
					}
				}
			}
		}
		if cut == 0 || pictures == 0 {
			t.Errorf("%d cut cells, %d cells with control pictures", cut, pictures)
		}
		rows, _ := x.GetRows("README")
		var readme strings.Builder
		for _, r := range rows {
			readme.WriteString(strings.Join(r, " ") + "\n")
		}
		for _, want := range []string{"Text changed to fit Excel's limits", "Sheet 'samples': ", "cell(s) cut", "control character(s) shown as pictures"} {
			if !strings.Contains(readme.String(), want) {
				t.Errorf("README lacks %q:\n%s", want, readme.String())
			}
		}
		cs, _ := x.GetComments("samples")
		if len(cs) == 0 {
			t.Error("no comment on the samples sheet's changed cells")
		}
	})

	t.Run("15 CSV cells stay exact, with the companion note", func(t *testing.T) {
		for _, d := range []string{filepath.Join(out, "tables"), filepath.Join(figs, "tables")} {
			note, err := os.ReadFile(filepath.Join(d, "README.txt"))
			if err != nil || !bytes.Contains(note, []byte("Do NOT open them by double-click")) {
				t.Errorf("%s: no companion note (%v)", d, err)
			}
			f, err := os.Open(filepath.Join(d, "answers.csv"))
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			gold := slices.Index(recs[0], "gold")
			var golds []string
			for _, r := range recs[1:] {
				golds = append(golds, r[gold])
			}
			for _, want := range []string{"=cmd|' /C calc'!A0", "-0.5", "NUL\x00 SOH\x01 ESC\x1b", strings.Repeat("L", 40006)} {
				if !slices.Contains(golds, want) {
					t.Errorf("%s/answers.csv lacks the exact cell %.40q", d, want)
				}
			}
		}
	})
}

// decodeAll is every string in a decoded JSON value, one a line.
func decodeAll(x any) string {
	var sb strings.Builder
	var walk func(any)
	walk = func(x any) {
		switch y := x.(type) {
		case string:
			sb.WriteString(y + "\n")
		case []any:
			for _, v := range y {
				walk(v)
			}
		case map[string]any:
			for _, v := range y {
				walk(v)
			}
		}
	}
	walk(x)
	return sb.String()
}
