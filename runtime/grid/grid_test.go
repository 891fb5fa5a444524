package grid

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/runtime/shard"
)

// shardSpec describes one shard directory a test writes.
type shardSpec struct {
	k, n     int
	digest   string
	identity string // the served id of model m
	items    []string
	status   string
}

// writeShard writes a shard run directory of experiment "e": a record for
// each item asked of model m, and its manifest.
func writeShard(t *testing.T, grid string, s shardSpec) string {
	t.Helper()
	dir := filepath.Join(grid, shard.Spec{K: s.k, N: s.n}.Dir())
	w, err := records.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := engine.Identity{ID: s.identity, Root: "root"}
	for _, it := range s.items {
		k := engine.Key{Experiment: "e", Model: "m", Item: it, Language: "en"}
		if err := w.Write(&engine.Record{Key: k.String(), Fields: k, Status: engine.StatusOK, Response: "answer " + it, LatencyMS: 3, Identity: &id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m := &run.Manifest{Experiment: "e", ExperimentHash: s.digest, Shard: fmt.Sprintf("%d/%d", s.k, s.n), Status: s.status,
		Models: []engine.ModelInfo{{Name: "m", ServedName: s.identity, Identity: id}}, Requests: len(s.items), RecordsSealed: true,
		Counts: run.Counts{Records: len(s.items), OK: len(s.items)}}
	if err := run.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, run.ExperimentFile), []byte("name: e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// listing names every file under dir with its size and modification time.
func listing(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			fmt.Fprintf(&b, "%s %d %v\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}

// Merging refuses shards that are not of one experiment, one identity of
// each model and one layout, and shards whose records were edited, naming
// the shards and what differs, and writes nothing; shards that have not
// run or not finished make a partial run that names them.
func TestMerge(t *testing.T) {
	ok := func(k, n int, items ...string) shardSpec {
		return shardSpec{k: k, n: n, digest: "d1", identity: "m-1", items: items, status: "complete"}
	}
	cases := []struct {
		name   string
		shards []shardSpec
		edit   bool   // change a response in shard 0's records
		want   string // the refusal, "" when the merge succeeds
		status string
		notes  []string
	}{
		{name: "whole", shards: []shardSpec{ok(0, 2, "a", "b"), ok(1, 2, "c")}, status: "complete"},
		{name: "missing shard", shards: []shardSpec{ok(0, 3, "a"), ok(2, 3, "c")}, status: "partial",
			notes: []string{"1 of its 3 shards have not run (shard-001-of-003)"}},
		{name: "interrupted shard", shards: []shardSpec{ok(0, 2, "a"), {k: 1, n: 2, digest: "d1", identity: "m-1", items: []string{"b"}, status: "interrupted"}}, status: "partial",
			notes: []string{"shards not finished: shard-001-of-002 (interrupted)"}},
		{name: "another experiment", shards: []shardSpec{ok(0, 2, "a"), {k: 1, n: 2, digest: "d2", identity: "m-1", items: []string{"b"}, status: "complete"}},
			want: "shard shard-000-of-002 ran experiment \"e\" (experiment_sha256 d1) and shard shard-001-of-002 ran \"e\" (d2)"},
		{name: "another identity", shards: []shardSpec{ok(0, 2, "a"), {k: 1, n: 2, digest: "d1", identity: "m-2", items: []string{"b"}, status: "complete"}},
			want: "model m was answered by m-1 (root root) in one shard and by m-2 (root root) in shard shard-001-of-002"},
		{name: "a request in two shards", shards: []shardSpec{ok(0, 2, "a", "b"), ok(1, 2, "c", "b")},
			want: "shards shard-000-of-002 and shard-001-of-002 (record 2) both hold request e|m|b|en"},
		{name: "two counts", shards: []shardSpec{ok(0, 2, "a"), ok(0, 3, "b")},
			want: "it holds shards of 2 (shard-000-of-002) and of 3 (shard-000-of-003)"},
		{name: "edited record", shards: []shardSpec{ok(0, 2, "a"), ok(1, 2, "b")}, edit: true,
			want: "shard shard-000-of-002: " + "%s: 1 record(s) are not as Bhasha wrote them: line 1"},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			grid := filepath.Join(dir, "grid")
			var want []string
			for _, s := range c.shards {
				sd := writeShard(t, grid, s)
				for _, it := range s.items {
					want = append(want, engine.Key{Experiment: "e", Model: "m", Item: it, Language: "en"}.String())
				}
				if c.edit && s.k == 0 {
					p := filepath.Join(sd, records.FileName)
					b, _ := os.ReadFile(p)
					if err := os.WriteFile(p, []byte(strings.Replace(string(b), "answer a", "answer z", 1)), 0o644); err != nil {
						t.Fatal(err)
					}
					c.want = fmt.Sprintf(c.want, p)
				}
			}
			before := listing(t, grid)
			out := filepath.Join(dir, "out")
			err := Merge(ctx, grid, out)
			opened, oerr := Open(ctx, grid)
			if c.want != "" {
				for _, e := range []error{err, oerr} {
					if e == nil || !strings.Contains(e.Error(), c.want) {
						t.Errorf("error %v, want one saying %q", e, c.want)
					}
				}
				if after := listing(t, grid); after != before {
					t.Errorf("a refused merge changed the grid:\n%s\nwas\n%s", after, before)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("a refused merge left %s: %v", out, err)
				}
				return
			}
			if err != nil || oerr != nil {
				t.Fatalf("merge: %v; open: %v", err, oerr)
			}
			if opened != filepath.Join(grid, MergedDir) {
				t.Errorf("Open gave %s, want %s", opened, filepath.Join(grid, MergedDir))
			}
			for _, d := range []string{out, opened} {
				m, err := run.ReadManifest(d)
				if err != nil {
					t.Fatal(err)
				}
				if m.Status != c.status || m.Shard != "" || m.ExperimentHash != "d1" || m.Counts.Records != len(want) || len(m.Models) != 1 {
					t.Errorf("%s: manifest %+v, want status %s, no shard, digest d1, %d records, one model", d, m, c.status, len(want))
				}
				for _, n := range c.notes {
					if !slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.Contains(w, n) }) {
						t.Errorf("%s: warnings %q name no %q", d, m.Warnings, n)
					}
				}
				var got []string
				if err := records.Read(d, func(r *engine.Record) error { got = append(got, r.Key); return nil }); err != nil {
					t.Fatal(err)
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s holds %v, want %v", d, got, want)
				}
				files, _ := records.Files(d)
				if len(files) != 1 || !strings.HasSuffix(files[0], ".parquet") {
					t.Errorf("%s: records files %v, want one Parquet segment", d, files)
				}
				scan, err := records.ScanDir(d, "e")
				if err != nil || scan.EditedError() != nil {
					t.Errorf("%s: %v %v", d, err, scan.EditedError())
				}
			}
		})
	}
}

// Open merges again only when a shard changed; an existing non-empty
// --out is refused and left as it was; a read-only grid with no merged
// run is refused, naming bhasha merge.
func TestOpenRebuildsAndRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	grid := filepath.Join(dir, "grid")
	writeShard(t, grid, shardSpec{k: 0, n: 2, digest: "d1", identity: "m-1", items: []string{"a"}, status: "complete"})
	writeShard(t, grid, shardSpec{k: 1, n: 2, digest: "d1", identity: "m-1", items: []string{"b"}, status: "interrupted"})
	merged, err := Open(ctx, grid)
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(merged, "tables")
	if err := os.Mkdir(mark, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, grid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("an unchanged grid was merged again: %v", err)
	}
	// The interrupted shard resumes and completes.
	if err := os.RemoveAll(filepath.Join(grid, "shard-001-of-002")); err != nil {
		t.Fatal(err)
	}
	writeShard(t, grid, shardSpec{k: 1, n: 2, digest: "d1", identity: "m-1", items: []string{"b", "c"}, status: "complete"})
	if _, err := Open(ctx, grid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); !os.IsNotExist(err) {
		t.Errorf("a changed grid was not merged again: %v", err)
	}
	if m, err := run.ReadManifest(merged); err != nil || m.Status != "complete" || m.Counts.Records != 3 {
		t.Errorf("merged manifest %+v, %v; want 3 records, complete", m, err)
	}
	ents, _ := os.ReadDir(grid)
	if len(ents) != 3 {
		t.Errorf("the grid holds %d entries, want the two shards and %s", len(ents), MergedDir)
	}

	full := filepath.Join(dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "x"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listing(t, full)
	if err := Merge(ctx, grid, full); err == nil || !strings.Contains(err.Error(), "exists and is not empty") {
		t.Errorf("merge into a non-empty directory: %v", err)
	}
	if after := listing(t, full); after != before {
		t.Errorf("the refusal changed %s", full)
	}

	if os.Geteuid() == 0 {
		t.Log("running as root: a read-only directory can be written, so that case is not tried")
		return
	}
	if err := os.RemoveAll(merged); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(grid, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(grid, 0o755)
	if _, err := Open(ctx, grid); err == nil || !strings.Contains(err.Error(), "bhasha merge --grid "+grid+" --out DIR") {
		t.Errorf("open of a read-only grid: %v", err)
	}
}
