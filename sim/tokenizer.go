package sim

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Tokenizer is the simulator's tokenizer: a byte-level code in which a
// token is a run of 1 to 4 bytes of UTF-8 that never crosses a space (a
// space starts a new token). Its id packs the bytes: id = len<<32 | bytes,
// big-endian, so detokenizing is exact. English runs about 4 characters per
// token, Devanagari and the other Indic scripts (3 bytes per character)
// about 1.3: native-script prompts are longer, as with real BPE tokenizers.
// It is simulated; token ids mean nothing outside this simulator.
type Tokenizer struct{}

// Encode returns the token ids of s.
func (Tokenizer) Encode(s string) []int64 {
	ids := make([]int64, 0, len(s)/3+1)
	for i := 0; i < len(s); {
		j := tokenEnd(s, i)
		var id int64
		for _, c := range []byte(s[i:j]) {
			id = id<<8 | int64(c)
		}
		ids = append(ids, int64(j-i)<<32|id)
		i = j
	}
	return ids
}

// tokenEnd is the byte offset where the token starting at byte i of s ends.
func tokenEnd(s string, i int) int {
	n := 1
	for n < 4 && i+n < len(s) && s[i+n] != ' ' {
		n++
	}
	return i + n
}

// Count is len(Encode(s)) without allocating.
func (Tokenizer) Count(s string) int {
	c := 0
	for i := 0; i < len(s); i = tokenEnd(s, i) {
		c++
	}
	return c
}

// Decode is the inverse of Encode.
func (Tokenizer) Decode(ids []int64) (string, error) {
	var sb strings.Builder
	for _, id := range ids {
		n := int(id >> 32)
		if n < 1 || n > 4 || id < 0 {
			return "", fmt.Errorf("token id %d is not a simulator token", id)
		}
		for k := n - 1; k >= 0; k-- {
			sb.WriteByte(byte(id >> (8 * k)))
		}
	}
	return sb.String(), nil
}

// Piece decodes one token (for logprob listings); invalid UTF-8 is kept as is.
func (t Tokenizer) Piece(id int64) string {
	s, _ := t.Decode([]int64{id})
	return s
}

// Truncate keeps the first n tokens of s and reports whether it cut.
func (Tokenizer) Truncate(s string, n int) (string, bool) {
	for i, c := 0, 0; i < len(s); i, c = tokenEnd(s, i), c+1 {
		if c == n {
			for i > 0 && !utf8.RuneStart(s[i]) { // never split a character
				i--
			}
			return s[:i], true
		}
	}
	return s, false
}
