package indicklar_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/runtime/engine"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
)

// A streamed pass scores an answer it has met before (its texts read and
// remembered) without allocating, the extraction included, and gives the
// row the plan's Score gives: for a cloze answer, a JSON answer, one the
// two JSON rules read apart, and a failed request.
func TestScorerRecordAllocatesNothing(t *testing.T) {
	reg, err := experiment.NewRegistry(indicklar.Study{})
	if err != nil {
		t.Fatal(err)
	}
	e := &experiment.Experiment{Name: "s", Study: "indicklar", Studies: reg, Dataset: &experiment.Dataset{Path: "../../testdata/klar", Format: "klar"},
		Languages: []string{"ja"}, Options: &indicklar.Options{Strategies: []string{"baseline", "baseline-cands", "tint-en"}},
		Models: []experiment.Model{{Name: "m", ServedName: "M"}}}
	if err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys := map[string]engine.Key{} // the first request of each strategy
	var gold string
	for r, err := range e.StreamStage(1, nil, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := keys[r.Key.Strategy]; !ok {
			keys[r.Key.Strategy] = r.Key
		}
		if r.Key.Strategy == "tint-en" {
			v, _ := e.Items().Index()[r.Key.Item].Variant(r.Key.Language, item.Form(r.Key.Form))
			gold = v.Answer
		}
	}
	cut := string([]rune(gold)[:len([]rune(gold))-1])
	for _, c := range []struct {
		name, strategy, response string
		status                   string
	}{
		{"cloze", "baseline", " " + gold + "\nmore", engine.StatusOK},
		{"cloze with candidates", "baseline-cands", gold, engine.StatusOK},
		{"JSON", "tint-en", `{"translation": "x", "answer": "` + gold + `"}`, engine.StatusOK},
		{"JSON the rules read apart", "tint-en", `{"answer": "` + cut, engine.StatusOK},
		{"failed", "tint-en", "", engine.StatusFailed},
	} {
		k, ok := keys[c.strategy]
		if !ok {
			t.Fatalf("%s: no request of strategy %s", c.name, c.strategy)
		}
		rec := engine.Record{Key: k.String(), Fields: k, Status: c.status, Response: c.response}
		ref := rec
		e.Extract(&ref)
		want, err := e.Plan().Score([]*engine.Record{&ref})
		if err != nil || len(want) != 1 {
			t.Fatalf("%s: Score gave %d rows, %v", c.name, len(want), err)
		}
		sc, err := e.Plan().(experiment.Streamer).Scorer()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]score.Row, 0, 1)
		var got []score.Row
		r := new(engine.Record) // the reader's: decoded into again
		record := func() {
			*r = rec
			if got, _, err = sc.Record(r, buf[:0]); err != nil {
				t.Fatal(err)
			}
		}
		record() // the texts read: remembered
		if n := testing.AllocsPerRun(20, record); n != 0 {
			t.Errorf("%s: Record allocates %v times an answer met before, want 0", c.name, n)
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want[0]) {
			t.Errorf("%s: Record gave %+v, Score %+v", c.name, got, want)
		}
	}
}
