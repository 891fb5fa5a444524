package stats

import "fmt"

// violation is the panic message of a broken precondition of the named
// function: "stats.<fn>: <what>", built only on the failing branch.
func violation(fn, format string, args ...any) string {
	return "stats." + fn + ": " + fmt.Sprintf(format, args...)
}

// checkLevel panics unless conf, a confidence level, lies in (0, 1) (NaN
// does not); it returns the level's two-sided normal quantile z.
func checkLevel(fn string, conf float64) (z float64) {
	if !(conf > 0 && conf < 1) {
		panic(violation(fn, "confidence level %v outside (0, 1)", conf))
	}
	return stdNormal.Quantile(1 - (1-conf)/2)
}

// checkDiscordant panics when a discordant count b or c is negative.
func checkDiscordant(fn string, b, c int) {
	if b < 0 || c < 0 {
		panic(violation(fn, "negative discordant count b = %d, c = %d", b, c))
	}
}

// checkCount panics unless 0 ≤ k ≤ n: name is k's name in the caller's
// signature ("k", "k1"), of its n.
func checkCount(fn, name string, k, n int) {
	if n < 0 {
		panic(violation(fn, "negative sample size n%s = %d", name[1:], n))
	}
	if k < 0 || k > n {
		panic(violation(fn, "%s = %d outside [0, n%s = %d]", name, k, name[1:], n))
	}
}

// checkPairs panics unless x and y have the same length.
func checkPairs(fn string, x, y int) {
	if x != y {
		panic(violation(fn, "x has %d values, y has %d", x, y))
	}
}
