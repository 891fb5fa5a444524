package run

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bhashalab/bhasha/internal/shortlist"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
	"gopkg.in/yaml.v3"
)

// readDir reads dir's manifest and experiment copy (nil when missing) and
// records, without writing; it refuses unreadable ones and a directory whose
// manifest, copy or every record names another experiment than name.
func readDir(dir, name string, hint Hints) (m *Manifest, copied []byte, scan *records.Scan, err error) {
	m, err = ReadManifest(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, fmt.Errorf("%w (repair or remove it; nothing was sent and no file was changed)", err)
	}
	path := filepath.Join(dir, ExperimentFile)
	var head struct {
		Name string `yaml:"name"`
	}
	copied, err = os.ReadFile(path)
	switch {
	case err == nil:
		if err := yaml.Unmarshal(copied, &head); err != nil {
			return nil, nil, nil, fmt.Errorf("reading %s: %w (nothing was sent and no file was changed)", path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if scan, err = records.ScanDir(dir, name); err != nil {
		return nil, nil, nil, fmt.Errorf("%w (nothing was sent and no file was changed)", err)
	}
	other, where := "", ""
	switch {
	case m != nil && m.Experiment != "" && m.Experiment != name:
		other, where = m.Experiment, ManifestFile
	case head.Name != "" && head.Name != name:
		other, where = head.Name, ExperimentFile
	case len(scan.Foreign) > 0 && scan.Experiments[name].N == 0:
		other, where = scan.Others(name), records.FileName
	}
	if other != "" {
		return nil, nil, nil, fmt.Errorf("%s holds a run of experiment %q (%s), and this is experiment %q: a run directory holds one experiment. Nothing was sent and no file was changed; %s",
			dir, other, where, name, hint.NewOut)
	}
	return m, copied, scan, nil
}

// provenanceFromRecords rebuilds a lost manifest's models and Simulated
// from the records, refusing records that do not name their identity.
func provenanceFromRecords(scan *records.Scan, dir string, hint Hints) (*Manifest, error) {
	m := &Manifest{}
	unknown, first := 0, 0
	for _, model := range slices.Sorted(maps.Keys(scan.Identities)) {
		ids := scan.Identities[model]
		best, bestN := engine.Identity{}, 0
		for id, t := range ids {
			if id == (engine.Identity{}) {
				unknown += t.N
				if first == 0 || t.First < first {
					first = t.First
				}
				continue
			}
			if t.N > bestN {
				best, bestN = id, t.N
			}
		}
		if bestN > 0 {
			m.Models = append(m.Models, engine.ModelInfo{Name: model, ServedName: best.ID, Identity: best})
		}
	}
	if unknown > 0 {
		place := scan.At(first) + " of " + scan.Path // "line 5 of DIR/records.jsonl"
		if !strings.HasPrefix(place, "line ") {
			place = scan.At(first) + " in " + filepath.Dir(scan.Path) // "records-000001.parquet line 5 in DIR"
		}
		return nil, fmt.Errorf("%s is missing, and %d record(s) (the first at %s) do not name the model that answered them (they were written before records did), so whether they were simulated cannot be told. Nothing was sent and no file was changed: restore manifest.json, or %s",
			filepath.Join(dir, ManifestFile), unknown, place, hint.NewOut)
	}
	m.Simulated = scan.Simulated > 0
	var names []string
	for _, mi := range m.Models {
		names = append(names, mi.Name+" = "+mi.Identity.String())
	}
	m.Repairs = append(m.Repairs, fmt.Sprintf("%s was missing: its provenance was rebuilt from the %d records (%s; simulated: %t)",
		filepath.Join(dir, ManifestFile), scan.Report.Kept, strings.Join(names, ", "), m.Simulated))
	return m, nil
}

// identityChanges returns a line per model whose records another identity
// than now's answered, and a pick of those records; nil when none.
func identityChanges(scan *records.Scan, prev *Manifest, now []engine.ModelInfo) (func(key string, id *engine.Identity) bool, []string) {
	before := map[string]engine.Identity{}
	if prev != nil {
		for _, mi := range prev.Models {
			before[mi.Name] = mi.Identity
		}
	}
	current := map[string]engine.Identity{}
	var msgs []string
	for _, mi := range now {
		current[mi.Name] = mi.Identity
		for id, t := range scan.Identities[mi.Name] {
			if id == (engine.Identity{}) {
				id = before[mi.Name]
				if id == (engine.Identity{}) {
					continue // no record or manifest says: nothing to compare
				}
			}
			if id != mi.Identity {
				msgs = append(msgs, fmt.Sprintf("model %q: %d record(s) (the first at %s) were answered by %s, and the server now serves %s",
					mi.Name, t.N, scan.At(t.First), id, mi.Identity))
			}
		}
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	slices.Sort(msgs)
	pick := func(key string, id *engine.Identity) bool {
		k, err := engine.ParseKey(key)
		if err != nil {
			return false
		}
		cur, ok := current[k.Model]
		if !ok {
			return false
		}
		was := before[k.Model]
		if id != nil {
			was = *id
		}
		return was != (engine.Identity{}) && was != cur
	}
	return pick, msgs
}

// identityWarningLead begins identityWarning's manifest warning, which a
// later run that asks the servers again replaces.
const identityWarningLead = "records answered by another model identity than the one now served: "

// identityWarning is the warning of a run that sends nothing while its
// records were answered by the identities msgs (identityChanges) name.
func identityWarning(dir string, msgs []string, hint Hints) string {
	return fmt.Sprintf("%s%s; the records and tables stay those of the identities that answered them (%s to ask them again of the identity now served, their records moved to %s; or %s)",
		identityWarningLead, strings.Join(msgs, "; "), hint.ArchiveChanged, filepath.Join(dir, records.ArchiveDir), hint.NewOut)
}

// archiveWhy says why records are moved aside.
func archiveWhy(lines map[int]string, changed int, identity bool) string {
	counts := map[string]int{}
	for _, why := range lines {
		counts[why]++
	}
	var parts []string
	for _, why := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s: %d", why, counts[why]))
	}
	if changed > 0 {
		parts = append(parts, fmt.Sprintf("asked differently now: %d", changed))
	}
	if identity {
		parts = append(parts, "answered by another model identity")
	}
	return strings.Join(parts, "; ")
}

// lineList shows at most 10 lines of scan's records: the numbers of
// records.jsonl's, "records-000001.parquet line 3" for a segment's.
func lineList(scan *records.Scan, ls []int) string {
	return shortlist.Join(ls, 10, ", ", "and %d more", func(l int) string { return strings.TrimPrefix(scan.At(l), "line ") })
}

// removeEmptyRun removes a run directory that a refused run created: it
// holds nothing but its lock file.
func removeEmptyRun(dir string) {
	es, err := os.ReadDir(dir)
	if err != nil || slices.ContainsFunc(es, func(e os.DirEntry) bool { return e.Name() != records.LockFile }) {
		return
	}
	os.Remove(filepath.Join(dir, records.LockFile))
	os.Remove(dir)
}

// absOf is path made absolute ("" stays "").
func absOf(path string) string {
	if abs, err := filepath.Abs(path); path != "" && err == nil {
		return abs
	}
	return path
}
