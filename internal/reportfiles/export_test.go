package reportfiles

import (
	"github.com/bhashalab/bhasha/analysis/tables"
)

// The report's unexported steps, for the tests of package reportfiles_test.

func (r *Report) ExplorerPicks(limit int) ([]int, string) { return r.explorerPicks(limit) }

func (r *Report) RowKeys(sel []int) []string { return r.rowKeys(sel) }

func (r *Report) ExplorerTable(answers *tables.Table, rowAt func(int, []any) []any, n int, picks []int, keys []string, texts []SampleText, how string) (*tables.Table, int, string) {
	t := r.samplesTable(answers, rowAt, picks, texts, keys)
	if t.Len() == n {
		return t, 0, ""
	}
	return t, n, how
}
