// Package textdist measures how far apart two strings are, for "did you
// mean" suggestions.
package textdist

// Levenshtein is the edit distance between a and b: the fewest single-rune
// insertions, deletions and substitutions that turn a into b.
func Levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Nearest is the candidate closest to s, and its distance; ("", -1) when
// there is none. Ties go to the earlier candidate.
func Nearest(s string, candidates []string) (string, int) {
	best, bd := "", -1
	for _, c := range candidates {
		if d := Levenshtein(s, c); bd < 0 || d < bd {
			best, bd = c, d
		}
	}
	return best, bd
}
