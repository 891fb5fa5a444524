package shortlist

import (
	"strconv"
	"testing"
)

func TestJoin(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		n    int
		want string
	}{
		{nil, 3, ""},
		{[]int{1, 2}, 3, "1; 2"},
		{[]int{1, 2, 3}, 3, "1; 2; 3"},
		{[]int{1, 2, 3, 4, 5}, 3, "1; 2; 3; and 2 more"},
		{[]int{1, 2}, 0, "and 2 more"},
	} {
		if got := Join(c.xs, c.n, "; ", "and %d more", strconv.Itoa); got != c.want {
			t.Errorf("Join(%v, %d) = %q, want %q", c.xs, c.n, got, c.want)
		}
	}
}
