package indicklar

import (
	"sync/atomic"
	"testing"

	"github.com/bhashalab/bhasha/analysis/match"
	"github.com/bhashalab/bhasha/analysis/normalize"
	"github.com/bhashalab/bhasha/analysis/translit"
	"github.com/bhashalab/bhasha/datasets/item"
	"github.com/bhashalab/bhasha/internal/memo"
)

// The pass's verdict (each item variant's gold and candidates prepared
// once, each prediction normalized once) is verdict's for every strategy,
// prediction and variant, asked twice (the second from the memos), with
// two variants that share a gold but not a candidate list, and lists of
// equal length at other addresses.
func TestPassVerdictIsVerdict(t *testing.T) {
	s := &scorer{norms: memo.New[string, string](0)}
	hi := []string{"भारत", "नेपाल", "चीन"}
	hiOther := []string{"नेपाल", "भारत", "चीन"} // same gold, another order: another taken candidate
	en := []string{"Norway", "Canada", "Portugal"}
	long := string(make([]byte, maxMemoText+1)) + "Canada"
	variants := []struct {
		gold  string
		cands []string
	}{{"भारत", hi}, {"भारत", hiOther}, {"Canada", en}, {"Canada", nil}, {"Canada", []string{""}}}
	s.prepared = make([]atomic.Pointer[match.Candidates], 2*len(variants))
	preds := []string{"", "भारत", "नेपाल और भारत", "canada.", "Cana", "Port", `{"answer": "Norway or Canada"}`, "Mexico", "भा", long}
	for round := range 2 {
		for _, st := range []Strategy{Baseline, BaselineCands, ContextEN, EntityEN} {
			for n, v := range variants {
				for _, pred := range preds {
					want := verdict(st, pred, v.gold, v.cands)
					if got := s.verdict(st, pred, int32(n), v.gold, v.cands); got != want {
						t.Errorf("round %d, %s, gold %q, candidates %q: verdict(%.40q) = %v, want %v", round, st, v.gold, v.cands, pred, got, want)
					}
				}
			}
		}
	}
}

// The protocol's variant index finds what Item.Variant finds: the first
// variant of an item in a language and form, none for a pair the item
// lacks, and no item for an unknown id; of an id met twice (Set.Get's
// rule), the later item, its English variant, and the first variant of
// each language and form across the two.
func TestVariantIndex(t *testing.T) {
	a := &item.Item{ID: "a", Variants: []item.Variant{
		{Language: "hin", Form: item.Native, Answer: "first"},
		{Language: "hin", Form: item.Native, Answer: "second"},
		{Language: "hin", Form: item.English, Answer: "en"},
		{Language: "eng", Form: item.English, Answer: "eng"},
	}}
	b := &item.Item{ID: "b", Variants: []item.Variant{{Language: "ben", Form: item.Native, Answer: "b"}}}
	a2 := &item.Item{ID: "a", Variants: []item.Variant{{Language: "ben", Form: item.Native, Answer: "a2 ben"}, {Language: "eng", Form: item.English, Answer: "a2 eng"}}}
	for _, items := range [][]*item.Item{{a, b}, {a, b, a2}} {
		p := &Protocol{Set: &item.Set{Items: items}}
		// The index's rules, written out.
		last := func(id string) *item.Item {
			var it *item.Item
			for _, x := range items {
				if x.ID == id {
					it = x
				}
			}
			return it
		}
		first := func(id, lang string, form item.Form) *item.Variant {
			for _, x := range items {
				if x.ID == id {
					if v, ok := x.Variant(lang, form); ok {
						return v
					}
				}
			}
			return nil
		}
		for _, c := range []struct {
			id, lang string
			form     item.Form
		}{
			{"a", "hin", item.Native}, {"a", "hin", item.English}, {"a", "eng", item.English},
			{"a", "ben", item.Native}, {"b", "ben", item.Native}, {"b", "hin", item.Native}, {"c", "hin", item.Native},
		} {
			it, n, _ := p.locate(c.id, c.lang, string(c.form))
			var v *item.Variant
			if n >= 0 {
				v = p.variants[n]
			}
			if want := last(c.id); it != want || p.item(c.id) != want {
				t.Errorf("%d items, %v: item %p, want %p", len(items), c, it, want)
			}
			if want := first(c.id, c.lang, c.form); v != want {
				t.Errorf("%d items, %v: variant %+v, want %+v", len(items), c, v, want)
			}
			_, _, en := p.locate(c.id, c.lang, string(c.form))
			var wantEN *item.Variant
			if it != nil {
				wantEN, _ = it.Variant("eng", item.English)
			}
			if gotEN := (*item.Variant)(nil); en >= 0 {
				gotEN = p.variants[en]
				if gotEN != wantEN {
					t.Errorf("%d items, %v: English variant %+v, want %+v", len(items), c, gotEN, wantEN)
				}
			} else if wantEN != nil {
				t.Errorf("%d items, %v: no English variant, want %+v", len(items), c, wantEN)
			}
		}
	}
}

// verdict is the authors' criterion: the baselines' prefix match, the
// candidate matcher (stored order) for every strategy showing candidates.
// The oracle a scoring pass's memos (scorer.verdict) are checked against.
func verdict(st Strategy, pred, gold string, cands []string) bool {
	if st == Baseline || len(cands) == 0 {
		return match.Prefix(pred, gold, normalize.Authors)
	}
	_, ok := match.Candidate(pred, cands, gold, normalize.Authors)
	return ok
}

// The pass's transliteration mark (each variant's gold romanized once,
// each prediction once per text) is match.Translit's for every
// prediction and gold, asked twice (the second from the memos), with two
// variants of one gold and a prediction too long to remember.
func TestPassTranslitIsTranslit(t *testing.T) {
	golds := []string{"भारत", "भारत", "Canada", ""}
	s := &scorer{keys: memo.New[string, translit.Key](0)}
	long := string(make([]byte, maxMemoText+1)) + "bharat"
	preds := []string{"", "bharat", "Bharat", "भारत", "कनाडा", "kanada", "Mexico", long}
	for round := range 2 {
		for _, gold := range golds {
			for _, pred := range preds {
				want := match.Translit(pred, []string{gold})
				if got := s.translitOf(pred, gold); got != want {
					t.Errorf("round %d, gold %q: translitOf(%.40q) = %v, want %v", round, gold, pred, got, want)
				}
			}
		}
	}
}
