package sim

import "strings"

// Devanagari writes Latin text in Devanagari the way a simulated model
// drifting into Hindi would: a rough phonetic mapping, letter by letter
// with common digraphs, vowels as independent letters at the start of a
// word and as signs after a consonant. It is deliberately simple (it is
// the simulator's behaviour, not Bhasha's transliteration) and passes
// other characters through (lower-cased).
func Devanagari(s string) string {
	type m struct{ lat, cons, vowelInit, vowelSign string }
	table := []m{
		{"sh", "श", "", ""}, {"ch", "च", "", ""}, {"th", "थ", "", ""}, {"ph", "फ", "", ""}, {"kh", "ख", "", ""}, {"gh", "घ", "", ""},
		{"aa", "", "आ", "ा"}, {"ee", "", "ई", "ी"}, {"oo", "", "ऊ", "ू"}, {"ai", "", "ऐ", "ै"}, {"au", "", "औ", "ौ"},
		{"a", "", "अ", ""}, {"e", "", "ए", "े"}, {"i", "", "इ", "ि"}, {"o", "", "ओ", "ो"}, {"u", "", "उ", "ु"},
		{"b", "ब", "", ""}, {"c", "क", "", ""}, {"d", "ड", "", ""}, {"f", "फ", "", ""}, {"g", "ग", "", ""}, {"h", "ह", "", ""},
		{"j", "ज", "", ""}, {"k", "क", "", ""}, {"l", "ल", "", ""}, {"m", "म", "", ""}, {"n", "न", "", ""}, {"p", "प", "", ""},
		{"q", "क", "", ""}, {"r", "र", "", ""}, {"s", "स", "", ""}, {"t", "ट", "", ""}, {"v", "व", "", ""}, {"w", "व", "", ""},
		{"x", "क्स", "", ""}, {"y", "य", "", ""}, {"z", "ज़", "", ""},
	}
	low := strings.ToLower(s)
	var sb strings.Builder
	afterCons := false
next:
	for i := 0; i < len(low); {
		for _, e := range table {
			if !strings.HasPrefix(low[i:], e.lat) {
				continue
			}
			switch {
			case e.cons != "":
				sb.WriteString(e.cons)
				afterCons = true
			case afterCons:
				sb.WriteString(e.vowelSign)
				afterCons = false
			default:
				sb.WriteString(e.vowelInit)
			}
			i += len(e.lat)
			continue next
		}
		sb.WriteByte(low[i])
		afterCons = false
		i++
	}
	return sb.String()
}
