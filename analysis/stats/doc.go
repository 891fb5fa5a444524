// Package stats holds the statistics the analyses report: interval
// estimates, paired and unpaired tests, correlations and multiple-testing
// corrections. Every function documents its formula; the tests compare
// them with SciPy's (testdata/stats/golden.json, written by
// testdata/stats/make_golden.py) to 1e-9. There is no global state:
// resampling functions take their own random source.
//
// # Preconditions
//
// The package follows gonum's stat policy; no function returns an error.
//
//   - A programmer error panics, with a message that names the function
//     and the violated precondition ("stats.Pearson: x has 3 values, y has
//     4"): slices that must pair up but differ in length, a count that is
//     negative or a k above its n, a confidence level outside (0, 1), a
//     resample count too small, a nil random source where one is needed,
//     an unknown method. These depend only on how the function is called,
//     so a caller that checks them once never panics on data.
//   - A result that is mathematically undefined for the data is NaN: too
//     few values, a constant sample, no pairs, all-zero differences, an
//     empty sample. Where a function returns several values, only the
//     undefined ones are NaN (Cohen's κ beside a defined agreement).
//
// Each function's doc lists which of its inputs panic and which give NaN.
// A few functions keep a conventional value where the data carry no
// evidence and say so (Wilson's (0, 1) and McNemar's p = 1 with no trials).
package stats
