// Package benchdata builds the scored rows the benchmarks measure: the
// IndicKLAR study at the papers' scale, deterministic, without a run, and
// the process's CPU time they report beside their wall time (CPUTime).
package benchdata

import (
	"strconv"
	"strings"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// KLARRows is IndicKLAR at scale: items × forms (18 native languages,
// 11 code-mixed, English and one more native, in that order, the first
// forms of them) × strategies (the nine, the first of them) × models
// scored rows. A hash of the indexes decides correctness (model m and
// strategy s raise the rate by 5m and 3s points over 30 %); strings are
// shared. KLARRows(2619, 30, 9, 9) is the 6,364,170 rows of the papers'
// full grid.
func KLARRows(items, forms, strategies, models int) []score.Row {
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
