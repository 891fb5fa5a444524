package reportfiles

import (
	"context"

	"github.com/bhashalab/bhasha/analysis/tables"
	"github.com/bhashalab/bhasha/report"
)

// The report's unexported steps, for the tests of package reportfiles_test.

type SampleText = sampleText

func (r *Report) ExplorerPicks(limit int) ([]int, string) { return r.explorerPicks(limit) }

func (r *Report) RowKeys(sel []int) []string { return r.rowKeys(sel) }

func (r *Report) ReadTexts(ctx context.Context, o report.Options, keys []string, fn func(int, SampleText) error) error {
	return r.readTexts(ctx, o, keys, fn)
}

func (r *Report) ExplorerTable(answers *tables.Table, rowAt func(int, []any) []any, n int, picks []int, keys []string, texts []SampleText, how string) (*tables.Table, int, string) {
	return r.explorerTable(answers, rowAt, n, picks, keys, texts, how)
}
