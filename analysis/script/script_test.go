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
	if p.Letters != 10 || p.Shares["Latin"] != 0.5 || !p.DistractorSwitch() || Detect("Paris").DistractorSwitch() {
		t.Errorf("shares %+v", p)
	}
}
