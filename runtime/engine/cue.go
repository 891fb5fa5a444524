package engine

import (
	"slices"
	"strings"
)

// HeaderCue carries a request's cues (Request.Cues), comma-separated, to
// the server: Bhasha's simulator reads them (vLLM ignores the header). Like
// the other X-Bhasha headers it is not part of the body, so not of the
// cache key.
const HeaderCue = "X-Bhasha-Cue"

// Cues a study's protocol puts on a request to say what the request asks
// for outside its wording, in terms no study owns: the simulator answers
// from them and never from a template's text or a strategy's name.
const (
	// CueTranslateFirst: the prompt asks the model to translate the
	// question before answering it (or to translate it only).
	CueTranslateFirst = "translate-first"
	// CueOneWordVerdict: a judge request whose verdict is one word
	// (CORRECT, WRONG, ABSTAIN), not a JSON object.
	CueOneWordVerdict = "one-word-verdict"
)

// ParseCues reads a HeaderCue value: its comma-separated cues, trimmed,
// empty ones dropped.
func ParseCues(h string) []string {
	var out []string
	for c := range strings.SplitSeq(h, ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
