package abstain

import "testing"

func TestAbstains(t *testing.T) {
	d := New(map[string][]string{"hin": {"जानकारी उपलब्ध नहीं"}})
	cases := []struct {
		text string
		want bool
	}{
		{"I don't know.", true},
		{"I DO NOT KNOW", true},
		{"Unknown", true},
		{"Paris", false},
		{"मुझे नहीं पता।", true},
		{"मुझे नहीं पता", true},
		{"এই বিষয়ে আমি জানি না", true},
		{"எனக்குத் தெரியாது", true},
		{"我不知道", true},
		{"No sé.", true},
		{"जानकारी उपलब्ध नहीं है", true}, // an extra phrase from the experiment
		{"पेरिस", false},
		{"Knownothing Party", false},
	}
	for _, c := range cases {
		if got, _ := d.Abstains(c.text); got != c.want {
			t.Errorf("Abstains(%q) = %v", c.text, got)
		}
	}
}
