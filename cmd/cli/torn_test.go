package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/sim"
	"github.com/bhashalab/bhasha/sim/simtest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// answersOf is the response of each record of dir, by key; a key recorded
// twice is an error.
func answersOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := records.Read(dir, func(r *engine.Record) error {
		if _, ok := out[r.Key]; ok {
			return fmt.Errorf("two records of %s", r.Key)
		}
		if r.Status != engine.StatusOK {
			return fmt.Errorf("%s: %s", r.Key, r.Status)
		}
		out[r.Key] = r.Response
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameAnswers fails unless got holds exactly want's keys and answers.
func sameAnswers(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d records, want %d", len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %q (recorded %t), want %q", k, g, ok, w)
			return
		}
	}
}

// copyRun copies a run directory's manifest, experiment copy and records
// into a new directory.
func copyRun(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	for _, name := range []string{run.ManifestFile, run.ExperimentFile, records.FileName} {
		b, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// A two-stage run whose records.jsonl ends in a torn line (cut mid-line
// with the manifest left "running", or cut by a full file system under a
// file size limit) opens with tables from its whole lines and notes that
// the run is partial and the torn line was not read; run again, it
// resumes and ends with the answers of an uninterrupted run, one record
// per key.
func TestTornTailResumesMultiStage(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash for ulimit -f")
	}
	for _, file := range []string{"smoke-indicklar.yaml", "smoke-mdi.yaml", "smoke-indicquest.yaml"} {
		t.Run(file, func(t *testing.T) {
			ref := smokeRun(t, file)
			want := answersOf(t, ref)
			whole, err := os.ReadFile(filepath.Join(ref, records.FileName))
			if err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join("../../testdata/experiments", file)
			cache := filepath.Join(ref, "cache") // every answer, so that a resume asks the same
			url := simtest.Start(t, sim.Config{})
			variants := []struct {
				name string
				make func(t *testing.T) string
			}{
				{"cut mid-line, manifest running", func(t *testing.T) string {
					out := copyRun(t, ref)
					half := bytes.IndexByte(whole[len(whole)/2:], '\n') + len(whole)/2 + 1
					cut := half + bytes.IndexByte(whole[half:], '\n')/2 // mid-way through the next line
					os.WriteFile(filepath.Join(out, records.FileName), whole[:cut], 0o644)
					m, err := run.ReadManifest(out)
					if err != nil {
						t.Fatal(err)
					}
					m.Status, m.Ended = "running", nil
					if err := run.WriteManifest(out, m); err != nil {
						t.Fatal(err)
					}
					return out
				}},
				{"file size limit (ulimit -f)", func(t *testing.T) string {
					out := filepath.Join(t.TempDir(), "run")
					// bash's ulimit -f counts KiB; the limit holds for the
					// response cache's files too, whose SQLite shared-memory
					// file is 32 KiB.
					blocks := max(len(whole)/2, 40<<10) / 1024
					if blocks*1024 >= len(whole) {
						t.Skipf("records.jsonl is %d bytes: too small to tear under a limit above the cache's 32 KiB", len(whole))
					}
					c := exec.Command(bash, "-c", fmt.Sprintf(`trap '' XFSZ; ulimit -f %d || exit 3; exec "$0" "$@"`, blocks),
						os.Args[0], "run", "--config", cfg, "--out", out, "--cache-dir", cache, "--endpoint", url)
					c.Env = append(os.Environ(), "BHASHA_AS_CLI=1")
					code, msg := runCLI(t, c)
					if code == 3 && !strings.Contains(msg, "records") {
						t.Skipf("cannot set ulimit -f: %s", msg)
					}
					if code == 0 || !strings.Contains(msg, "file too large") {
						t.Fatalf("the run under ulimit -f %d: exit %d: %s", blocks, code, msg)
					}
					return out
				}},
			}
			for _, v := range variants {
				t.Run(v.name, func(t *testing.T) {
					out := v.make(t)
					b, err := os.ReadFile(filepath.Join(out, records.FileName))
					if err != nil {
						t.Fatal(err)
					}
					if len(b) == 0 || len(b) >= len(whole) || b[len(b)-1] == '\n' {
						t.Fatalf("records.jsonl is %d bytes of %d, ending %q: want a torn last line", len(b), len(whole), b[max(0, len(b)-1):])
					}
					lines := bytes.Count(b, []byte("\n"))
					r, err := bhasha.Open(context.Background(), out, bhasha.NoScoredStore())
					if err != nil {
						t.Fatalf("Open: %v", err)
					}
					if _, err := r.Scored(); err != nil {
						t.Fatalf("scoring the torn run: %v", err)
					}
					notes := strings.Join(r.Notes(), "\n")
					for _, w := range []string{"the run is partial", fmt.Sprintf("line %d is an incomplete record", lines+1), "not read"} {
						if !strings.Contains(notes, w) {
							t.Errorf("the notes do not say %q: %s", w, notes)
						}
					}
					if _, err := r.Table("accuracy"); err != nil && !strings.Contains(err.Error(), "no table") {
						t.Errorf("a table of the torn run: %v", err)
					}
					var so, se bytes.Buffer
					if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", cache, "--endpoint", url}, &so, &se); err != nil {
						t.Fatalf("resume: %v\n%s", err, se.String())
					}
					if !strings.Contains(se.String(), "dropped 1 incomplete record") {
						t.Errorf("the resume does not say it cut the torn line: %s", se.String())
					}
					sameAnswers(t, answersOf(t, out), want)
					if m, err := run.ReadManifest(out); err != nil || m.Status != "complete" {
						t.Errorf("after the resume: %v %+v", err, m)
					}
				})
			}
		})
	}
}

