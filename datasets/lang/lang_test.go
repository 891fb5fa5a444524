package lang

import (
	"strings"
	"testing"
	"unicode"
)

func TestLookup(t *testing.T) {
	r := New()
	cases := []struct{ in, want string }{
		{"hi", "hin"}, {"hin", "hin"}, {"Hindi", "hin"}, {" HINDI ", "hin"}, {"हिन्दी", "hin"}, {"हिंदी", "hin"},
		{"pun", "pan"}, {"pa", "pan"}, {"Punjabi", "pan"},
		{"ori", "ory"}, {"or", "ory"}, {"Oriya", "ory"}, {"Odia", "ory"},
		{"kon", "gom"}, {"kok", "gom"}, {"Konkani", "gom"},
		{"asm", "asm"}, {"as", "asm"}, {"mni", "mni"}, {"Meitei", "mni"}, {"sat", "sat"}, {"brx", "brx"}, {"kas", "kas"},
		{"en", "eng"}, {"English", "eng"}, {"zh", "zho"}, {"es", "spa"}, {"ja", "jpn"},
	}
	for _, c := range cases {
		l, err := r.Lookup(c.in)
		if err != nil || l.Code() != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, l, err, c.want)
		}
	}
	_, err := r.Lookup("hinn")
	if err == nil || !strings.Contains(err.Error(), `"hinn"`) || !strings.Contains(err.Error(), "hin (Hindi)") {
		t.Errorf("unknown code: %v", err)
	}
}

func TestRegistryIsComplete(t *testing.T) {
	r := New()
	var s []Language
	for _, l := range r.All() {
		if l.Scheduled {
			s = append(s, l)
		}
	}
	if len(s) != 22 {
		t.Fatalf("%d scheduled languages, want 22", len(s))
	}
	klar := map[string]bool{}
	for _, code := range strings.Fields("asm ben doi guj hin kan kon mai mal mar nep ori pun san snd tam tel urd brx kas mni sat") {
		l, err := r.Lookup(code)
		if err != nil || !l.Scheduled || l.KLAR != code {
			t.Errorf("IndicKLAR code %s: %v %v", code, l, err)
		}
		klar[code] = true
	}
	families := map[Family]int{}
	for _, l := range s {
		families[l.Family]++
		if l.Native == "" || l.Name == "" || l.ISO3 == "" || l.CodeMixed == "" || len(l.Scripts) == 0 {
			t.Errorf("%s: incomplete entry %+v", l.Name, l)
		}
		// The native name is written in the language's main script.
		tab := unicode.Scripts[string(l.Script())]
		for _, c := range l.Native {
			if unicode.IsLetter(c) && !unicode.Is(tab, c) {
				t.Errorf("%s: native name %q has %q outside %s", l.Name, l.Native, c, l.Script())
				break
			}
		}
	}
	if families[IndoAryan] != 15 || families[Dravidian] != 4 || families[TibetoBurman] != 2 || families[Austroasiatic] != 1 {
		t.Errorf("families %v", families)
	}
}

func TestFind(t *testing.T) {
	r := New()
	for _, tc := range []struct {
		in   string
		code string
		ok   bool
	}{{"hi", "hin", true}, {"Hindi", "hin", true}, {"", "", false}, {"xx-unknown", "", false}} {
		l, ok := r.Find(tc.in)
		if ok != tc.ok || (ok && l.Code() != tc.code) {
			t.Errorf("Find(%q) = %q, %v", tc.in, l.Code(), ok)
		}
		if _, err := r.Lookup(tc.in); (err == nil) != tc.ok {
			t.Errorf("Lookup(%q) disagrees with Find: %v", tc.in, err)
		}
	}
}
