package reportfiles

import (

	"github.com/bhashalab/bhasha/analysis/tables"
)

// The report's unexported steps, for the tests of package reportfiles_test.

func (r *Report) ExplorerPicks(limit int) ([]int, string) { return r.explorerPicks(limit) }

func (r *Report) RowKeys(sel []int) []string { return r.rowKeys(sel) }

func (r *Report) ExplorerTable(answers *tables.Table, rowAt func(int, []any) []any, n int, picks []int, keys []string, texts []SampleText, how string) (*tables.Table, int, string) {
	return r.explorerTable(answers, rowAt, n, picks, keys, texts, how)
}
