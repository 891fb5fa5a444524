package textdist

import "testing"

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"langauges", "languages", 2}, {"kitten", "sitting", 3}, {"हिन्दी", "हिंदी", 2},
	} {
		if got := Levenshtein(c.a, c.b); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if n, d := Nearest("strategys", []string{"languages", "strategies", "forms"}); n != "strategies" || d != 2 {
		t.Errorf("Nearest = %s %d", n, d)
	}
	if n, d := Nearest("x", nil); n != "" || d != -1 {
		t.Errorf("Nearest of none = %q %d", n, d)
	}
}
