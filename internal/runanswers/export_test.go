package runanswers

import "github.com/bhashalab/bhasha/analysis/scored"

// Builds is how many groups of tables have been built, for the tests of
// package runanswers_test.
func (r *Answers) Builds() int { return r.set.Builds }

// ReadKey is the key a kept table must have to be read now, for the
// tests of package runanswers_test.
func (r *Answers) ReadKey() scored.Key { return r.readKey() }
