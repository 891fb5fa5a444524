package bhasha_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
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
	"github.com/bhashalab/bhasha/analysis/tables"
)

// The demo's outputs read by pandas, openpyxl and DuckDB as
// docs/outputs.md and tables/README.txt say, on the smoke IndicKLAR run
// (no condition: every condition cell is missing) and the index
// workbook over it. The Python checks need /usr/bin/python3 with pandas
// and openpyxl (Debian's python3-pandas, python3-openpyxl): skipped
// without them unless BHASHA_REQUIRE_OFFICE is set. The DuckDB checks
// need node and DuckDB's node client (make duckscan): skipped without
// them unless BHASHA_REQUIRE_DUCKDB is set.
func TestOutputsReadAsDocumented(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	inputs := filepath.Join(work, "inputs")
	if err := os.CopyFS(inputs, bhasha.DefaultInputs()); err != nil {
		t.Fatal(err)
	}
	exps := filepath.Join(inputs, "experiments")
	files, _ := filepath.Glob(filepath.Join(exps, "*.yaml"))
	for _, f := range files {
		if filepath.Base(f) != "smoke-indicklar.yaml" {
			os.Remove(f)
		}
	}
	out := filepath.Join(work, "out")
	res, err := bhasha.Demo(ctx, exps, out, bhasha.CacheDir(filepath.Join(work, "cache")))
	if err != nil || len(res) != 1 {
		t.Fatalf("demo: %v (%d runs)", err, len(res))
	}
	r := res[0]
	run := r.Dir()
	ts, err := r.WriteTables()
	if err != nil {
		t.Fatal(err)
	}
	var names tables.FileNames
	csvOf := map[*tables.Table]string{}
	for _, tb := range ts {
		csvOf[tb] = filepath.Join(run, "tables", names.Name(tb.Name)+".csv")
	}
	t.Run("csv numbers are exact", func(t *testing.T) {
		cells := 0
		for _, tb := range ts {
			recs := readCSV(t, csvOf[tb])
			cols := tb.Columns()
			for i := range tb.Len() {
				row := tb.Row(i, nil)
				for c, col := range cols {
					if col.Type != tables.Float && col.Type != tables.Int {
						continue
					}
					text := recs[i+1][c+1]
					want, ok := num(row[c])
					if !ok || math.IsNaN(want) {
						if text != "" {
							t.Errorf("%s row %d %s: %q for a missing number", tb.Name, i+1, col.Name, text)
						}
						continue
					}
					got, err := strconv.ParseFloat(text, 64)
					if err != nil || got != want {
						t.Errorf("%s row %d %s: %q reads back as %v (%v), the table holds %v", tb.Name, i+1, col.Name, text, got, err, want)
					}
					cells++
				}
			}
		}
		if cells < 100 {
			t.Errorf("%d numeric cells checked", cells)
		}
	})

	t.Run("pandas reads types", func(t *testing.T) {
		line := pandasLine(t)
		// The page's pandas lines are README.txt's.
		block := strings.Join(strings.Fields(docBlock(t, "docs/outputs.md", "python", "read_csv")), " ")
		for l := range strings.Lines(strings.Replace(line, "read_csv(p", `read_csv("run/tables/accuracy.csv"`, 1)) {
			if l = strings.Join(strings.Fields(l), " "); !strings.Contains(block, l) {
				t.Errorf("docs/outputs.md's pandas block lacks tables/README.txt's\n%s\nin\n%s", l, block)
			}
		}
		python(t, "pandas")
		type want struct {
			File    string   `json:"file"`
			Numeric []string `json:"numeric"`
			Text    []string `json:"text"`
		}
		var ws []want
		for _, tb := range ts {
			if tb.Len() == 0 {
				continue // a header alone says no column's type
			}
			w := want{File: csvOf[tb]}
			for _, col := range tb.Columns() {
				switch col.Type {
				case tables.Float, tables.Int:
					w.Numeric = append(w.Numeric, col.Name)
				case tables.String:
					if slices.Contains([]string{"model", "item", "language", "form", "strategy", "condition", "role", "domain"}, col.Name) {
						w.Text = append(w.Text, col.Name)
					}
				}
			}
			ws = append(ws, w)
		}
		spec, _ := json.Marshal(ws)
		script := `import json, sys
import pandas as pd
bad = []
for w in json.loads(sys.argv[1]):
    p = w["file"]
` + indent(line, "    ") + `
    for c in w["numeric"] or []:
        if not pd.api.types.is_numeric_dtype(df[c]):
            bad.append("%s: numeric column %s read as %s" % (p, c, df[c].dtype))
    for c in w["text"] or []:
        if df[c].dtype != object or any(v is not None and v == v and not isinstance(v, str) for v in df[c]):
            bad.append("%s: key column %s read as %s" % (p, c, df[c].dtype))
    if "p" in df.columns:
        (df.p < 0.05).sum()
print(json.dumps(bad))`
		var bad []string
		if err := json.Unmarshal(runPython(t, script, string(spec)), &bad); err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error(b)
		}
	})

	t.Run("workbooks", func(t *testing.T) {
		python(t, "openpyxl")
		for _, book := range []string{filepath.Join(run, "report.xlsx"), filepath.Join(out, "report.xlsx")} {
			f, err := excelize.OpenFile(book)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for _, s := range f.GetSheetList() {
				rows, _ := f.GetRows(s)
				for _, row := range rows {
					if slices.ContainsFunc(row, func(v string) bool { return v != "" }) {
						want[s]++
					}
				}
			}
			f.Close()
			var got map[string]int
			if err := json.Unmarshal(runPython(t, `import json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
print(json.dumps({ws.title: sum(1 for r in ws.iter_rows(values_only=True) if any(v is not None for v in r)) for ws in wb.worksheets}))`, book), &got); err != nil {
				t.Fatal(err)
			}
			for s, n := range want {
				if got[s] != n {
					t.Errorf("%s: openpyxl (read-only) reads %d rows of sheet %q, excelize %d", filepath.Base(book), got[s], s, n)
				}
			}
		}
		// An empty text is an empty cell, as in the CSV.
		var cond []any
		if err := json.Unmarshal(runPython(t, `import json, sys, openpyxl
ws = openpyxl.load_workbook(sys.argv[1], read_only=True)["accuracy"]
rows = list(ws.iter_rows(values_only=True))
i = list(rows[0]).index("condition")
print(json.dumps(sorted({repr(r[i]) for r in rows[1:]})))`, filepath.Join(run, "report.xlsx")), &cond); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cond, []any{"None"}) {
			t.Errorf("the accuracy sheet's missing conditions read as %v, want None (an empty cell)", cond)
		}
	})

	t.Run("index sheets name their tables", func(t *testing.T) {
		f, err := excelize.OpenFile(filepath.Join(out, "report.xlsx"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sheets := f.GetSheetList()
		readme, _ := f.GetRows("README")
		var lines []string
		for _, row := range readme {
			lines = append(lines, strings.Join(row, " "))
		}
		for _, tb := range []string{"versus_paper", "conclusions", "acc_clc_wide", "tokenization_marks", "flip_points_wide"} {
			full := "smoke-indicklar " + tb
			if slices.Contains(sheets, full) {
				continue
			}
			i := slices.IndexFunc(sheets, func(s string) bool { return strings.HasSuffix(s, " "+tb) })
			if i < 0 {
				t.Errorf("no sheet holds table %s: %q", tb, sheets)
				continue
			}
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "'"+sheets[i]+"'") && strings.Contains(l, tb) }) {
				t.Errorf("shortened sheet %q is not listed on the README sheet: %q", sheets[i], lines)
			}
		}
		for _, s := range sheets {
			if len([]rune(s)) > 31 {
				t.Errorf("sheet %q is over 31 characters", s)
			}
		}
	})

	t.Run("duckdb joins scored.parquet and the csv", func(t *testing.T) {
		q := strings.ReplaceAll(docBlock(t, "docs/outputs.md", "sql", "IS NOT DISTINCT FROM"), "'run/", "'"+run+"/")
		rows := duck(t, q)
		acc := readCSV(t, filepath.Join(run, "tables", "accuracy.csv"))
		if len(rows) == 0 {
			t.Fatalf("the documented join matches no rows (accuracy.csv has %d)", len(acc)-1)
		}
		for _, r := range rows { // model, language, form, strategy, condition, answers, n, rate_of_answers, rate
			if len(r) != 9 || fmt.Sprint(r[5]) != fmt.Sprint(r[6]) || fmt.Sprint(r[7]) != fmt.Sprint(r[8]) {
				t.Errorf("the documented join pairs a cell's answers with another row of accuracy.csv: %v", r)
			}
		}
	})

	t.Run("records with pandas", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(run, "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		python(t, "pandas")
		dir := strconv.Quote(run + "/")
		script := strings.ReplaceAll(docBlock(t, "docs/run-directory.md", "python", "pd.read_json"), `"run/`, dir[:len(dir)-1])
		got := strings.TrimSpace(string(runPython(t, script+"print(len(df), df.key.is_unique, df.request.map(type).eq(dict).all())\n")))
		if want := fmt.Sprintf("%d True True", strings.Count(string(b), "\n")); got != want {
			t.Errorf("docs/run-directory.md's pandas lines read (records, unique keys, request as a dict) %q, want %q", got, want)
		}
	})

	t.Run("request digests", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(run, "records.jsonl")) // the run's only records file: it is too small to seal
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(b), "\n")
		python(t, "json")
		dir := strconv.Quote(run + "/")
		script := strings.ReplaceAll(docBlock(t, "docs/outputs.md", "python", "request_sha256"), `"run/`, dir[:len(dir)-1])
		if got, want := strings.TrimSpace(string(runPython(t, script))), fmt.Sprintf("%d bodies checked, 0 differ", n); got != want {
			t.Errorf("the documented Python check prints %q, want %q", got, want)
		}
		rows := duck(t, strings.ReplaceAll(docBlock(t, "docs/outputs.md", "sql", "regexp_extract"), "'run/", "'"+run+"/"))
		if len(rows) != 1 || fmt.Sprint(rows[0]) != fmt.Sprint([]any{float64(n), float64(0)}) {
			t.Errorf("the documented DuckDB check gives %v, want [%d 0]", rows, n)
		}
		// What the page warns of: DuckDB's JSON re-encodes the body.
		json := duck(t, fmt.Sprintf(`SELECT count(*) FILTER (WHERE sha256(request::VARCHAR) <> request_sha256) FROM read_json('%s/records*.jsonl*', format = 'newline_delimited', columns = {request: 'JSON', request_sha256: 'VARCHAR'})`, run))
		if len(json) != 1 || fmt.Sprint(json[0]) == "[0]" {
			t.Errorf("DuckDB's JSON kept every body's bytes (%v): the demo holds no body the page's warning is about", json)
		}
	})
}

