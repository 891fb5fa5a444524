package experiment

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Problem is one thing wrong with an experiment: its message and, when the
// experiment was read from YAML, the line it is on (0 otherwise).
type Problem struct {
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// Problems is every problem found at once; as an error it lists them, one
// per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return fmt.Sprintf("%d problem(s):\n  %s", len(ps), strings.Join(lines, "\n  "))
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// fromYAML turns yaml.v3's type errors ("line N: ...") into problems.
func fromYAML(msgs []string) Problems {
	var out Problems
	for _, m := range msgs {
		if g := yamlLine.FindStringSubmatch(m); g != nil {
			n, _ := strconv.Atoi(g[1])
			out = append(out, Problem{Line: n, Msg: g[2]})
			continue
		}
		out = append(out, Problem{Msg: m})
	}
	return out
}
