package runanswers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/bhashalab/bhasha/analysis/scored"
	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/analysis/tablestore"
)

// tableKey is the key of the tables kept from scored answers of key k:
// k, the experiment and the human labels' file; nil for a nil k.
func (r *Answers) tableKey(k scored.Key) (scored.Key, error) {
	if k == nil {
		return nil, nil
	}
	out := maps.Clone(k)
	out["tables format"] = tablestore.Version
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	b, err := r.exp.Portable()
	if err != nil {
		return nil, err
	}
	out["experiment"] = sum(b)
	if p := r.exp.HumanLabelsPath(); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out["human labels"] = sum(b)
	}
	return out, nil
}

// readKey is the key a kept table must have to be read now (nil: none).
func (r *Answers) readKey() scored.Key {
	if r.cfg.NoStore {
		return nil
	}
	sk := r.storeKey
	if !r.scored.Load() {
		var err error
		if sk, err = r.scoringKey(); err != nil {
			return nil
		}
	}
	k, _ := r.tableKey(sk)
	return k
}

// keptTable is table name as kept in the run directory under readKey (keptUnder).
func (r *Answers) keptTable(name string) (*tables.Table, bool) {
	k := r.readKey()
	if k == nil {
		return nil, false
	}
	return r.keptUnder(name, k)
}

// keptUnder is table name as kept in the run directory under key k; a
// damaged one is passed over with a note, to be built and kept again.
func (r *Answers) keptUnder(name string, k scored.Key) (*tables.Table, bool) {
	t, ok, err := tablestore.Read(r.dir, name, k)
	if err != nil {
		note := fmt.Sprintf("table %s rebuilt: %v; the kept tables are a cache, rebuilt from the scored answers", name, err)
		r.keptMu.Lock()
		defer r.keptMu.Unlock()
		if !slices.Contains(r.keptNotes, note) { // once
			r.keptNotes = append(r.keptNotes, note)
		}
		return nil, false
	}
	if !ok {
		return nil, false
	}
	t.Simulated = r.manifest.Simulated
	return t, true
}

// keep writes the tables built from the store's rows, each once (not
// those made row by row), and reports whether each is kept; a failure
// keeps none after it.
func (r *Answers) keep(ts ...*tables.Table) bool {
	if r.cfg.NoStore || r.storeKey == nil {
		return false
	}
	ts = slices.DeleteFunc(slices.Clone(ts), func(t *tables.Table) bool {
		_, kept := r.keptNames.Load(t.Name)
		return t.Source != nil || kept
	})
	if len(ts) == 0 {
		return true
	}
	k, err := r.tableKey(r.storeKey)
	if err != nil {
		return false
	}
	for _, t := range ts {
		if err := tablestore.Write(r.dir, k, t); err != nil {
			return false
		}
		r.keptNames.Store(t.Name, true)
	}
	return true
}

// keepIndex keeps the names of ts, every table in report order, each
// kept (keep) or made row by row.
func (r *Answers) keepIndex(ts []*tables.Table) {
	k, err := r.tableKey(r.storeKey)
	if err != nil {
		return
	}
	tablestore.WriteIndex(r.dir, k, tableNames(ts)) // a cache: without it the tables are built
}

// tableNames are the names of ts, in order.
func tableNames(ts []*tables.Table) []string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return names
}

// keptAll is every table in report order when the run keeps their list
// under readKey: each kept one read (keptUnder), any other (made row by
// row, or its file damaged) built with its group.
func (r *Answers) keptAll() ([]*tables.Table, bool) {
	k := r.readKey()
	if k == nil {
		return nil, false
	}
	names, ok := tablestore.ReadIndex(r.dir, k)
	if !ok {
		return nil, false
	}
	ts := make([]*tables.Table, len(names))
	for i, name := range names {
		t, ok := r.keptUnder(name, k)
		if !ok {
			if t, ok = r.set.Table(name); !ok {
				return nil, false
			}
			t.Simulated = r.manifest.Simulated
			r.keep(t) // kept again, for the next reader
		}
		ts[i] = t
	}
	return ts, true
}
