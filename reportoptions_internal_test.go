package bhasha

import "context"

// testOption sets one field of a report's configuration, for tests that
// combine ReportOptions with a ReleaseRows threshold of their own.
type testOption func(*reportConfig)

func withSheetRows(n int) testOption { return func(c *reportConfig) { c.sheetRows = n } }

// withRelease is ReportOptions.ReleaseRows.
func withRelease() testOption {
	return func(c *reportConfig) { c.release, c.keepUpTo = true, configOf(ReportOptions{}).keepUpTo }
}

// releaseAbove is ReportOptions.ReleaseRows for a run of more than n
// scored answers (0: any run).
func releaseAbove(n int) testOption { return func(c *reportConfig) { c.release, c.keepUpTo = true, n } }

func withProgress(fn func(ReportStep)) testOption {
	return func(c *reportConfig) { c.progress = configOf(ReportOptions{Progress: fn}).progress }
}

func withTables(fn func([]*Table)) testOption { return func(c *reportConfig) { c.tables = fn } }

// writeReportWith is WriteReport with opts.
func (r *Results) writeReportWith(ctx context.Context, html, xlsx string, opts ...testOption) error {
	var c reportConfig
	for _, o := range opts {
		o(&c)
	}
	return r.writeReport(ctx, html, xlsx, c)
}