// num is a number cell's value.
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// pandasLine is the pandas read line of tables/README.txt, with the
// names it uses set, reading path p into df.
func pandasLine(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`pandas:\s+pd\.read_csv\("accuracy\.csv"(.*)\)\n`).FindStringSubmatch(tables.CSVNote)
	if m == nil {
		t.Fatalf("tables/README.txt has no pandas line:\n%s", tables.CSVNote)
	}
	line := "df = pd.read_csv(p" + m[1] + ")"
	if strings.Contains(line, "TEXT") {
		d := regexp.MustCompile(`with TEXT = (\{[^}]*\})`).FindStringSubmatch(tables.CSVNote)
		if d == nil {
			t.Fatalf("tables/README.txt uses TEXT without saying what it is:\n%s", tables.CSVNote)
		}
		line = "TEXT = " + strings.Join(strings.Fields(d[1]), " ") + "\n" + line
	}
	return line
}

func indent(s, by string) string { return by + strings.ReplaceAll(s, "\n", "\n"+by) }

// docBlock is the fenced block of language lang in the page that holds
// want.
func docBlock(t *testing.T, page, lang, want string) string {
	t.Helper()
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if strings.Contains(m[1], want) {
			return m[1]
		}
	}
	t.Fatalf("%s has no %s block with %q", page, lang, want)
	return ""
}

