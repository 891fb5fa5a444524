package frames

import (
	"slices"
	"testing"

	"github.com/bhashalab/bhasha/runtime/engine"
)

func TestFromRecords(t *testing.T) {
	mk := func(item, lang string, status string, lat float64) *engine.Record {
		k := engine.Key{Experiment: "e", Model: "a_b", Item: item, Language: lang}
		return &engine.Record{Key: k.String(), Fields: k, Status: status, LatencyMS: lat, PromptTokens: len(item), Response: "r" + item}
	}
	df := FromRecords([]*engine.Record{mk("2", "hin", "ok", 1.5), mk("1", "en", "failed", 0), mk("10", "hin", "ok", 2)})
	if df.Err != nil {
		t.Fatal(df.Err)
	}
	if !slices.Equal(df.Names(), RecordColumns) {
		t.Fatalf("columns %v", df.Names())
	}
	if r, c := df.Dims(); r != 3 || c != len(RecordColumns) {
		t.Fatalf("dims %d×%d", r, c)
	}
	if got := df.Col("item").Records(); !slices.Equal(got, []string{"10", "1", "2"}) {
		t.Errorf("not sorted by key: %v", got)
	}
	if got := df.Col("model").Records(); got[0] != "a_b" {
		t.Errorf("model %v", got)
	}
	if got := df.Col("latency_ms").Float(); got[2] != 1.5 {
		t.Errorf("latency %v", got)
	}
	if got, _ := df.Col("prompt_tokens").Int(); got[0] != 2 {
		t.Errorf("prompt tokens %v", got)
	}
	if FromRecords(nil).Nrow() != 0 {
		t.Error("empty")
	}
}
