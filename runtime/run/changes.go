package run

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bhashalab/bhasha/internal/shortlist"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/progress"
	"github.com/bhashalab/bhasha/runtime/records"
)

// stagePlan is what one stage of an experiment asks, compared with what
// the run directory already holds.
type stagePlan struct {
	pending   int             // requests without a record, to be sent
	held      int             // requests without a record that Options.Send holds back
	withheld  int             // requests whose first stage has no answer
	recorded  int             // requests with a record
	changed   *records.KeySet // recorded keys whose request is now different
	decodings map[string][]engine.Decoding
}

// planStage counts a stage's pending requests and collects recorded ones now
// built differently; every planEvery it checks ctx and calls note (if set).
func planStage(ctx context.Context, j *Job, stage int, lookup Lookup, done *records.KeySet, served map[string]string, send func(engine.Role) bool, note func(walked int)) (stagePlan, error) {
	p := stagePlan{changed: records.NewKeySet(), decodings: map[string][]engine.Decoding{}}
	walked := 0
	for r, err := range j.Requests(stage, lookup, func(engine.Key) { p.withheld++ }) {
		if err != nil {
			return p, err
		}
		if walked++; walked%planEvery == 0 {
			if err := ctx.Err(); err != nil {
				return p, err
			}
			if note != nil {
				note(walked)
			}
		}
		group := DecodingGroup(r.Key)
		if i := slices.IndexFunc(p.decodings[group], r.Decoding.Equal); i < 0 {
			p.decodings[group] = append(p.decodings[group], r.Decoding)
		} else {
			// Keep the latest of equal decodings: the requests that follow
			// most often share its maps, which Equal compares at once.
			p.decodings[group][i] = r.Decoding
		}
		key := r.Key.String()
		if !done.Has(key) {
			if send != nil && !send(r.Key.Role) {
				p.held++
			} else {
				p.pending++
			}
			continue
		}
		p.recorded++
		done.Visit(key)
		body, err := r.Body(served[r.Key.Model])
		if err != nil {
			return p, err
		}
		if done.Changed(key, engine.RequestDigest(body)) {
			p.changed.Add(key)
		}
	}
	return p, nil
}

// planEvery is how many requests planStage walks between two looks at
// its context and its progress.
const planEvery = 1 << 16

// planProgress is planStage's note: a line on logf every
// progress.DefaultEvery once planning has taken that long.
func planProgress(logf func(string, ...any), name string, stage, stages int) func(int) {
	start := time.Now()
	last := start
	return func(walked int) {
		if now := time.Now(); now.Sub(last) >= progress.DefaultEvery {
			last = now
			logf("%s: planning stage %d of %d: %d requests built, %.0f s", name, stage, stages, walked, now.Sub(start).Seconds())
		}
	}
}

// DecodingGroup names the manifest entry of a request's decoding
// (Manifest.Decodings): its strategy (or condition) and role ("2step-en
// translation", "qa judge"; the role alone when the key has neither:
// "answer", "judge").
func DecodingGroup(k engine.Key) string {
	g := cmp.Or(k.Strategy, k.Condition)
	switch {
	case g == "":
		g = k.Role.Name()
	case k.Role.Kind != engine.RoleAnswer:
		g += " " + k.Role.Name()
	}
	return g
}

// describeChanges says, most frequent first, how the requests of keys
// changed ("decoding.max_tokens 4 → 64 (12)"), reading old bodies via scratch.
func describeChanges(dir string, keys *records.KeySet, j *Job, stage int, lookup Lookup, served map[string]string) string {
	old, err := fillScratch(dir, "reading the old request bodies", func(r *engine.Record) (string, string, bool) {
		if len(r.Request) == 0 || !keys.Has(r.Key) {
			return "", "", false
		}
		return r.Key, string(r.Request), true
	})
	if err != nil {
		return fmt.Sprintf("the request bodies (the old records could not be read: %v)", err)
	}
	defer old.Close()
	counts := map[string]int{}
	for r, err := range j.Requests(stage, lookup, nil) {
		if err != nil {
			break
		}
		key := r.Key.String()
		if !keys.Has(key) {
			continue
		}
		body, err := r.Body(served[r.Key.Model])
		if err != nil {
			continue
		}
		was, _ := old.get(key)
		diffs := diffBodies([]byte(was), body)
		if len(diffs) == 0 {
			diffs = []string{"request body (the old records do not store it)"}
		}
		for _, d := range diffs {
			counts[d]++
		}
	}
	if err := old.Err(); err != nil {
		return fmt.Sprintf("the request bodies (the old records could not be read: %v)", err)
	}
	names := slices.Sorted(maps.Keys(counts))
	slices.SortStableFunc(names, func(a, b string) int { return counts[b] - counts[a] }) // most frequent first
	return shortlist.Join(names, 5, "; ", "and %d other difference(s)", func(d string) string { return fmt.Sprintf("%s (%d)", d, counts[d]) })
}

// diffBodies lists the top-level fields in which two request bodies differ
// (the prompt without its values).
func diffBodies(oldBody, newBody []byte) []string {
	if len(oldBody) == 0 {
		return nil
	}
	var a, b map[string]json.RawMessage
	if json.Unmarshal(oldBody, &a) != nil || json.Unmarshal(newBody, &b) != nil {
		return nil
	}
	var out []string
	for _, k := range unionKeys(a, b) {
		x, y := a[k], b[k]
		if bytes.Equal(x, y) {
			continue
		}
		switch {
		case k == "messages" || k == "prompt":
			out = append(out, "prompt text")
		case k == "model":
			out = append(out, fmt.Sprintf("served model %s → %s", short(x), short(y)))
		default:
			out = append(out, fmt.Sprintf("decoding.%s %s → %s", k, short(x), short(y)))
		}
	}
	return out
}

// unionKeys lists the keys of a and b, sorted, each once.
func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}

// short shows a JSON value in at most 40 characters ("unset" when absent).
func short(v json.RawMessage) string {
	if len(v) == 0 {
		return "unset"
	}
	s := string(v)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}