// python skips the test (fails it under BHASHA_REQUIRE_OFFICE) when
// /usr/bin/python3 cannot import module.
func python(t *testing.T, module string) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import "+module).Run(); err != nil {
		if os.Getenv("BHASHA_REQUIRE_OFFICE") != "" {
			t.Fatalf("/usr/bin/python3 with %s is required (BHASHA_REQUIRE_OFFICE): %v (apt-get install python3-%s)", module, err, module)
		}
		t.Skipf("no /usr/bin/python3 with %s (python3-%s): %v", module, module, err)
	}
}

func runPython(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/bin/python3", append([]string{"-c", script}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("python: %v\n%s\n%s", err, stderr, script)
	}
	return out
}

// duck runs query with DuckDB (duckQueries) and returns its rows.
func duck(t *testing.T, query string) [][]any {
	t.Helper()
	return duckQueries(t, ".", query)[0].Rows
}

// A duckResult is a query's column names and rows, as
// tools/duckscan/query.mjs gives them: a number is a float64 (an integer
// past 2^53 a string), a NaN or infinite double the string "NaN",
// "Infinity" or "-Infinity", a NULL nil.
type duckResult struct {
	Columns []string
	Rows    [][]any
}

// duckQueries runs queries in turn with DuckDB's node client
// (tools/duckscan/query.mjs), every "RUN/" in them standing for run
// directory dir, and returns their results. It skips the test without
// node or the client (make duckscan), and fails it instead when
// BHASHA_REQUIRE_DUCKDB is set (make gotest sets it).
func duckQueries(t *testing.T, dir string, queries ...string) []duckResult {
	t.Helper()
	tool, err := filepath.Abs(filepath.Join("tools", "duckscan"))
	if err == nil {
		_, err = os.Stat(filepath.Join(tool, "node_modules", "@duckdb", "node-api", "package.json"))
	}
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("BHASHA_REQUIRE_DUCKDB") != "" {
			t.Fatalf("DuckDB's node client is required (BHASHA_REQUIRE_DUCKDB): %v (install Node.js, then make duckscan)", err)
		}
		t.Skipf("no DuckDB for this check: %v (install Node.js, then make duckscan)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(tool, "query.mjs"), dir}, queries...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	res := make([]duckResult, len(queries))
	for i := range res {
		if err := dec.Decode(&res[i]); err != nil {
			t.Fatalf("DuckDB's rows: %v\n%s", err, out)
		}
	}
	return res
}
