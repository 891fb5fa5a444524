package tables

import (
	"fmt"
	"testing"
)

func TestFillAndInterner(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 9000} {
		tb := New("t", "", Text("s", "s"), Integer("i", "i"))
		var in Interner
		tb.Fill(n, func(i int, row []any) { row[0], row[1] = in.String(fmt.Sprint(i%3)), in.Int(i%2) })
		if len(tb.Rows) != n {
			t.Fatalf("n=%d: %d rows", n, len(tb.Rows))
		}
		for i, r := range tb.Rows {
			if len(r) != 2 || cap(r) != 2 || r[0] != fmt.Sprint(i%3) || r[1] != i%2 {
				t.Fatalf("n=%d: row %d is %v (cap %d)", n, i, r, cap(r))
			}
		}
		if len(in.strs) != min(n, 3) || len(in.ints) != min(n, 2) {
			t.Errorf("n=%d: %d strings and %d ints boxed, want each distinct value once", n, len(in.strs), len(in.ints))
		}
	}
}
