// Package frames hands results to notebook users as gota DataFrames with
// stable column names, sorted by key. It only converts: every number is
// computed by typed Go code elsewhere (gota's GroupBy merges keys that
// contain '_' and must not be used for results).
package frames

import (
	"slices"
	"strings"

	"github.com/go-gota/gota/dataframe"
	"github.com/go-gota/gota/series"

	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/runtime/records"
)

// RecordColumns are the columns of Records, in order.
var RecordColumns = []string{"key", "experiment", "model", "item", "language", "form", "strategy", "condition", "role",
	"kind", "served_model", "status", "error", "response", "finish_reason", "prompt_tokens", "completion_tokens",
	"latency_ms", "attempts", "cached", "endpoint"}

// Records reads dir/records.jsonl into a DataFrame (one row per record,
// sorted by key; columns RecordColumns).
func Records(dir string) (dataframe.DataFrame, error) {
	var recs []*engine.Record
	if err := records.Read(dir, func(r *engine.Record) error { recs = append(recs, r); return nil }); err != nil {
		return dataframe.DataFrame{}, err
	}
	return FromRecords(recs), nil
}

// FromRecords builds the records DataFrame from records in memory.
func FromRecords(recs []*engine.Record) dataframe.DataFrame {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b *engine.Record) int { return strings.Compare(a.Key, b.Key) })
	n := len(recs)
	str := func(f func(*engine.Record) string) []string {
		out := make([]string, n)
		for i, r := range recs {
			out[i] = f(r)
		}
		return out
	}
	ints := func(f func(*engine.Record) int) []int {
		out := make([]int, n)
		for i, r := range recs {
			out[i] = f(r)
		}
		return out
	}
	lat := make([]float64, n)
	cached := make([]bool, n)
	for i, r := range recs {
		lat[i], cached[i] = r.LatencyMS, r.Cached
	}
	return dataframe.New(
		series.New(str(func(r *engine.Record) string { return r.Key }), series.String, "key"),
		series.New(str(func(r *engine.Record) string { return r.Fields.Experiment }), series.String, "experiment"),
		series.New(str(func(r *engine.Record) string { return r.Fields.Model }), series.String, "model"),
		series.New(str(func(r *engine.Record) string { return r.Fields.Item }), series.String, "item"),
		series.New(str(func(r *engine.Record) string { return r.Fields.Language }), series.String, "language"),
		series.New(str(func(r *engine.Record) string { return r.Fields.Form }), series.String, "form"),
		series.New(str(func(r *engine.Record) string { return r.Fields.Strategy }), series.String, "strategy"),
		series.New(str(func(r *engine.Record) string { return r.Fields.Condition }), series.String, "condition"),
		series.New(str(func(r *engine.Record) string { return r.Fields.Role.String() }), series.String, "role"),
		series.New(str(func(r *engine.Record) string { return string(r.Kind) }), series.String, "kind"),
		series.New(str(func(r *engine.Record) string { return r.ServedModel }), series.String, "served_model"),
		series.New(str(func(r *engine.Record) string { return r.Status }), series.String, "status"),
		series.New(str(func(r *engine.Record) string { return r.Error }), series.String, "error"),
		series.New(str(func(r *engine.Record) string { return r.Response }), series.String, "response"),
		series.New(str(func(r *engine.Record) string { return r.FinishReason }), series.String, "finish_reason"),
		series.New(ints(func(r *engine.Record) int { return r.PromptTokens }), series.Int, "prompt_tokens"),
		series.New(ints(func(r *engine.Record) int { return r.CompletionTokens }), series.Int, "completion_tokens"),
		series.New(lat, series.Float, "latency_ms"),
		series.New(ints(func(r *engine.Record) int { return r.Attempts }), series.Int, "attempts"),
		series.New(cached, series.Bool, "cached"),
		series.New(str(func(r *engine.Record) string { return r.Endpoint }), series.String, "endpoint"),
	)
}
