package experiment

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/bhashalab/bhasha/analysis/score"
	"github.com/bhashalab/bhasha/runtime/engine"
)

// TestPassOrdersRows: rows put from several goroutines, over several
// blocks, come back in the records' order, each record's further rows
// after its first, with what was kept in the same order; a record left
// out (not in ms) gives nothing, and every block is let go; copied by
// one goroutine or by several.
func TestPassOrdersRows(t *testing.T) {
	for _, c := range []struct{ n, parts int }{{0, 1}, {1, 1}, {rowBlock, 1}, {3*rowBlock + 17, 1}, {1, 3}, {rowBlock, 2}, {3*rowBlock + 17, 3}, {3*rowBlock + 17, 7}} {
		n := c.n
		t.Run(fmt.Sprintf("%d/parts=%d", n, c.parts), func(t *testing.T) {
			row := func(line, k int) score.Row {
				return score.Row{Key: engine.Key{Item: fmt.Sprint(line)}, PromptTokens: k}
			}
			// line%5 == 0 gives no row, line%7 == 0 two more, line%3 == 0
			// is kept; line%11 == 0 is read but left out of ms.
			rowsOf := func(line int) []score.Row {
				switch {
				case line%5 == 0:
					return nil
				case line%7 == 0:
					return []score.Row{row(line, 0), row(line, 1), row(line, 2)}
				}
				return []score.Row{row(line, 0)}
			}
			p := &pass{}
			got := make([]made, n)
			var wg sync.WaitGroup
			order := rand.New(rand.NewPCG(1, uint64(n))).Perm(n)
			for w := range 3 {
				wg.Go(func() {
					for j := w; j < n; j += 3 {
						line := order[j] + 1
						var k *Kept
						if line%3 == 0 {
							k = &Kept{Fields: engine.Key{Item: fmt.Sprint(line)}}
						}
						rs := rowsOf(line)
						got[line-1] = p.put(line, rs, k)
						for i := range rs { // put copies: the caller reuses its buffer
							rs[i] = score.Row{}
						}
					}
				})
			}
			wg.Wait()
			var ms []made
			var lines []int32
			var wantRows []score.Row
			var wantKept []Kept
			for line := 1; line <= n; line++ {
				if line%11 == 0 {
					continue
				}
				ms, lines = append(ms, got[line-1]), append(lines, int32(line))
				wantRows = append(wantRows, rowsOf(line)...)
				if line%3 == 0 {
					wantKept = append(wantKept, Kept{Fields: engine.Key{Item: fmt.Sprint(line)}})
				}
			}
			rows, kept := p.ordered(ms, lines, c.parts)
			if len(rows) != len(wantRows) || (len(rows) > 0 && !reflect.DeepEqual(rows, wantRows)) {
				t.Errorf("%d rows, want %d (or they differ)", len(rows), len(wantRows))
			}
			if len(kept) != len(wantKept) || (len(kept) > 0 && !reflect.DeepEqual(kept, wantKept)) {
				t.Errorf("%d kept, want %d (or they differ)", len(kept), len(wantKept))
			}
			if p.blocks != nil || p.kept != nil || p.more != nil {
				t.Error("the pass still holds its blocks")
			}
		})
	}
}

// TestPassLetsBlocksGo: ordered lets each block go itself (its entry in
// the blocks' list cleared once its last row is copied), not only by
// dropping the list at the end.
func TestPassLetsBlocksGo(t *testing.T) {
	p := &pass{}
	var ms []made
	var lines []int32
	for line := 1; line <= 2*rowBlock+1; line++ {
		ms, lines = append(ms, p.put(line, []score.Row{{PromptTokens: line}}, nil)), append(lines, int32(line))
	}
	blocks := p.blocks
	left := make([]int32, len(blocks))
	for _, m := range ms {
		left[m.row/rowBlock]++
	}
	if len(blocks) != 3 || left[0] != rowBlock || left[2] != 1 {
		t.Fatalf("%d blocks holding %v rows", len(blocks), left)
	}
	rows, _ := p.ordered(ms, lines, 2)
	if len(rows) != 2*rowBlock+1 || rows[rowBlock].PromptTokens != rowBlock+1 {
		t.Errorf("%d rows", len(rows))
	}
	for i, b := range blocks {
		if b != nil {
			t.Errorf("block %d still held", i)
		}
	}
}
