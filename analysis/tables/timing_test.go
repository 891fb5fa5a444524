package tables

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// Latency's count, mean, median and p90 per model × strategy are those
// of the group's timed answers (not failed, not cached, a latency above
// zero), the mean summed in ascending order, its accuracy and failures
// over every answer; a group with no timed answer has NaNs. Checked on
// random rows against a direct computation.
func TestLatency(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var rows []score.Row
	for i := range 3000 {
		r := score.Row{Key: engine.Key{Model: fmt.Sprint("m", rng.IntN(3)), Strategy: fmt.Sprint("s", rng.IntN(4)), Item: fmt.Sprint(i)},
			Correct: rng.IntN(2) == 0, Failed: rng.IntN(10) == 0, Cached: rng.IntN(5) == 0, LatencyMS: []float64{0, rng.Float64() * 100, 1e-3 * float64(rng.IntN(7))}[rng.IntN(3)]}
		rows = append(rows, r)
	}
	rows = append(rows, score.Row{Key: engine.Key{Model: "untimed", Strategy: "s0"}, Cached: true, LatencyMS: 5, Correct: true})
	tb := Latency(rows)
	for _, row := range tb.Rows {
		model, strategy := row[0].(string), row[1].(string)
		var lat []float64
		k, n, failed := 0, 0, 0
		for _, r := range rows {
			if r.Key.Model != model || r.Key.Strategy != strategy {
				continue
			}
			n++
			if r.Failed {
				failed++
				continue
			}
			if r.Correct {
				k++
			}
			if !r.Cached && r.LatencyMS > 0 {
				lat = append(lat, r.LatencyMS)
			}
		}
		slices.Sort(lat)
		mean, median, p90 := math.NaN(), stats.QuantileSorted(lat, 0.5), stats.QuantileSorted(lat, 0.9)
		if len(lat) > 0 {
			mean = 0
			for _, v := range lat {
				mean += v
			}
			mean /= float64(len(lat))
		}
		want := []any{model, strategy, len(lat), mean, median, p90, k, n, Frac(k, n), failed}
		for c := range want {
			if FormatCell(row[c]) != FormatCell(want[c]) || fmt.Sprint(row[c]) != fmt.Sprint(want[c]) {
				t.Errorf("%s %s: %s = %v, want %v", model, strategy, tb.Header[c], row[c], want[c])
			}
		}
	}
	if len(tb.Rows) != 13 {
		t.Errorf("%d rows, want 13 (12 groups and the untimed one)", len(tb.Rows))
	}
}
