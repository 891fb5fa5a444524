package bhasha

import (
	"embed"
	"io/fs"
)

// The smoke experiments that `bhasha demo` runs, and the small real
// dataset samples they read (each folder's SOURCE.md gives licence and
// origin).
//
//go:embed testdata/experiments/*.yaml testdata/bmlama testdata/indicklar testdata/indicquest-v1 testdata/klar testdata/truthfulqa testdata/triviaqa
var defaults embed.FS

// DefaultInputs returns the built-in inputs, rooted so that the
// experiments are experiments/*.yaml and their datasets sit beside them
// as their relative paths expect (../triviaqa/..., ../klar, ...).
func DefaultInputs() fs.FS {
	sub, err := fs.Sub(defaults, "testdata")
	if err != nil {
		panic(err) // "testdata" is embedded above: cannot happen
	}
	return sub
}
