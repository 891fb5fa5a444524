package jsonscan

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// String reads every string encoding/json writes (and the escapes it
// does not write) as encoding/json reads it, and refuses what is not a
// string or not JSON.
func TestStringAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		`""`, `"plain"`, `"{\"translation\":\"Moscow\"}"`, `"a\\b\/c"`, `"\b\f\n\r\t"`,
		`"\u0905\u0928"`, `"\u00e9t\u00C9"`, `"\ud83d\ude00 smile"`, `"lone \ud83d here"`, `"lone low \ude00"`,
		`"\ud83d\u0041"`, `"end \\"`, `"नमस्ते \"quoted\""`, `"\u0000nul"`,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab \"\\/\b\f\n\r\t<>&\u2028\u0905😀é\x01")
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(20) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		enc, _ := json.Marshal(b.String())
		cases = append(cases, string(enc))
	}
	for _, c := range cases {
		var want string
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if got, ok := String([]byte(c)); !ok || got != want {
			t.Errorf("String(%s) = %q, %v; encoding/json gives %q", c, got, ok, want)
		}
	}
	for _, bad := range []string{`"\x"`, `"\u12"`, `"\u12g4"`, `"a\"`, `null`, `12`, `"`} {
		if _, ok := String([]byte(bad)); ok {
			t.Errorf("String(%s): read", bad)
		}
	}
}

// Members visits the top-level members in order, skipping nested values
// and strings holding brackets and escaped quotes; MembersUntil stops at
// the key asked for, giving the offset after it.
func TestMembers(t *testing.T) {
	in := ` {"a": 1 , "b":{"x":[1,{"y":"}]"}]},"c":"q\"}\\","d":[],"e":null} `
	var got []string
	if err := Members([]byte(in), func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	want := `a=1|b={"x":[1,{"y":"}]"}]}|c="q\"}\\"|d=[]|e=null`
	if strings.Join(got, "|") != want {
		t.Errorf("members %s\nwant %s", strings.Join(got, "|"), want)
	}
	var at int
	n := 0
	MembersUntil([]byte(in), func(k []byte, after int) bool { at = after; return string(k) == "c" }, func(k, v []byte) error { n++; return nil })
	if n != 2 || in[at-3:at] != `"c"` {
		t.Errorf("stopped after %d members at %d (%q)", n, at, in[at-3:at])
	}
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":1,}`, `{"a":"x}`, `{"a":1 "b":2}`} {
		if err := Members([]byte(bad), func(k, v []byte) error { return nil }); err == nil {
			t.Errorf("Members(%s): no error", bad)
		}
	}
}
