package experiment

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
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
			p := newPass()
			got := make([]made, n)
			var wg sync.WaitGroup
			order := rand.New(rand.NewPCG(1, uint64(n))).Perm(n)
			for w := range 3 {
				wg.Go(func() {
					var pk packer
					for j := w; j < n; j += 3 {
						line := order[j] + 1
						var k *Kept
						if line%3 == 0 {
							k = &Kept{Fields: engine.Key{Item: fmt.Sprint(line)}}
						}
						rs := rowsOf(line)
						got[line-1] = p.put(line, rs, k, &pk)
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
	p := newPass()
	var ms []made
	var lines []int32
	var pk packer
	for line := 1; line <= 2*rowBlock+1; line++ {
		ms, lines = append(ms, p.put(line, []score.Row{{PromptTokens: line}}, nil, &pk)), append(lines, int32(line))
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

// TestPackedKeepsEveryField: a row with every field of score.Row set
// (found by reflection, so a field added to Row and not to packed fails
// here) comes out of a pass as it went in, beside rows that differ from
// it in one text each and rows with nothing set.
func TestPackedKeepsEveryField(t *testing.T) {
	var full score.Row
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			n++
			switch f.Kind() {
			case reflect.Struct:
				fill(f)
			case reflect.String:
				f.SetString(fmt.Sprintf("%s-%d", v.Type().Field(i).Name, n))
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Int, reflect.Int32, reflect.Int64:
				f.SetInt(int64(n) + 1<<(8*f.Type().Size()-4)) // high bits: a narrower field fails
			case reflect.Uint8, reflect.Uint64:
				f.SetUint(uint64(n) | 1<<(8*f.Type().Size()-1))
			case reflect.Float64:
				f.SetFloat(float64(n) + 0.25)
			case reflect.Pointer:
				f.Set(reflect.ValueOf(&score.Detail{ChoiceLogprobs: []float64{-1.5}, Chosen: 2, JudgeScores: map[string]float64{"x": 1}}))
			default:
				t.Fatalf("field %s of kind %s: teach this test to set it", v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	fill(reflect.ValueOf(&full).Elem())
	other := full
	other.Prediction, other.Key.Item, other.Detail = "another", "", nil
	cases := []struct {
		name string
		rows []score.Row
	}{
		{"every field", []score.Row{full}},
		{"beside others", []score.Row{{}, full, other, full, {}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPass()
			var pk packer
			var ms []made
			var lines []int32
			for i, r := range c.rows {
				ms, lines = append(ms, p.put(i+1, []score.Row{r}, nil, &pk)), append(lines, int32(i+1))
			}
			rows, _ := p.ordered(ms, lines, 1)
			if !reflect.DeepEqual(rows, c.rows) {
				t.Errorf("got  %+v\nwant %+v", rows, c.rows)
			}
		})
	}
}

// BenchmarkPass sets a streamed pass's rows, packed in blocks (put, then
// ordered), beside the plain alternative: each record's rows cloned and
// the clones concatenated in order. Both run from GOMAXPROCS goroutines
// over 2^17 records of one row each, texts repeating as a run's do (a
// few models, languages and strategies; an item and prediction per
// record); the heap still held after the rows are put (MB-held) is what
// the pass holds across the reading of a run's records.
func BenchmarkPass(b *testing.B) {
	const n = 1 << 17
	rowOf := func(i int) score.Row {
		return score.Row{Key: engine.Key{Experiment: "e", Model: []string{"m1", "m2", "m3"}[i%3], Item: fmt.Sprint(i / 3),
			Language: []string{"hin", "ben", "tam", "tel"}[i%4], Form: "native", Strategy: []string{"baseline", "tint-en"}[i%2]},
			Gold: "gold", Prediction: fmt.Sprint("answer ", i%1000), Method: "text", LatencyMS: float64(i), Correct: i%2 == 0}
	}
	rows := make([]score.Row, n)
	for i := range rows {
		rows[i] = rowOf(i)
	}
	held := func(b *testing.B, keep func()) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		keep()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-held")
	}
	workers := runtime.GOMAXPROCS(0)
	b.Run("packed", func(b *testing.B) {
		for b.Loop() {
			p := newPass()
			ms, lines := make([]made, n), make([]int32, n)
			var wg sync.WaitGroup
			held(b, func() {
				for w := range workers {
					wg.Go(func() {
						var pk packer
						for i := w; i < n; i += workers {
							ms[i], lines[i] = p.put(i+1, rows[i:i+1], nil, &pk), int32(i+1)
						}
					})
				}
				wg.Wait()
			})
			if out, _ := p.ordered(ms, lines, 0); len(out) != n {
				b.Fatalf("%d rows", len(out))
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			ms := make([][]score.Row, n)
			var wg sync.WaitGroup
			held(b, func() {
				for w := range workers {
					wg.Go(func() {
						for i := w; i < n; i += workers {
							ms[i] = slices.Clone(rows[i : i+1])
						}
					})
				}
				wg.Wait()
			})
			out := make([]score.Row, 0, n)
			for _, m := range ms {
				out = append(out, m...)
			}
			if len(out) != n {
				b.Fatalf("%d rows", len(out))
			}
		}
	})
}
