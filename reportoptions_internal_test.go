package bhasha

import (
	"context"

	"github.com/bhashalab/bhasha/internal/reportfiles"
)

// testOption sets one field of a report's options, for tests that
// combine ReportOptions with a ReleaseRows threshold of their own.
type testOption func(*reportfiles.Options)

func withSheetRows(n int) testOption { return func(c *reportfiles.Options) { c.SheetRows = n } }

// withRelease is ReportOptions.ReleaseRows.
func withRelease() testOption {
	return func(c *reportfiles.Options) { c.Release, c.KeepUpTo = true, reportfiles.EarlyRows }
}

// releaseAbove is ReportOptions.ReleaseRows for a run of more than n
// scored answers (0: any run).
func releaseAbove(n int) testOption {
	return func(c *reportfiles.Options) { c.Release, c.KeepUpTo = true, n }
}

func withProgress(fn func(ReportStep)) testOption {
	return func(c *reportfiles.Options) { c.Progress = reportOptions(ReportOptions{Progress: fn}).Progress }
}

func withTables(fn func([]*Table)) testOption {
	return func(c *reportfiles.Options) { c.Tables = fn }
}

// writeReportWith is WriteReport with opts.
func (r *Results) writeReportWith(ctx context.Context, html, xlsx string, opts ...testOption) error {
	var c reportfiles.Options
	for _, o := range opts {
		o(&c)
	}
	return r.rep.Write(ctx, html, xlsx, c)
}
