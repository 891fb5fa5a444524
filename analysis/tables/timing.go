package tables

import (
	"math"
	"slices"
	"sort"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/analysis/stats"
)

// Latency is the end-to-end time per answer of each strategy, per model
// (every stage's latency summed, so a two-step strategy's includes its
// first stage; answers with a stage served from the cache are not timed):
// count, mean, median and 90th percentile, with the accuracy, the
// accuracy–latency trade-off. It is client-observed latency under the
// run's concurrency and servers, not the paper's offline vLLM batch time.
func Latency(rows []score.Row) *Table {
	t := New("latency", "end-to-end client-observed latency per answer (every stage summed, under the run's concurrency; the paper timed offline vLLM batches): mean, median, p90, with accuracy",
		slices.Concat([]Column{Key("model"), Key("strategy")}, timedColumns(), []Column{Key("k"), Key("n"), Proportion("accuracy", "k / n"), Key("failed")})...)
	type ms struct{ model, strategy string }
	by := countLoad(rows, func(r *score.Row) ms { return ms{r.Key.Model, r.Key.Strategy} })
	for _, x := range SortedKeysBy(by, func(x ms) []string { return []string{x.model, x.strategy} }) {
		a := by[x]
		t.Add(slices.Concat([]any{x.model, x.strategy}, timed(a.lat), []any{a.k, a.n, Frac(a.k, a.n), a.failed})...)
	}
	return t
}

// timedColumns are the columns of timed: n_timed, mean_ms, median_ms, p90_ms.
func timedColumns() []Column {
	const doc = "client-observed latency in milliseconds (mean, median, 90th percentile)"
	return []Column{Count("n_timed", "answers timed (cached answers excluded)"), Millis("mean_ms", doc), Millis("median_ms", doc), Millis("p90_ms", doc)}
}

// timed is the cells of timedColumns for latencies s (all positive): count,
// mean (summed in ascending order), median and 90th percentile, NaN when
// empty; it sorts s.
func timed(s []float64) []any {
	sort.Float64s(s)
	return []any{len(s), stats.Mean(s), stats.QuantileSorted(s, 0.5), stats.QuantileSorted(s, 0.9)}
}

// Requests summarises a run without gold answers per model × strategy ×
// condition: answers, failed requests, empty and cached answers, the
// latency of the answers not served from the cache (count, mean, median,
// 90th percentile) and the mean prompt tokens the server counted.
func Requests(rows []score.Row) *Table {
	t := New("requests", "a run without gold answers per model × strategy × condition: answers, failures, empty and cached answers, latency, prompt tokens",
		slices.Concat([]Column{Key("model"), Key("strategy"), Key("condition"), Key("n"), Key("failed"), Count("empty", "answers with an empty text"),
			Count("cached", "answers served from the response cache")}, timedColumns(), []Column{Number("mean_prompt_tokens", "mean prompt length in tokens")})...)
	type cell struct{ model, strategy, condition string }
	by := countLoad(rows, func(r *score.Row) cell { return cell{r.Key.Model, r.Key.Strategy, r.Key.Condition} })
	keys := SortedKeysBy(by, func(c cell) []string { return []string{c.model, c.strategy, c.condition} })
	for _, c := range keys {
		a := by[c]
		tok := math.NaN()
		if a.tokN > 0 {
			tok = a.tok / float64(a.tokN)
		}
		t.Add(slices.Concat([]any{c.model, c.strategy, c.condition, a.n - a.failed, a.failed, a.empty, a.cached}, timed(a.lat), []any{tok})...)
	}
	return t
}

// load counts a group's answers for Latency and Requests: n every answer,
// failed the failed ones; of the others k right, empty, cached, the
// latencies of those not cached (above zero) and the prompt tokens counted.
type load struct {
	n, k, failed, empty, cached, tokN int
	tok                               float64
	lat                               []float64
}

// countLoad is the load of the rows of each key.
func countLoad[K comparable](rows []score.Row, key func(*score.Row) K) map[K]*load {
	by := map[K]*load{}
	for i := range rows {
		r := &rows[i]
		k := key(r)
		a := by[k]
		if a == nil {
			a = &load{}
			by[k] = a
		}
		a.n++
		if r.Failed {
			a.failed++
			continue
		}
		if r.Correct {
			a.k++
		}
		if r.EmptyResponse {
			a.empty++
		}
		if r.Cached {
			a.cached++
		} else if r.LatencyMS > 0 {
			a.lat = append(a.lat, r.LatencyMS)
		}
		if r.PromptTokens > 0 {
			a.tok += float64(r.PromptTokens)
			a.tokN++
		}
	}
	return by
}
