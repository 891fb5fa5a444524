package normalize

import "testing"

func TestDefault(t *testing.T) {
	cases := []struct{ in, want string }{
		{"  New   Delhi. ", "new delhi"},
		{"नई दिल्ली।", "नई दिल्ली"},
		{"क़िला", "किला"},            // nukta precomposed (U+0958) folded
		{"क\u093cिला", "किला"},       // nukta as a combining sign
		{"१९४७", "1947"},             // Devanagari digits
		{"১৯৪৭ সাল", "1947 সাল"},     // Bengali digits
		{"௨௦௨௬", "2026"},             // Tamil digits
		{"क्\u200dष", "क्ष"},         // ZWJ dropped
		{"\u201cRome\u201d", "rome"}, // curly quotes
		{"ÉCOLE", "école"},
		{"e\u0301cole", "école"}, // NFC
	}
	for _, c := range cases {
		if got := Default.String(c.in); got != c.want {
			t.Errorf("Default(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := (Pipeline{Whitespace}).String(" A  b "); got != "A b" {
		t.Errorf("whitespace only: %q", got)
	}
}
