// Package ducktest runs DuckDB queries for the tests that check what
// other tools read of Bhasha's files, through DuckDB's node client
// (tools/duckscan/query.mjs, installed by make duckscan).
package ducktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A Result is a query's column names and rows: a number is a float64 (an
// integer past 2^53 a string), a NaN or infinite double the string "NaN",
// "Infinity" or "-Infinity", a NULL nil.
type Result struct {
	Columns []string
	Rows    [][]any
}

// Query runs queries in turn with DuckDB, every "RUN/" in them standing
// for run directory dir's path, and returns their results, in order. It
// skips the test when node or DuckDB's node client is not installed, and
// fails it instead when BHASHA_REQUIRE_DUCKDB is set (make gotest sets
// it); a query DuckDB refuses fails the test with DuckDB's error. It
// starts one node process, for at most five minutes.
func Query(t testing.TB, dir string, queries ...string) []Result {
	t.Helper()
	script, err := find()
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("BHASHA_REQUIRE_DUCKDB") != "" {
			t.Fatalf("DuckDB's node client is required (BHASHA_REQUIRE_DUCKDB): %v (install Node.js, then make duckscan)", err)
		}
		t.Skipf("no DuckDB for this check: %v (install Node.js, then make duckscan)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script, dir}, queries...)...)
	var stderr []byte
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	if err != nil {
		t.Fatalf("DuckDB: %v\n%s", err, stderr)
	}
	var res []Result
	dec := json.NewDecoder(bytes.NewReader(out))
	for range queries {
		var r Result
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("DuckDB's rows: %v\n%s", err, out)
		}
		res = append(res, r)
	}
	return res
}

// find is tools/duckscan/query.mjs in the module holding the working
// directory, once DuckDB's node client is installed beside it.
func find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
	tool := filepath.Join(dir, "tools", "duckscan")
	if _, err := os.Stat(filepath.Join(tool, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		return "", errors.New("DuckDB's node client is not installed in tools/duckscan")
	}
	return filepath.Join(tool, "query.mjs"), nil
}
