package bhasha_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tablestore"
	"github.com/bhashalab/bhasha/cmd/cli"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
)

// noData are files that hold no data for other tools to read, by their
// path relative to the directory: they stay as they are.
var noData = map[string]string{
	".lock":             "the directory's lock file (flock), empty",
	"tables/README.txt": "how to read the CSV tables, for a person",
}

// A run directory and its cache hold only standard formats (JSON, JSON
// Lines, YAML, CSV, Parquet, SQLite, each checked by its content), but
// for the files listed above; DuckDB reads every scored answer with one
// query, and every query of docs/run-directory.md runs as the page says:
// the scored answers' count, each kept table (every one the run keeps:
// the same rows and cells as the table Bhasha builds), the records.
func TestDuckDBReadsRunDirectory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join("testdata", "experiments", "smoke-indicklar.yaml")
	exp, err := bhasha.Load(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// The first run is stopped after half its requests and its records
	// sealed, so that the run directory holds a sealed segment and a live
	// records.jsonl, as a long run's does.
	const half = 30 // of the smoke run's several hundred requests
	var asked atomic.Int64
	first, stop := context.WithCancel(ctx)
	defer stop()
	url := simtest.Start(t, sim.Config{Facts: sim.FactsOf(exp.Items()), OnRequest: func(string, []byte) {
		if asked.Add(1) == half {
			stop()
		}
	}})
	work := t.TempDir()
	out, cacheDir := filepath.Join(work, "run"), filepath.Join(work, "cache")
	args := []string{"run", "--config", path, "--out", out, "--cache-dir", cacheDir, "--endpoint", url}
	var so, se bytes.Buffer
	cli.Run(first, args, &so, &se, nil) // stopped: its error says so
	lk, err := records.LockDir(out, records.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := records.Seal(lk, out, 0, nil)
	lk.Unlock()
	if err != nil || seg == "" {
		t.Fatalf("sealing the first half: %q, %v\n%s", seg, err, se.String())
	}
	se.Reset()
	if err := cli.Run(ctx, args, &so, &se, nil); err != nil {
		t.Fatalf("run: %v\n%s", err, se.String())
	}
	if _, err := os.Stat(filepath.Join(out, records.FileName)); err != nil {
		t.Fatalf("the resumed run left no live records: %v", err)
	}
	if err := cli.Run(ctx, []string{"report", "--run", out}, &so, &se, nil); err != nil {
		t.Fatalf("report: %v\n%s", err, se.String())
	}

	for _, root := range []string{out, cacheDir} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if why := allowed(rel); why != "" {
				t.Logf("%s: not checked: %s", p, why)
				return nil
			}
			if err := standard(p); err != nil {
				t.Errorf("%s: %v", p, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	r, err := bhasha.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := r.Scored()
	if err != nil || answers == 0 {
		t.Fatalf("scored answers: %d, %v", answers, err)
	}
	doc, err := os.ReadFile("docs/run-directory.md")
	if err != nil {
		t.Fatal(err)
	}
	// The page's DuckDB queries are its sql blocks that read the run
	// directory (RUN/…); the others are SQLite's (the response cache).
	var queries [][]string
	for _, q := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if strings.Contains(q[1], "'RUN/") {
			queries = append(queries, q)
		}
	}
	find := func(t *testing.T, what, in string) string {
		t.Helper()
		for _, q := range queries {
			if strings.Contains(q[1], in) {
				return q[1]
			}
		}
		t.Fatalf("docs/run-directory.md has no sql block reading %s (%s)", in, what)
		return ""
	}

	t.Run("every query of the page", func(t *testing.T) {
		if len(queries) < 3 {
			t.Fatalf("%d sql blocks", len(queries))
		}
		var qs []string
		for _, q := range queries {
			qs = append(qs, q[1])
		}
		duckQueries(t, out, qs...)
	})

	t.Run("every scored answer", func(t *testing.T) {
		q := find(t, "every scored answer", "RUN/"+scored.FileName)
		if rows := duckQueries(t, out, q)[0].Rows; len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] != float64(answers) {
			t.Errorf("%s\ngave %v, the run has %d scored answers", q, rows, answers)
		}
	})

	t.Run("every kept table", func(t *testing.T) {
		q := find(t, "a kept table", "RUN/"+tablestore.DirName+"/accuracy.parquet")
		kept, _ := filepath.Glob(filepath.Join(out, tablestore.DirName, "*"))
		infos, err := r.Tables()
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) < 10 {
			t.Fatalf("%d tables kept: %v", len(kept), kept)
		}
		var built []*bhasha.Table
		var qs []string
		for _, info := range infos {
			if info.Name == "answers" {
				continue // made row by row: never kept
			}
			p := tablestore.Path(out, info.Name)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("table %s is not kept: %v", info.Name, err)
				continue
			}
			tb, err := r.Table(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			built = append(built, tb)
			qs = append(qs, strings.ReplaceAll(q, "accuracy.parquet", filepath.Base(p)))
		}
		res := duckQueries(t, out, qs...)
		for k, tb := range built {
			cols, rows := res[k].Columns, res[k].Rows
			if fmt.Sprint(cols) != fmt.Sprint(tb.Header) || len(rows) != len(tb.Rows) {
				t.Errorf("table %s: DuckDB reads columns %q and %d rows; the table has %q and %d", tb.Name, cols, len(rows), tb.Header, len(tb.Rows))
				continue
			}
			for i, row := range tb.Rows {
				for j, v := range row {
					if got, want := rows[i][j], asJSON(v); got != want {
						t.Errorf("table %s: row %d, column %s: DuckDB reads %#v, the table holds %#v", tb.Name, i, tb.Header[j], got, v)
					}
				}
			}
		}
		t.Logf("DuckDB read %d kept tables as Bhasha built them", len(built))
	})

	t.Run("every record", func(t *testing.T) {
		m, err := run.ReadManifest(out)
		if err != nil {
			t.Fatal(err)
		}
		q := find(t, "the records", "RUN/records-*.parquet")
		if rows := duckQueries(t, out, q)[0].Rows; len(rows) != m.Counts.Records {
			t.Errorf("%s\ngave %d rows, the run has %d records", q, len(rows), m.Counts.Records)
		}
	})
}

