// Package shortlist writes a long list the way a message names it: its
// first few items, then how many more there are.
package shortlist

import (
	"fmt"
	"strings"
)

// Join joins show(x) of the first n items of xs with sep, followed by
// more (a format taking the number of items left out, "and %d more")
// when xs holds more than n.
func Join[T any](xs []T, n int, sep, more string, show func(T) string) string {
	parts := make([]string, 0, min(n, len(xs))+1)
	for _, x := range xs[:min(n, len(xs))] {
		parts = append(parts, show(x))
	}
	if len(xs) > n {
		parts = append(parts, fmt.Sprintf(more, len(xs)-n))
	}
	return strings.Join(parts, sep)
}
