package tables

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// synthRows builds the scale: 2,619 items × 30 language forms ×
// 9 strategies × 9 models = 6,364,170 scored rows, deterministic (a
// hash decides correctness), strings shared.
func synthRows(items, forms, strategies, models int) []score.Row {
	langs := strings.Fields("asm ben doi guj hin kan gom mai mal mar nep ory pan san snd tam tel urd")
	var units [][2]string
	for _, l := range langs {
		units = append(units, [2]string{l, "native"})
	}
	for _, l := range langs[:11] {
		units = append(units, [2]string{l, "code-mixed"})
	}
	units = append(units, [2]string{"eng", "english"}, [2]string{"brx", "native"})
	units = units[:forms]
	strat := []string{"baseline-cands", "baseline", "tint-cm", "tint-en", "1step-cm", "1step-en", "2step-cm", "2step-en", "2step-translit"}[:strategies]
	ids := make([]string, items)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	rels := []string{"capital", "continent", "occupation", "religion"}
	rows := make([]score.Row, 0, items*forms*strategies*models)
	for m := range models {
		model := "model-" + strconv.Itoa(m)
		for s, st := range strat {
			for u, un := range units {
				for i, id := range ids {
					h := uint32(i*2654435761) ^ uint32(u*40503) ^ uint32(s*9973) ^ uint32(m*7919)
					h ^= h >> 13
					h *= 0x5bd1e995
					h ^= h >> 15
					rows = append(rows, score.Row{
						Key:     engine.Key{Experiment: "bench", Model: model, Item: id, Language: un[0], Form: un[1], Strategy: st},
						Domain:  rels[i%4],
						Correct: h%100 < uint32(30+5*m+3*s), PromptTokens: 40 + u, LatencyMS: float64(50 + s*10),
					})
				}
			}
		}
	}
	return rows
}

// BenchmarkAnalyses6M: every IndicKLAR table (accuracy with its three
// metrics, then tables.KLAR) over 6,364,170 scored rows;
// reports seconds and the process's peak resident memory (VmHWM).
func BenchmarkAnalyses6M(b *testing.B) {
	rows := synthRows(2619, 30, 9, 9)
	b.ResetTimer()
	for range b.N {
		ms := []Metric{Correct(), {Name: "translit", Of: func(r score.Row) bool { return r.Translit }}, {Name: "switched", Of: func(r score.Row) bool { return r.Switched }}}
		ts := append([]*Table{Accuracy("indicklar", ms, rows)}, KLAR(rows, "", func(string) string { return "" })...)
		if len(ts) != 17 || len(ts[0].Rows) == 0 {
			b.Fatalf("%d tables", len(ts))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(rows)), "rows")
	if s, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(s), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				kb, _ := strconv.Atoi(strings.Fields(l)[1])
				b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
			}
		}
	}
}
