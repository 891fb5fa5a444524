package report

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// appendFitEscaped writes what fitCell then appendEscapedValid write, for
// every text fitCell leaves as it is, and refuses every other: checked on
// texts of each kind of byte it must tell apart, and on random bytes
// drawn from them.
func TestAppendFitEscaped(t *testing.T) {
	pieces := []string{
		"a", "Z", " ", "\t", "\n", "\r", "&", "<", ">", "'", "\"", "?", "0", "\x7f",
		"\x00", "\x07", "\x1b", "\x1f",
		"न", "রোম", "é", "€", "😀", "\uFFFD", "\uFFFE", "\uFFFF", "\uFFFC", "\uE000", "\u0800", "\uD7FF",
		"\xff", "\xe0\x80\x80", "\xed\xa0\x80", "\xe0\xa4", "\xe0", "\xc3", "\xf0\x9f", "\xef\xbf",
	}
	texts := append([]string{"", strings.Repeat("न", MaxCellChars/3), strings.Repeat("a", MaxCellChars), strings.Repeat("a", MaxCellChars+1)}, pieces...)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, sb.String())
	}
	for _, s := range texts {
		check(t, s)
	}
}

func check(t *testing.T, s string) {
	t.Helper()
	fit := fitCell(s, "x.csv")
	leaves := !fit.changed() && fit.text == s && len(s) <= MaxCellChars
	got, ok := appendFitEscaped([]byte("head"), s)
	if ok != leaves {
		t.Fatalf("%q: ok %v, but fitCell leaves it as it is: %v", s, ok, leaves)
	}
	if !ok {
		if string(got) != "head" {
			t.Fatalf("%q refused, and b changed: %q", s, got)
		}
		return
	}
	if want := string(appendEscapedValid([]byte("head"), s)); string(got) != want {
		t.Fatalf("%q: %q, want %q", s, got, want)
	}
}

func FuzzAppendFitEscaped(f *testing.F) {
	for _, s := range []string{"", "a&b<c>\r\n", "न\x00", "\uFFFE", "\xe0\x80\x80", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(check)
}
