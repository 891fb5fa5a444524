package indicklar

import (
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// TestStagesFindTheirAnswer joins first stages to answers by key under
// the real hash and under hashes that make keys collide: a collision
// never joins the wrong stage, and a later stage of a key replaces an
// earlier one.
func TestStagesFindTheirAnswer(t *testing.T) {
	key := func(item, lang string) engine.Key {
		return engine.Key{Experiment: "e", Model: "m", Item: item, Language: lang, Form: "native", Strategy: "2step-en"}
	}
	stage := func(k engine.Key, ms float64) experiment.Kept {
		k.Role = engine.Translation()
		return experiment.Kept{Fields: k, LatencyMS: ms, OK: true}
	}
	a, b, c := key("1", "hin"), key("2", "hin"), key("1", "ben")
	kept := []experiment.Kept{stage(a, 1), stage(b, 2), stage(a, 3), stage(c, 4)}
	hashes := []struct {
		name string
		hash func(engine.Key) uint64
	}{
		{"maphash", nil},
		{"every key collides", func(engine.Key) uint64 { return 7 }},
		{"a and b collide", func(k engine.Key) uint64 { return uint64(len(k.Language)) }},
	}
	want := []struct {
		k  engine.Key
		ms float64 // 0: none
	}{{a, 3}, {b, 2}, {c, 4}, {key("3", "hin"), 0}, {stage(a, 0).Fields, 0}}
	for _, h := range hashes {
		t.Run(h.name, func(t *testing.T) {
			s := newStages(kept)
			if h.hash != nil {
				s = newStagesHashed(kept, h.hash)
			}
			for _, w := range want {
				got := s.of(w.k)
				switch {
				case w.ms == 0 && got != nil:
					t.Errorf("%v: found stage %v, want none", w.k, got.Fields)
				case w.ms != 0 && (got == nil || got.LatencyMS != w.ms):
					t.Errorf("%v: got %+v, want the stage of latency %v", w.k, got, w.ms)
				}
			}
		})
	}
	if newStages(nil).of(a) != nil {
		t.Error("no stages kept, one found")
	}
}
