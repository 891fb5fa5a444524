package script

import (
	"testing"

	"github.com/bhashalab/bhasha/datasets/lang"
)

func TestDetect(t *testing.T) {
	reg := lang.New()
	cases := []struct {
		text     string
		main     string
		mixed    bool
		expect   string
		switched bool
	}{
		{"Paris", "Latin", false, "en", false},
		{"पेरिस", "Devanagari", false, "en", true},
		{"Paris (पेरिस)", "Devanagari", true, "hi", true},
		{"पेरिस", "Devanagari", false, "mr", false},
		{"কানাডা", "Bengali", false, "as", false},
		{"ᱥᱟᱱᱛᱟᱲᱤ", "Ol_Chiki", false, "sat", false},
		{"ꯃꯤꯇꯩ", "Meetei_Mayek", false, "mni", false},
		{"کینیڈا", "Arabic", false, "ur", false},
		{"北京", "Han", false, "en", true},
		{"とうきょう 東京", "Hiragana", true, "ja", false},
		{"1947", "", false, "hi", false},
		{"café", "Latin", false, "en", false},
	}
	for _, c := range cases {
		p := Detect(c.text)
		if p.Main != c.main || p.Mixed != c.mixed || p.Switched(reg.MustLookup(c.expect)) != c.switched {
			t.Errorf("%q: %+v; switched from %s = %v", c.text, p, c.expect, p.Switched(reg.MustLookup(c.expect)))
		}
	}
	p := Detect("Paris पेरिस")
	if p.Letters != 10 || p.Shares["Latin"] != 0.5 {
		t.Errorf("shares %+v", p)
	}
}

// The distractor study's rule is the two blocks, letters or not: a
// Devanagari digit or danda switches, a CJK extension ideograph does not.
func TestDistractorSwitch(t *testing.T) {
	cases := []struct {
		text string
		want bool
	}{
		{"Paris पेरिस", true},
		{"Paris", false},
		{"१९४५", true},
		{"Paris।", true},
		{"北京", true},
		{"䶮", false}, // U+4DAE, CJK Extension A
		{"東京 とうきょう", true},
		{"とうきょう", false},
		{"ঢাকা", false}, // Bengali
		{"", false},
	}
	for _, c := range cases {
		if got := DistractorSwitch(c.text); got != c.want {
			t.Errorf("%q: %v", c.text, got)
		}
	}
}
