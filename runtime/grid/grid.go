// Package grid opens a grid directory, the shard run directories that
// `bhasha run --shard K/N` writes (package shard), as one run: it merges
// the shards' records and manifests into a normal run directory, so that
// everything that reads a run reads the grid as it would a run of the
// whole experiment.
package grid

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/internal/atomicfile"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"github.com/bhashalab/bhasha/runtime/run"
	"github.com/bhashalab/bhasha/runtime/shard"
)

// MergedDir is the merged run's directory inside a grid directory, and
// FingerprintFile the file in it naming the state of the shards it was
// merged from.
const (
	MergedDir       = "merged"
	FingerprintFile = "grid-fingerprint"
)

// IsGrid reports whether dir is a grid directory: it holds shard run
// directories (shard-KKK-of-NNN) and no manifest of its own.
func IsGrid(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, run.ManifestFile)); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	ds, _ := shard.Dirs(dir)
	return len(ds) > 0
}

// Of returns the grid directory whose merged run dir is (Open), or "" when
// dir is not one.
func Of(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, FingerprintFile)); err != nil || filepath.Base(filepath.Clean(dir)) != MergedDir {
		return ""
	}
	return filepath.Dir(filepath.Clean(dir))
}

// Open returns the run directory holding the grid's merged run,
// GRID/merged, after merging the shards into it (Merge) unless it was
// merged from the shards as they are now (their records' fingerprints,
// records.Fingerprint, and their manifests and experiment copies). A
// rebuilt merged run replaces the earlier one whole; tables and caches
// written under it are made again. A grid that cannot be written and has
// no up-to-date merged run is refused, naming `bhasha merge`, and nothing
// is written. Its cost is reading every shard's records when it merges,
// and the records files' tails otherwise.
func Open(ctx context.Context, grid string) (string, error) {
	fp, err := Fingerprint(grid)
	if err != nil {
		return "", err
	}
	merged := filepath.Join(grid, MergedDir)
	if b, err := os.ReadFile(filepath.Join(merged, FingerprintFile)); err == nil && strings.TrimSpace(string(b)) == fp {
		if _, err := os.Stat(filepath.Join(merged, run.ManifestFile)); err == nil {
			return merged, nil
		}
	}
	tmp, err := os.MkdirTemp(grid, ".merged-*")
	if err != nil {
		if records.IsReadOnly(err) {
			return "", fmt.Errorf("grid %s cannot be written, and its merged run %s is missing or older than its shards: merge it elsewhere (bhasha merge --grid %s --out DIR) and open DIR: %w", grid, merged, grid, err)
		}
		return "", fmt.Errorf("merging grid %s: %w", grid, err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	if err := build(ctx, grid, tmp); err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(filepath.Join(tmp, FingerprintFile), []byte(fp+"\n")); err != nil {
		return "", fmt.Errorf("merging grid %s: %w", grid, err)
	}
	old := ""
	if _, err := os.Lstat(merged); err == nil {
		old = tmp + "-old"
		if err := os.Rename(merged, old); err != nil {
			return "", fmt.Errorf("merging grid %s: replacing %s: %w", grid, merged, err)
		}
	}
	if err := os.Rename(tmp, merged); err != nil {
		if old != "" {
			os.Rename(old, merged)
		}
		return "", fmt.Errorf("merging grid %s: %w", grid, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return merged, nil
}

// Merge writes the grid's merged run into out, a directory that must not
// exist or be empty: the shards' records, checked and concatenated into
// Parquet segments (records.Seal), their merged manifest and the
// experiment's copy. It refuses, and leaves out as it was, when out holds
// anything or when the shards disagree (see build).
func Merge(ctx context.Context, grid, out string) error {
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		return fmt.Errorf("merging grid %s: %s exists and is not empty: name a new directory with --out", grid, out)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	tmp, err := os.MkdirTemp(parent, ".merge-*")
	if err != nil {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	defer os.RemoveAll(tmp) // gone once renamed
	if err := build(ctx, grid, tmp); err != nil {
		return err
	}
	// rename(2) replaces an empty directory.
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	return nil
}

// Fingerprint identifies the grid's shards as they are now: each shard
// directory's name, its records' fingerprint (records.Fingerprint) and the
// SHA-256 of its manifest and experiment copy. The result is
// "sha256:<64 hex digits>".
func Fingerprint(grid string) (string, error) {
	ds, err := shard.Dirs(grid)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, d := range ds {
		sd := filepath.Join(grid, d)
		rf, err := records.Fingerprint(sd)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%s", d, rf)
		for _, name := range []string{run.ManifestFile, run.ExperimentFile} {
			b, err := os.ReadFile(filepath.Join(sd, name))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("fingerprinting grid %s: %w", grid, err)
			}
			fmt.Fprintf(h, "\x00%x", sha256.Sum256(b))
		}
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// member is one shard run directory of a grid.
type member struct {
	name string
	dir  string
	m    *run.Manifest
}

// build merges the grid's shards into the empty dir, refusing shards of
// several counts, experiments or identities of a model, edited records, or
// one key in two shards; missing or unfinished shards are warned of.
func build(ctx context.Context, grid, dir string) error {
	ds, err := shard.Dirs(grid)
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return fmt.Errorf("merging grid %s: it holds no shard run directories (shard-KKK-of-NNN)", grid)
	}
	first, _ := shard.ParseDir(ds[0]) // shard.Dirs lists only shard directories
	n := first.N
	var shards []member
	for _, d := range ds {
		if sp, _ := shard.ParseDir(d); sp.N != n {
			return fmt.Errorf("merging grid %s: it holds shards of %d (%s) and of %d (%s): a grid holds one division of one experiment", grid, n, ds[0], sp.N, d)
		}
		sd := filepath.Join(grid, d)
		m, err := run.ReadManifest(sd)
		if err != nil {
			return fmt.Errorf("merging grid %s: shard %s: %w", grid, d, err)
		}
		shards = append(shards, member{name: d, dir: sd, m: m})
		if f := shards[0]; m.ExperimentHash != f.m.ExperimentHash || m.Experiment != f.m.Experiment {
			return fmt.Errorf("merging grid %s: shard %s ran experiment %q (experiment_sha256 %s) and shard %s ran %q (%s): a grid holds the shards of one experiment",
				grid, f.name, f.m.Experiment, f.m.ExperimentHash, d, m.Experiment, m.ExperimentHash)
		}
	}
	mm, err := mergeManifests(grid, n, shards)
	if err != nil {
		return err
	}
	if err := mergeRecords(ctx, grid, dir, shards, mm); err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(shards[0].dir, run.ExperimentFile)); err == nil {
		if err := atomicfile.WriteFile(filepath.Join(dir, run.ExperimentFile), b); err != nil {
			return fmt.Errorf("merging grid %s: %w", grid, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	if err := run.WriteManifest(dir, mm); err != nil {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	return nil
}

// mergeRecords checks each shard's records and writes them, shard after
// shard, into dir's records, sealed into Parquet segments.
func mergeRecords(ctx context.Context, grid, dir string, shards []member, mm *run.Manifest) error {
	lk, err := records.LockDir(dir, records.Exclusive)
	if err != nil {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	defer lk.Unlock()
	w, err := records.CreateWith(dir, records.Options{Lock: lk, CloseSealBytes: -1})
	if err != nil {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	owner := map[string]int{} // request key → the shard holding it
	for i, s := range shards {
		if err := ctx.Err(); err != nil {
			w.Close()
			return err
		}
		scan, err := records.ScanDir(s.dir, s.m.Experiment)
		if err == nil {
			err = scan.EditedError()
		}
		if err != nil {
			w.Close()
			return fmt.Errorf("merging grid %s: shard %s: %w", grid, s.name, err)
		}
		line := 0
		err = records.Read(s.dir, func(r *engine.Record) error {
			line++
			if o, ok := owner[r.Key]; ok && o != i {
				return fmt.Errorf("shards %s and %s (record %d) both hold request %s: each request belongs to one shard, so these are not shards of one layout", shards[o].name, s.name, line, r.Key)
			}
			owner[r.Key] = i
			return w.Write(r)
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			w.Close()
			return fmt.Errorf("merging grid %s: shard %s: %w", grid, s.name, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	mm.Counts.Records = w.Written().Records
	if _, err := records.Seal(lk, dir, 0, nil); err != nil {
		return fmt.Errorf("merging grid %s: %w", grid, err)
	}
	return nil
}

// mergeManifests is the n shards' manifest: counts summed, models and
// decodings joined, missing or unfinished shards warned of.
func mergeManifests(grid string, n int, shards []member) (*run.Manifest, error) {
	f := shards[0].m
	mm := &run.Manifest{
		Tool: f.Tool, Experiment: f.Experiment, ExperimentFile: f.ExperimentFile, ExperimentHash: f.ExperimentHash,
		CopyHash: f.CopyHash, Inputs: f.Inputs, Decoding: f.Decoding, Templates: f.Templates, Dataset: f.Dataset,
		Cache: f.Cache, ReadCache: f.ReadCache, Started: f.Started, Ended: f.Ended, RecordsSealed: true, Status: "complete",
		Decodings: map[string][]engine.Decoding{},
	}
	var unfinished []string
	for _, s := range shards {
		m := s.m
		for _, mi := range m.Models {
			j := slices.IndexFunc(mm.Models, func(o engine.ModelInfo) bool { return o.Name == mi.Name })
			if j < 0 {
				mm.Models = append(mm.Models, mi)
			} else if o := mm.Models[j]; o.Identity != mi.Identity {
				return nil, fmt.Errorf("merging grid %s: model %s was answered by %s in one shard and by %s in shard %s: a grid's answers come from one identity of each model (run the shard again against the same server)",
					grid, mi.Name, o.Identity, mi.Identity, s.name)
			}
		}
		for k, ds := range m.Decodings {
			for _, d := range ds {
				if !slices.ContainsFunc(mm.Decodings[k], d.Equal) {
					mm.Decodings[k] = append(mm.Decodings[k], d)
				}
			}
		}
		mm.Simulated = mm.Simulated || m.Simulated
		mm.RecordsSealed = mm.RecordsSealed && m.RecordsSealed
		if m.Started.Before(mm.Started) {
			mm.Started = m.Started
		}
		if m.Ended == nil || mm.Ended == nil {
			mm.Ended = nil
		} else if m.Ended.After(*mm.Ended) {
			mm.Ended = m.Ended
		}
		c := &mm.Counts
		c.OK += m.Counts.OK
		c.Failed += m.Counts.Failed
		c.Resumed += m.Counts.Resumed
		c.CachedThisRun += m.Counts.CachedThisRun
		c.DuplicatesThisRun += m.Counts.DuplicatesThisRun
		c.SentThisRun += m.Counts.SentThisRun
		mm.Requests += m.Requests
		mm.Pending += m.Pending
		mm.Blocked += m.Blocked
		for _, a := range m.Archived {
			mm.Archived = append(mm.Archived, filepath.Join(s.name, a))
		}
		for _, x := range m.InputChanges {
			if !slices.Contains(mm.InputChanges, x) {
				mm.InputChanges = append(mm.InputChanges, x)
			}
		}
		for _, x := range m.Repairs {
			mm.Repairs = append(mm.Repairs, s.name+": "+x)
		}
		for _, x := range m.Warnings {
			mm.Warnings = append(mm.Warnings, s.name+": "+x)
		}
		if m.Error != "" {
			mm.Error = strings.TrimPrefix(mm.Error+"; "+s.name+": "+m.Error, "; ")
		}
		if m.Status != "complete" {
			unfinished = append(unfinished, s.name+" ("+m.Status+")")
			if m.Status != "incomplete" {
				mm.Status = "partial"
			} else if mm.Status == "complete" {
				mm.Status = "incomplete"
			}
		}
	}
	var missing []string
	for k := range n {
		if d := (shard.Spec{K: k, N: n}).Dir(); !slices.ContainsFunc(shards, func(s member) bool { return s.name == d }) {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		mm.Status = "partial"
		mm.Warnings = append(mm.Warnings, fmt.Sprintf("grid %s: %d of its %d shards have not run (%s): their requests are neither answered nor counted; run each (bhasha run --shard K/%d --out %s)",
			grid, len(missing), n, strings.Join(missing, ", "), n, grid))
	}
	if len(unfinished) > 0 {
		mm.Warnings = append(mm.Warnings, fmt.Sprintf("grid %s: shards not finished: %s; run each again to resume it (bhasha run --shard K/%d --out %s)",
			grid, strings.Join(unfinished, ", "), n, grid))
	}
	return mm, nil
}
