package translit

import "testing"

func TestISO15919(t *testing.T) {
	cases := []struct{ in, want string }{
		{"भारत", "bhārata"},
		{"दिल्ली", "dillī"},
		{"क़िला", "qilā"},
		{"ज़मीन", "zamīna"},
		{"हिंदी", "hiṁdī"},
		{"নদী", "nadī"},         // Bengali
		{"ਪੰਜਾਬ", "paṁjāba"},    // Gurmukhi
		{"ગુજરાત", "gujarāta"},  // Gujarati
		{"ଓଡ଼ିଆ", "ōṛiā"},       // Oriya with nukta
		{"தமிழ்", "tamiḻ"},      // Tamil
		{"తెలుగు", "telugu"},    // Telugu
		{"ಕನ್ನಡ", "kannaḍa"},    // Kannada
		{"മലയാളം", "malayāḷaṁ"}, // Malayalam
		{"२०२६", "2026"},
		{"Paris, 1920", "Paris, 1920"},
	}
	for _, c := range cases {
		if got := ISO15919(c.in); got != c.want {
			t.Errorf("ISO15919(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLooseAgreesAcrossScripts(t *testing.T) {
	same := []struct{ native, latin string }{
		{"भारत", "Bharat"},
		{"दिल्ली", "Dilli"},
		{"ओरेगन", "Oregan"},
		{"पेरिस", "Paris"},
		{"टोक्यो", "Tokyo"},
		{"फ़िलाडेल्फ़िया", "Philadelphia"},
		{"जॉन ह्यूस्टन", "John Huston"},
		{"कोलंबिया", "Colombia"},
		{"चेन्नई", "Chennai"},
		{"शिमला", "Shimla"},
		{"सिसिली", "Sicily"},
	}
	for _, c := range same {
		if !KeyOf(c.native).Matches(KeyOf(c.latin)) {
			t.Errorf("%s (%q) and %s (%q) should match", c.native, Loose(ISO15919(c.native)), c.latin, Loose(c.latin))
		}
	}
	diff := []struct{ native, latin string }{{"भारत", "Britain"}, {"दिल्ली", "Delhi Cantonment"}, {"पेरिस", "Prague"}, {"ए", "A"}, {"जॉन ह्यूस्टन", "John Houston Jr"}}
	for _, c := range diff {
		if KeyOf(c.native).Matches(KeyOf(c.latin)) {
			t.Errorf("%s and %s should not match", c.native, c.latin)
		}
	}
	if Loose(ISO15919("भारत")) != "barat" || Loose("Bharat") != "barat" {
		t.Errorf("word-final inherent a: %q", Loose(ISO15919("भारत")))
	}
}

func TestRoman(t *testing.T) {
	cases := []struct{ in, want string }{
		{"भारत की राजधानी क्या है?", "bharat ki rajadhani kya hai?"},
		{"दिल्ली", "dilli"},
		{"Paris", "Paris"},
		{"ಕನ್ನಡ", "kannad"},
	}
	for _, c := range cases {
		if got := Roman(c.in); got != c.want {
			t.Errorf("Roman(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRomanMixed(t *testing.T) {
	if got := Roman("Canada की राजधानी"); got != "Canada ki rajadhani" {
		t.Errorf("mixed: %q", got)
	}
}
