package indicklar

import (
	"testing"

	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/internal/memo"
)

// The pass's verdict (each item variant's gold and candidates prepared
// once, each prediction normalized once) is verdict's for every strategy,
// prediction and variant, asked twice (the second from the memos), with
// two variants that share a gold but not a candidate list, and lists of
// equal length at other addresses.
func TestPassVerdictIsVerdict(t *testing.T) {
	s := &scorer{prepared: memo.New[goldOf, *match.Candidates](0), norms: memo.New[string, string](0)}
	hi := []string{"भारत", "नेपाल", "चीन"}
	hiOther := []string{"नेपाल", "भारत", "चीन"} // same gold, another order: another taken candidate
	en := []string{"Norway", "Canada", "Portugal"}
	long := string(make([]byte, maxMemoText+1)) + "Canada"
	variants := []struct {
		gold  string
		cands []string
	}{{"भारत", hi}, {"भारत", hiOther}, {"Canada", en}, {"Canada", nil}, {"Canada", []string{""}}}
	preds := []string{"", "भारत", "नेपाल और भारत", "canada.", "Cana", "Port", `{"answer": "Norway or Canada"}`, "Mexico", "भा", long}
	for round := range 2 {
		for _, st := range []Strategy{Baseline, BaselineCands, ContextEN, EntityEN} {
			for _, v := range variants {
				for _, pred := range preds {
					want := verdict(st, pred, v.gold, v.cands)
					if got := s.verdict(st, pred, v.gold, v.cands); got != want {
						t.Errorf("round %d, %s, gold %q, candidates %q: verdict(%.40q) = %v, want %v", round, st, v.gold, v.cands, pred, got, want)
					}
				}
			}
		}
	}
}

// The protocol's variant index finds what Item.Variant finds: the first
// variant of an item in a language and form, none for a pair the item
// lacks, and no item for an unknown id.
func TestVariantIndex(t *testing.T) {
	a := &item.Item{ID: "a", Variants: []item.Variant{
		{Language: "hin", Form: item.Native, Answer: "first"},
		{Language: "hin", Form: item.Native, Answer: "second"},
		{Language: "hin", Form: item.English, Answer: "en"},
		{Language: "eng", Form: item.English, Answer: "eng"},
	}}
	b := &item.Item{ID: "b", Variants: []item.Variant{{Language: "ben", Form: item.Native, Answer: "b"}}}
	p := &Protocol{Set: &item.Set{Items: []*item.Item{a, b}}}
	for _, c := range []struct {
		id, lang string
		form     item.Form
	}{
		{"a", "hin", item.Native}, {"a", "hin", item.English}, {"a", "eng", item.English},
		{"a", "ben", item.Native}, {"b", "ben", item.Native}, {"b", "hin", item.Native}, {"c", "hin", item.Native},
	} {
		it, v := p.variant(c.id, c.lang, string(c.form))
		if wantItem := p.item(c.id); it != wantItem {
			t.Errorf("%v: item %p, want %p", c, it, wantItem)
		}
		var want *item.Variant
		if it != nil {
			want, _ = it.Variant(c.lang, c.form)
		}
		if v != want {
			t.Errorf("%v: variant %+v, want %+v", c, v, want)
		}
	}
}
