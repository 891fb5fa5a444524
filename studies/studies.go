// Package studies registers the built-in studies: indicklar
// (cross-lingual knowledge consistency), indicquest (multilingual factual
// QA with an LLM judge), mdi (prompt contamination by distractors),
// requests (a JSON Lines file of prompts) and synthetic (generated
// prompts). Each lives in its own package, which holds its options,
// request building, extraction, scoring, metrics and tables; a program
// adds its own study to a registry (Builtin().Add) without touching them.
package studies

import (
	"github.com/bhashalab/bhasha/studies/distractors"
	"github.com/bhashalab/bhasha/studies/experiment"
	"github.com/bhashalab/bhasha/studies/indicklar"
	"github.com/bhashalab/bhasha/studies/indicquest"
	"github.com/bhashalab/bhasha/studies/requests"
)

// Builtin returns a new registry of the built-in studies.
func Builtin() *experiment.Registry {
	r, err := experiment.NewRegistry(indicklar.Study{}, indicquest.Study{}, distractors.Study{}, requests.File{}, requests.Synthetic{})
	if err != nil {
		panic(err) // the built-in names are distinct: a programming error
	}
	return r
}