// allowed says why the file at rel (relative to its directory) is not
// held to the standard formats, or "" when it is.
func allowed(rel string) string {
	rel = filepath.ToSlash(rel)
	if why, ok := noData[rel]; ok {
		return why
	}
	return ""
}

// standard checks that the file at p is in the standard format its
// extension names, by its content.
func standard(p string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	switch ext := filepath.Ext(p); ext {
	case ".json":
		if !json.Valid(b) {
			return fmt.Errorf("not JSON")
		}
	case ".jsonl":
		for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if !json.Valid(line) {
				return fmt.Errorf("line %d: not JSON", i+1)
			}
		}
	case ".yaml", ".yml":
		var v any
		if err := yaml.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("not YAML: %v", err)
		}
	case ".csv":
		if _, err := csv.NewReader(bytes.NewReader(b)).ReadAll(); err != nil {
			return fmt.Errorf("not CSV: %v", err)
		}
	case ".parquet":
		if len(b) < 12 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
			return fmt.Errorf("no Parquet magic PAR1 at both ends")
		}
	case ".sqlite", ".db":
		if !bytes.HasPrefix(b, []byte("SQLite format 3\x00")) {
			return fmt.Errorf("no SQLite header")
		}
	default:
		return fmt.Errorf("%q is none of JSON, JSON Lines, YAML, CSV, Parquet or SQLite", ext)
	}
	return nil
}

// asJSON is a table's cell as duckQueries gives DuckDB's value of it.
func asJSON(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
	}
	return v
}