// A damaged sealed segment does not lose the run: Open scores every
// record that can be read and names the damaged file; a run into the
// directory keeps the damaged file in the archive, asks again only the
// records lost from the segment, and ends with the answers of the
// uninterrupted run, one record per key.
func TestDamagedSegmentRunAsksOnlyTheLost(t *testing.T) {
	ref := smokeRun(t, "smoke-mdi.yaml")
	want := answersOf(t, ref)
	cfg := filepath.Join("../../testdata/experiments", "smoke-mdi.yaml")
	cache := filepath.Join(ref, "cache")
	url := simtest.Start(t, sim.Config{})
	for _, c := range []struct {
		name   string
		damage func(b []byte, md *format.FileMetaData)
		note   string
	}{
		{"a bad sector in the responses", clearResponses, "record(s) are lost: line 1 (key "},
		{"its footer", func(b []byte, _ *format.FileMetaData) { b[len(b)-1] ^= 0x5a }, "an unknown number of records are lost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := copyRun(t, ref)
			seg, _ := damageSegment(t, out, c.damage)
			kept := 0
			if err := records.Read(out, func(*engine.Record) error { kept++; return nil }); err != nil {
				t.Fatalf("reading the damaged run: %v", err)
			}
			if kept >= len(want) {
				t.Fatalf("%d of %d records read: the flip did not damage the segment", kept, len(want))
			}
			r, err := bhasha.Open(context.Background(), out, bhasha.NoScoredStore())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Scored(); err != nil {
				t.Fatalf("scoring the damaged run: %v", err)
			}
			if notes := strings.Join(r.Notes(), "\n"); !strings.Contains(notes, filepath.Base(seg)+" is damaged") || !strings.Contains(notes, c.note) {
				t.Errorf("notes: %s", notes)
			}
			var so, se bytes.Buffer
			if err := dispatch(context.Background(), []string{"run", "--config", cfg, "--out", out, "--cache-dir", cache, "--endpoint", url}, &so, &se); err != nil {
				t.Fatalf("run: %v\n%s", err, se.String())
			}
			m, err := run.ReadManifest(out)
			if err != nil {
				t.Fatal(err)
			}
			if m.Counts.Resumed != kept || m.Counts.CachedThisRun+m.Counts.SentThisRun != len(want)-kept {
				t.Errorf("the run kept %d and asked %d+%d; want %d kept, %d asked", m.Counts.Resumed, m.Counts.CachedThisRun, m.Counts.SentThisRun, kept, len(want)-kept)
			}
			if archived, _ := filepath.Glob(filepath.Join(out, records.ArchiveDir, "damaged-*"+filepath.Base(seg))); len(archived) != 1 {
				t.Errorf("the damaged segment is not kept: %v\n%s", archived, se.String())
			}
			sameAnswers(t, answersOf(t, out), want)
		})
	}
}

// damageSegment seals the first half of out's records into a segment,
// leaves the rest live, and damages the segment with damage (given its
// bytes and their Parquet metadata); it returns the segment's path and
// how many records it holds.
func damageSegment(t *testing.T, out string, damage func(b []byte, md *format.FileMetaData)) (string, int) {
	t.Helper()
	live := filepath.Join(out, records.FileName)
	all, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(all, []byte("\n"))
	half := len(lines) / 2
	os.WriteFile(live, bytes.Join(lines[:half], nil), 0o644)
	seg := filepath.Join(out, sealNow(t, out))
	os.WriteFile(live, bytes.Join(lines[half:], nil), 0o644)
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	damage(b, pf.Metadata())
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return seg, half
}

// clearResponses zeroes the response column of the first row group (a
// bad sector).
func clearResponses(b []byte, md *format.FileMetaData) {
	for _, c := range md.RowGroups[0].Columns {
		if c.MetaData.PathInSchema[0] == "response" {
			clear(b[c.MetaData.DataPageOffset : c.MetaData.DataPageOffset+c.MetaData.TotalCompressedSize])
		}
	}
}

// A report of a run whose sealed segment is damaged sends nothing and
// changes no record file: the damaged segment stays as it is (nothing is
// archived), the tables score every answer that can still be read (the
// live file's), and the note names the damage and the lost records.
func TestReportOfDamagedRunLeavesItsRecords(t *testing.T) {
	ref := smokeRun(t, "smoke-mdi.yaml")
	want := answersOf(t, ref)
	out := copyRun(t, ref)
	seg, half := damageSegment(t, out, clearResponses)
	live := filepath.Join(out, records.FileName)
	var err error
	before := map[string][]byte{}
	for _, p := range []string{seg, live} {
		if before[p], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	var so, se bytes.Buffer
	if err := dispatch(context.Background(), []string{"report", "--run", out, "--html", filepath.Join(t.TempDir(), "r.html")}, &so, &se); err != nil {
		t.Fatalf("report: %v\n%s", err, se.String())
	}
	for p, was := range before {
		if now, err := os.ReadFile(p); err != nil || !bytes.Equal(now, was) {
			t.Errorf("the report changed %s (%v)", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, records.ArchiveDir)); !os.IsNotExist(err) {
		t.Errorf("the report archived something: %v", err)
	}
	if !strings.Contains(se.String(), filepath.Base(seg)+" is damaged") {
		t.Errorf("no note names the damaged segment:\n%s", se.String())
	}
	csv, err := os.ReadFile(filepath.Join(out, "tables", "answers.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if rows := bytes.Count(csv, []byte("\n")) - 1; rows != len(want)-half {
		t.Errorf("answers.csv has %d answers, want the live file's %d", rows, len(want)-half)
	}
	if !strings.Contains(se.String(), fmt.Sprintf("%d record(s) are lost: line 1 (key ", half)) {
		t.Errorf("the note does not name the lost records:\n%s", se.String())
	}
}
