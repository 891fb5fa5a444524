package indicklar

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/datasets/lang"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// demosByCopy is the draw as it was first written: a partial Fisher-Yates
// shuffle of a copy of the pool without the test item.
func demosByCopy(seed int64, pool []demo, testID string, sl slot, n int) []demo {
	cands := make([]demo, 0, len(pool))
	for _, d := range pool {
		if d.id != testID {
			cands = append(cands, d)
		}
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%s", testID, sl.lang.ISO3, sl.form)
	r := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	n = min(n, len(cands))
	for i := 0; i < n; i++ {
		j := i + r.IntN(len(cands)-i)
		cands[i], cands[j] = cands[j], cands[i]
	}
	return cands[:n]
}

// The demonstrations drawn without copying the pool are those of the copy,
// in the same order (the prompts, and so the cache keys and request
// digests of earlier runs, stay byte-identical; the 2Step second stages
// moved once, when their pool became the authors').
func TestDemosAsByCopy(t *testing.T) {
	sl := slot{lang.New().MustLookup("hin"), item.Native}
	for size := range 12 {
		for _, testAt := range [][]int{nil, {0}, {size / 2}, {size - 1}, {0, size - 1}} {
			pool := make([]demo, size)
			for i := range pool {
				pool[i] = demo{id: fmt.Sprintf("P%d", i), v: &item.Variant{Question: fmt.Sprint(i)}}
			}
			test := "absent"
			for _, at := range testAt {
				if at >= 0 && at < size {
					pool[at].id, test = "T", "T"
				}
			}
			for seed := range int64(40) {
				for n := range 6 {
					p := &Protocol{Seed: seed}
					got, want := p.demos(TinTCM, pool, test, sl, n), demosByCopy(seed, pool, test, sl, n)
					if !slices.Equal(got, want) {
						t.Fatalf("pool of %d, test item at %v, seed %d, n %d: %v, want %v", size, testAt, seed, n, got, want)
					}
				}
			}
		}
	}
}

// The 2Step second stage draws its demonstrations from the authors' pool
// by default: the element at the item's KLAR index is left out, not the
// item, so an item can be its own demonstration (PROTOCOLS.md §1.5);
// prompt.demos_exclude_item leaves the item out, as every other strategy
// always does.
func TestDemoPoolExclusion(t *testing.T) {
	questions := map[string]string{} // item → its native question
	for _, it := range tinySet().Items {
		v, _ := it.Variant("hin", item.Native)
		questions[it.ID] = v.Question
	}
	translated := func(engine.Key) (*engine.Record, bool) {
		return &engine.Record{Status: engine.StatusOK, Response: `{"translation": "What is the capital?"}`}, true
	}
	for _, c := range []struct {
		name        string
		strategy    Strategy
		excludeItem bool
		wantSelf    bool // some item shows itself among its demonstrations
		wantIndexed bool // the element at the item's KLAR index can be shown
	}{
		{"2step-en, the authors' pool", TwoStepEN, false, true, false},
		{"2step-cm, the authors' pool", TwoStepCM, false, true, false},
		{"2step-en, demos_exclude_item", TwoStepEN, true, false, true},
		{"tint-cm (always excludes the item)", TinTCM, false, false, true},
		{"tint-cm, demos_exclude_item (no change)", TinTCM, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			self, indexed := 0, 0
			for seed := range int64(30) {
				p := &Protocol{Set: tinySet(), Languages: []lang.Language{reg.MustLookup("hin")}, Forms: []item.Form{item.Native},
					Strategies: []Strategy{c.strategy}, Seed: seed, PromptOptions: PromptOptions{DemosExcludeItem: c.excludeItem}}
				for _, r := range collect(t, p, c.strategy.Stages(), translated) {
					id := r.Key.Item
					head, _, _ := strings.Cut(r.Prompt, "Q: What is the capital?") // the demonstrations (2Step), or all
					if c.strategy.Stages() == 1 {
						head = r.Prompt[:strings.LastIndex(r.Prompt, "Q: ")]
					}
					if strings.Contains(head, "Q: "+questions[id]+"\n") {
						self++
					}
					// Items "1".."5" sit at pool positions 0..4: the KLAR index k names item k+1.
					if next := fmt.Sprint(int(id[0]-'0') + 1); questions[next] != "" && strings.Contains(head, "Q: "+questions[next]+"\n") {
						indexed++
					}
				}
			}
			if (self > 0) != c.wantSelf {
				t.Errorf("an item among its own demonstrations %d times in 30 seeds × 5 items, want any: %v", self, c.wantSelf)
			}
			if (indexed > 0) != c.wantIndexed {
				t.Errorf("the element at the item's KLAR index shown %d times, want any: %v", indexed, c.wantIndexed)
			}
		})
	}
}

// prompt.demos_from_english (§4.3's reading) draws every strategy's
// demonstrations from the relation's English split, whatever the form
// asked; the default (the code, Appendix F.1) the same language and form;
// the ablations keep their native demonstrations either way.
func TestDemosFromEnglish(t *testing.T) {
	for _, c := range []struct {
		english  bool
		strategy Strategy
		form     item.Form
		want     string // in every demonstration block
		not      string
	}{
		{false, BaselineCands, item.Native, "की राजधानी क्या है?", "What is the capital of"},
		{true, BaselineCands, item.Native, "What is the capital of", "की राजधानी क्या है?"},
		{true, BaselineCands, item.CodeMixed, "What is the capital of", "ki capital kya hai"},
		{false, BaselineCands, item.CodeMixed, "ki capital kya hai", "What is the capital of"},
		{true, TinTCM, item.Native, "Q: What is the capital of", "\nQ: भारत"},
		{true, Romanized, item.Native, "ki rajadhani", "What is the capital of"},
	} {
		p := &Protocol{Set: tinySet(), Languages: []lang.Language{reg.MustLookup("hin")}, Forms: []item.Form{c.form},
			Strategies: []Strategy{c.strategy}, Seed: 12345, PromptOptions: PromptOptions{DemosFromEnglish: c.english}}
		rs := collect(t, p, 1, none)
		if len(rs) == 0 {
			t.Fatalf("%s %s: no requests", c.strategy, c.form)
		}
		for _, r := range rs {
			demos := strings.Join(strings.SplitN(r.Prompt, "\n", 4)[:3], "\n") // a cloze line each
			if c.strategy.JSON() {
				demos = r.Prompt[:strings.LastIndex(r.Prompt, "Q: ")]
			}
			if strings.Count(demos, c.want) < 3 || strings.Contains(demos, c.not) {
				t.Errorf("english %v, %s %s, item %s: demonstrations want 3 × %q, no %q:\n%s", c.english, c.strategy, c.form, r.Key.Item, c.want, c.not, demos)
				break
			}
		}
	}
}
