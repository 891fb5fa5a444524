package indicklar

import (
	"strconv"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
)

// TestStagesFindTheirAnswer joins first stages to answers by key: never
// the wrong stage, and a later stage of a key replaces an earlier one.
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
	want := []struct {
		k  engine.Key
		ms float64 // 0: none
	}{{a, 3}, {b, 2}, {c, 4}, {key("3", "hin"), 0}, {stage(a, 0).Fields, 0}}
	s := firstStages(kept)
	for _, w := range want {
		var got *experiment.Kept
		if j, ok := s[w.k]; ok {
			got = &kept[j]
		}
		switch {
		case w.ms == 0 && got != nil:
			t.Errorf("%v: found stage %v, want none", w.k, got.Fields)
		case w.ms != 0 && (got == nil || got.LatencyMS != w.ms):
			t.Errorf("%v: got %+v, want the stage of latency %v", w.k, got, w.ms)
		}
	}
	if _, ok := firstStages(nil)[a]; ok {
		t.Error("no stages kept, one found")
	}
}

// TestStagesJoin adds each answer's first stage to it: only answers whose stage was kept, whatever
// their strategy's place among the rows, and never a one-step answer that
// shares a stage's other fields.
func TestStagesJoin(t *testing.T) {
	const n = 5 << 14 // several runs of rows
	cases := []struct {
		name  string
		strat func(i int) string
	}{
		{"two strategies in runs", func(i int) string {
			if i < n/3 {
				return "baseline"
			}
			return "2step-en"
		}},
		{"alternating", func(i int) string {
			if i%2 == 0 {
				return "baseline"
			}
			return "2step-en"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := make([]score.Row, n)
			var kept []experiment.Kept
			for i := range rows {
				rows[i].Key = engine.Key{Experiment: "e", Model: "m", Item: strconv.Itoa(i), Language: "hin", Form: "native", Strategy: c.strat(i)}
				rows[i].LatencyMS = 1
				if i%7 != 0 { // every seventh answer's stage is missing
					k := rows[i].Key
					k.Strategy, k.Role = "2step-en", engine.Translation()
					kept = append(kept, experiment.Kept{Fields: k, LatencyMS: 10, OK: true, Cached: i%5 == 0})
				}
			}
			joinStages(rows, kept)
			for i, r := range rows {
				joined := c.strat(i) == "2step-en" && i%7 != 0
				want, cached := 1.0, false
				if joined {
					want, cached = 11, i%5 == 0
				}
				if r.LatencyMS != want || r.Cached != cached {
					t.Fatalf("row %d (%s): latency %v cached %v, want %v %v", i, r.Key.Strategy, r.LatencyMS, r.Cached, want, cached)
				}
			}
		})
	}
}
