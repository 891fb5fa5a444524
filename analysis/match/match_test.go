package match

import (
	"testing"

	"github.com/bhashalab/bhasha/analysis/normalize"
)

func TestPrefix(t *testing.T) {
	cases := []struct {
		pred, gold string
		p          normalize.Pipeline
		want       bool
	}{
		{" Paris", "Paris", normalize.Authors, true},
		{"Par", "Paris", normalize.Authors, true},           // prediction a prefix of the gold
		{"Paris, France", "Paris", normalize.Authors, true}, // gold a prefix of the prediction
		{"", "Paris", normalize.Authors, false},             // empty prediction always wrong
		{"Rome", "Paris", normalize.Authors, false},
		{"new  delhi", "New Delhi", normalize.Authors, false}, // the authors do not collapse spaces
		{"new  delhi", "New Delhi", normalize.Default, true},  // the pipeline does
		{"दिल्ली।", "दिल्ली", normalize.Authors, true},
		{"क़िला", "किला", normalize.Authors, false},
		{"क़िला", "किला", normalize.Default, true}, // nukta folded
	}
	for _, c := range cases {
		if got := Prefix(c.pred, c.gold, c.p); got != c.want {
			t.Errorf("Prefix(%q, %q, %v) = %v", c.pred, c.gold, c.p, got)
		}
	}
}

func TestCandidate(t *testing.T) {
	cands := []string{"Bulgaria", "Norway", "Portugal", "Canada"}
	cases := []struct {
		pred, taken string
		correct     bool
	}{
		{"Canada", "Canada", true},
		{"canada.", "Canada", true},
		{"Port", "Portugal", false},                         // partial prediction picks the earliest candidate it prefixes
		{`{"answer": "Norway or Canada"}`, "Norway", false}, // raw text: earliest candidate in list order that occurs
		{"Cana", "Canada", true},
		{"Mexico", "", false}, // no candidate: prefix fallback against the gold
		{"", "", false},
	}
	for _, c := range cases {
		taken, ok := Candidate(c.pred, cands, "Canada", normalize.Authors)
		if taken != c.taken || ok != c.correct {
			t.Errorf("Candidate(%q) = %q %v, want %q %v", c.pred, taken, ok, c.taken, c.correct)
		}
	}
}

func TestTrivia(t *testing.T) {
	cases := []struct{ in, want string }{
		{"The Sunset Boulevard!", "sunset boulevard"},
		{"Sunset_Blvd.", "sunset blvd"},
		{"rock'n'roll", "rock n roll"},
		{"An Apple a day", "apple day"},
		{"‘Scorpio’", "scorpio"},
		{"जॉन ह्यूस्टन", "जॉन ह्यूस्टन"}, // non-Latin passes through: the script confound
	}
	for _, c := range cases {
		if got := TriviaNormalize(c.in); got != c.want {
			t.Errorf("TriviaNormalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	golds := []string{"Sunset Boulevard", "Sunset Blvd", "West Sunset Boulevard"}
	for pred, want := range map[string]bool{"sunset blvd.": true, "The Sunset Boulevard": true, "Sunset": false, "सनसेट बुलेवार्ड": false} {
		if got := ExactMatch(pred, golds); got != want {
			t.Errorf("ExactMatch(%q) = %v", pred, got)
		}
	}
}

// Word overlap under the paper's rule (lower case, trimmed) strips only
// EdgePunctuation from the words' edges: the danda and the guillemets go,
// a hyphen inside a word stays, the Urdu full stop ۔ is not stripped.
func TestWordOverlapEdges(t *testing.T) {
	p := normalize.Pipeline{normalize.Lower, normalize.Trim}
	for _, c := range []struct {
		resp, gold string
		want       bool
	}{
		{"«नई» दिल्ली।", "नई दिल्ली", true},
		{"(New) \"Delhi\"—", "new delhi", true},
		{"coop", "co-op", false},
		{"the co-op.", "co-op", true},
		{"دہلی۔", "دہلی", false},
		{"دہلی", "دہلی۔", false},
		{"... ।", "।", false},
	} {
		if got := WordOverlap(c.resp, c.gold, p); got != c.want {
			t.Errorf("WordOverlap(%q, %q) = %v", c.resp, c.gold, got)
		}
	}
}

func TestIndicQuestCriteria(t *testing.T) {
	p := normalize.Default
	cases := []struct {
		resp, gold string
		sub, words bool
	}{
		{"The capital is New Delhi.", "New Delhi", true, true},
		{"Delhi, New", "New Delhi", false, true},
		{"Newdelhi", "New Delhi", false, false},
		{"भारत की राजधानी नई दिल्ली है।", "नई दिल्ली", true, true},
		{"दिल्ली नई", "नई दिल्ली", false, true},
		{"anything", "", false, false},
		{"Gandhiji", "Gandhi", true, false}, // substring ignores word boundaries; word overlap does not
	}
	for _, c := range cases {
		if got := Substring(c.resp, c.gold, p); got != c.sub {
			t.Errorf("Substring(%q, %q) = %v", c.resp, c.gold, got)
		}
		if got := WordOverlap(c.resp, c.gold, p); got != c.words {
			t.Errorf("WordOverlap(%q, %q) = %v", c.resp, c.gold, got)
		}
	}
}

func TestTranslit(t *testing.T) {
	cases := []struct {
		pred  string
		golds []string
		want  bool
	}{
		{"जॉन ह्यूस्टन", []string{"John Huston"}, true},
		{"ओरेगन", []string{"Oregon"}, true},
		{"कोलंबिया", []string{"Colombia"}, true},
		{"मार्टिना हिंगिस", []string{"Maria Sharapova"}, false},
		{"", []string{"Paris"}, false},
		{"Paris", []string{"पेरिस"}, true},
	}
	for _, c := range cases {
		if got := Translit(c.pred, c.golds); got != c.want {
			t.Errorf("Translit(%q, %q) = %v", c.pred, c.golds, got)
		}
	}
}

func TestSQuAD(t *testing.T) {
	cases := []struct{ in, want string }{
		{"The Sunset Boulevard!", "sunset boulevard"},
		{"rock'n'roll", "rocknroll"}, // deleted, where TriviaQA puts a space
		{"U.S.A.", "usa"},
	}
	for _, c := range cases {
		if got := SQuADNormalize(c.in); got != c.want {
			t.Errorf("SQuADNormalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if !ExactMatchSQuAD("usa", []string{"U.S.A."}) || ExactMatch("usa", []string{"U.S.A."}) {
		t.Error("the two normalisations should differ on U.S.A.")
	}
}
