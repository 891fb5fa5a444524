package runanswers

// Builds is how many groups of tables have been built, for the tests of
// package runanswers_test.
func (r *Answers) Builds() int { return r.set.Builds }
