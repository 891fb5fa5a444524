package records

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/bhashalab/bhasha/runtime/engine"
)

// ReadUnique, the tests' reference model of Unique, reads every record
// of dir line by line and keeps one per key: the first ok
// record of the key, or its first record when none is ok. Records whose
// seal is broken or missing (see Scan and runSealed), records of an experiment other
// than experiment (when it is not ""), and every record of a key whose ok
// records disagree are not returned; Findings names them with their lines.
// The request bodies are kept only when withRequests (they are most of a
// record's size, and scoring does not read them). It never writes.
func ReadUnique(dir, experiment string, withRequests bool) ([]*engine.Record, Findings, error) {
	var out []*engine.Record
	var d Findings
	at := map[string]int{}
	conflict := map[string]int{} // key -> index in d.Conflicts
	lineOf := map[string]int{}
	whereOf := map[string]string{}
	sealed := 0
	n := 0 // logical line
	sealedRun, err := runSealed(dir)
	if err != nil {
		return nil, d, err
	}
	found := false
	err = walk(dir, func(f recordFile, r io.Reader, s *pqSegment) error {
		found = true
		if s != nil { // a segment is read as its lines
			s.close()
			rc, err := f.open()
			if err != nil {
				return err
			}
			defer rc.Close()
			r = rc
		}
		if f.damage != nil {
			d.Damaged = append(d.Damaged, *f.damage)
		}
		torn, err := eachLine(f, r, func(raw []byte, local int) error {
			n++
			where := lineAt(&f, local)
			var rec engine.Record
			if err := json.Unmarshal(raw, &rec); err != nil {
				return fmt.Errorf("%s line %d: %w", f.path, local, err)
			}
			st := checkSeal(raw)
			if why := editedWhy(st, sealedRun, sealed+len(d.Edited)); why != "" {
				d.Edited = append(d.Edited, Flag{Line: n, At: where, Key: rec.Key, Why: why})
				return nil
			}
			if st == sealOK {
				sealed++
			}
			if experiment != "" && keyField(rec.Key, 0) != experiment {
				d.Foreign = append(d.Foreign, Flag{Line: n, At: where, Key: rec.Key, Why: fmt.Sprintf("a record of experiment %q, not %q", keyField(rec.Key, 0), experiment)})
				return nil
			}
			if !withRequests {
				rec.Request = nil
			}
			rp := &rec
			i, seen := at[rec.Key]
			if !seen {
				at[rec.Key] = len(out)
				lineOf[rec.Key] = n
				whereOf[rec.Key] = where
				out = append(out, rp)
				return nil
			}
			first := out[i]
			switch {
			case first.Status == engine.StatusOK && rec.Status == engine.StatusOK && first.Response != rec.Response:
				ci, ok := conflict[rec.Key]
				if !ok {
					ci = len(d.Conflicts)
					conflict[rec.Key] = ci
					d.Conflicts = append(d.Conflicts, Conflict{Key: rec.Key, Lines: []int{lineOf[rec.Key]}, At: []string{whereOf[rec.Key]}, Responses: []string{first.Response}})
				}
				d.Conflicts[ci].Lines = append(d.Conflicts[ci].Lines, n)
				d.Conflicts[ci].At = append(d.Conflicts[ci].At, where)
				d.Conflicts[ci].Responses = append(d.Conflicts[ci].Responses, rec.Response)
				return nil
			case first.Status != engine.StatusOK && rec.Status == engine.StatusOK:
				out[i] = rp
				lineOf[rec.Key] = n
				whereOf[rec.Key] = where
			}
			d.Records++
			if len(d.Keys) < 5 && !slices.Contains(d.Keys, rec.Key) {
				d.Keys = append(d.Keys, rec.Key)
			}
			return nil
		})
		if torn != nil {
			d.Torn = torn
		}
		return err
	})
	if err == nil && !found {
		err = noRecords(dir)
	}
	if err != nil {
		return nil, d, err
	}
	drop := map[string]bool{}
	for _, c := range d.Conflicts {
		drop[c.Key] = true
	}
	if len(drop) > 0 {
		out = slices.DeleteFunc(out, func(r *engine.Record) bool { return drop[r.Key] })
	}
	return out, d, nil
}
